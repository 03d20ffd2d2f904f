// pqJZBoxBoundsWidget: the BoxBounds property of the JZ-Tree filters
// (panel_widget="jz_box_bounds"): six numbers, a "From data" button that
// takes the box from the Input's bounds, and, when Periodic is switched on
// while the Input does not fit in the box, the box taken from the data.
// With BoxFromData on and a BoxSize in the Input's field data, it shows the
// box the filter will use, [0, L] (read-only; BoxBounds keeps its value).
#ifndef pqJZBoxBoundsWidget_h
#define pqJZBoxBoundsWidget_h

#include "pqPropertyWidget.h"

#include <array>

class QLabel;
class QLineEdit;
class QPushButton;
class vtkEventQtSlotConnect;

class pqJZBoxBoundsWidget : public pqPropertyWidget
{
  Q_OBJECT
  typedef pqPropertyWidget Superclass;

public:
  pqJZBoxBoundsWidget(vtkSMProxy* proxy, vtkSMProperty* property, QWidget* parent = nullptr);
  ~pqJZBoxBoundsWidget() override;

  void apply() override;
  void reset() override;

  /// The bounds of the filter's Input (xmin xmax ...), false when unknown.
  static bool inputBounds(vtkSMProxy* proxy, double bounds[6], long long* numberOfPoints);

  /// The box [0, L] from the Input's field-data BoxSize when BoxFromData is
  /// on (its unchecked value), i.e. the box the filter will use; false when
  /// BoxBounds is the box.
  static bool boxFromData(vtkSMProxy* proxy, double box[6]);

public Q_SLOTS:
  void takeBoxFromData();

private Q_SLOTS:
  void loadFromProperty();
  void periodicChanged();
  void showBoxInUse();

private:
  std::array<QLineEdit*, 6> Edits;
  QLabel* DataBoxNote;
  QPushButton* FromDataButton;
  bool ShowingDataBox = false;
  vtkEventQtSlotConnect* Connector;
  bool Loading = false;
};

#endif
