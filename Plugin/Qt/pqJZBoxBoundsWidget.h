// pqJZBoxBoundsWidget: the BoxBounds property of the JZ-Tree filters
// (panel_widget="jz_box_bounds"): six numbers, a "From data" button that
// takes the box from the Input's bounds, and, when Periodic is switched on
// while the Input does not fit in the box, the box taken from the data.
#ifndef pqJZBoxBoundsWidget_h
#define pqJZBoxBoundsWidget_h

#include "pqPropertyWidget.h"

#include <array>

class QLineEdit;
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

public Q_SLOTS:
  void takeBoxFromData();

private Q_SLOTS:
  void loadFromProperty();
  void periodicChanged();

private:
  std::array<QLineEdit*, 6> Edits;
  vtkEventQtSlotConnect* Connector;
  bool Loading = false;
};

#endif
