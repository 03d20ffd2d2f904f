// pqJZLinkingLengthWidget: the LinkingLength property of FriendsOfFriends
// (panel_widget="jz_linking_length"): the value, a slider over b = l / (mean
// interparticle separation) from 0.02 to 1 on a log scale, and below them what
// the value means for the current Input (the linking length in box units and
// the mean separation) and, after Apply, the number of groups found and the
// largest group. The numbers are computed on the client from the Input's and
// the catalogue's data information.
//
// Once the filter has run, the slider applies its value on release (and at
// once for keyboard steps): only the linking length changes, so the filter
// re-cuts its cached tree instead of walking again (doc/filters/
// FriendsOfFriends.md, "Changing the linking length"), fast enough to follow the slider.
#ifndef pqJZLinkingLengthWidget_h
#define pqJZLinkingLengthWidget_h

#include "pqPropertyWidget.h"

class QLabel;
class QLineEdit;
class QSlider;
class vtkEventQtSlotConnect;

class pqJZLinkingLengthWidget : public pqPropertyWidget
{
  Q_OBJECT
  typedef pqPropertyWidget Superclass;

public:
  pqJZLinkingLengthWidget(vtkSMProxy* proxy, vtkSMProperty* property, QWidget* parent = nullptr);
  ~pqJZLinkingLengthWidget() override;

  void apply() override;
  void reset() override;

  /// The summary line shown under the value.
  QString summary() const;

private Q_SLOTS:
  void loadFromProperty();
  void updateSummary();
  void connectToSource();
  void dataUpdated();
  void sliderMoved(int position);
  void sliderReleased();

private:
  // The mean interparticle separation the slider's b is measured in (1 in
  // Relative mode); 0 when the Input's size is not known yet.
  double sliderUnit() const;
  void placeSlider();
  void applyNow();

  QLineEdit* Edit;
  QSlider* Slider;
  QLabel* Info;
  vtkEventQtSlotConnect* Connector;
  bool Loading = false;
  bool SourceConnected = false;
  bool HaveResult = false;
};

#endif
