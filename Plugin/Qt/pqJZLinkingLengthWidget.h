// pqJZLinkingLengthWidget: the LinkingLength property of FriendsOfFriends
// (panel_widget="jz_linking_length"): the value, and below it what it means
// for the current Input (the linking length in box units and the mean
// interparticle separation in Relative mode) and, after Apply, the number of
// groups found and the largest group. The numbers are computed on the client
// from the Input's and the catalogue's data information.
#ifndef pqJZLinkingLengthWidget_h
#define pqJZLinkingLengthWidget_h

#include "pqPropertyWidget.h"

class QLabel;
class QLineEdit;
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

private:
  QLineEdit* Edit;
  QLabel* Info;
  vtkEventQtSlotConnect* Connector;
  bool Loading = false;
  bool SourceConnected = false;
  bool HaveResult = false;
};

#endif
