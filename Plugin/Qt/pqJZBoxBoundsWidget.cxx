#include "pqJZBoxBoundsWidget.h"

#include "vtkCommand.h"
#include "vtkEventQtSlotConnect.h"
#include "vtkPVDataInformation.h"
#include "vtkSMInputProperty.h"
#include "vtkSMProperty.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMProxy.h"
#include "vtkSMSourceProxy.h"
#include "vtkSMUncheckedPropertyHelper.h"

#include <QDoubleValidator>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>

#include <cmath>

pqJZBoxBoundsWidget::pqJZBoxBoundsWidget(
  vtkSMProxy* smproxy, vtkSMProperty* smproperty, QWidget* parentObject)
  : Superclass(smproxy, parentObject)
  , Connector(vtkEventQtSlotConnect::New())
{
  this->setProperty(smproperty);
  this->setShowLabel(true);
  auto* layout = new QGridLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setHorizontalSpacing(4);
  layout->setVerticalSpacing(2);
  const char* axes[3] = { "x", "y", "z" };
  for (int i = 0; i < 6; ++i)
  {
    auto* edit = new QLineEdit(this);
    edit->setObjectName(QString("BoxBounds%1").arg(i));
    edit->setValidator(new QDoubleValidator(edit));
    edit->setToolTip(
      QString("%1%2 of the periodic box").arg(i % 2 ? "max " : "min ").arg(axes[i / 2]));
    layout->addWidget(edit, i / 2, i % 2);
    QObject::connect(edit, &QLineEdit::textEdited, this, &pqJZBoxBoundsWidget::changeAvailable);
    QObject::connect(edit, &QLineEdit::editingFinished, this, &pqJZBoxBoundsWidget::changeFinished);
    this->Edits[i] = edit;
  }
  auto* button = new QPushButton("From data", this);
  button->setObjectName("BoxFromData");
  button->setToolTip("Set the periodic box to the bounds of the Input");
  layout->addWidget(button, 3, 0, 1, 2);
  QObject::connect(button, &QPushButton::clicked, this, &pqJZBoxBoundsWidget::takeBoxFromData);

  this->loadFromProperty();
  // Follow changes made elsewhere (Python shell, state files).
  this->Connector->Connect(smproperty, vtkCommand::ModifiedEvent, this, SLOT(loadFromProperty()));
  if (vtkSMProperty* periodic = smproxy->GetProperty("Periodic"))
  {
    // The Periodic check box changes the unchecked value before Apply.
    this->Connector->Connect(
      periodic, vtkCommand::UncheckedPropertyModifiedEvent, this, SLOT(periodicChanged()));
  }
}

pqJZBoxBoundsWidget::~pqJZBoxBoundsWidget()
{
  this->Connector->Delete();
}

void pqJZBoxBoundsWidget::loadFromProperty()
{
  if (this->Loading)
  {
    return;
  }
  vtkSMPropertyHelper helper(this->property());
  for (int i = 0; i < 6; ++i)
  {
    this->Edits[i]->setText(
      QString::number(helper.GetAsDouble(i), 'g', QLocale::FloatingPointShortest));
  }
}

void pqJZBoxBoundsWidget::apply()
{
  double values[6];
  for (int i = 0; i < 6; ++i)
  {
    values[i] = this->Edits[i]->text().toDouble();
  }
  this->Loading = true;
  vtkSMPropertyHelper(this->property()).Set(values, 6);
  this->Loading = false;
  this->Superclass::apply();
}

void pqJZBoxBoundsWidget::reset()
{
  this->loadFromProperty();
  this->Superclass::reset();
}

bool pqJZBoxBoundsWidget::inputBounds(
  vtkSMProxy* proxy, double bounds[6], long long* numberOfPoints)
{
  auto* input = vtkSMInputProperty::SafeDownCast(proxy->GetProperty("Input"));
  auto* source = input && input->GetNumberOfProxies() > 0
    ? vtkSMSourceProxy::SafeDownCast(input->GetProxy(0))
    : nullptr;
  if (!source)
  {
    return false;
  }
  vtkPVDataInformation* info = source->GetDataInformation(input->GetOutputPortForConnection(0));
  if (!info || info->GetNumberOfPoints() <= 0)
  {
    return false;
  }
  info->GetBounds(bounds);
  if (numberOfPoints)
  {
    *numberOfPoints = static_cast<long long>(info->GetNumberOfPoints());
  }
  return bounds[1] >= bounds[0];
}

void pqJZBoxBoundsWidget::takeBoxFromData()
{
  double bounds[6];
  if (!pqJZBoxBoundsWidget::inputBounds(this->proxy(), bounds, nullptr))
  {
    return;
  }
  for (int i = 0; i < 6; ++i)
  {
    this->Edits[i]->setText(QString::number(bounds[i], 'g', QLocale::FloatingPointShortest));
  }
  Q_EMIT this->changeAvailable();
  Q_EMIT this->changeFinished();
}

void pqJZBoxBoundsWidget::periodicChanged()
{
  vtkSMProperty* periodic = this->proxy()->GetProperty("Periodic");
  if (!periodic || vtkSMUncheckedPropertyHelper(periodic).GetAsInt() == 0)
  {
    return;
  }
  // Switched on: keep a box the data fit in, otherwise take the data's box.
  double bounds[6];
  if (!pqJZBoxBoundsWidget::inputBounds(this->proxy(), bounds, nullptr))
  {
    return;
  }
  for (int d = 0; d < 3; ++d)
  {
    const double lo = this->Edits[2 * d]->text().toDouble();
    const double hi = this->Edits[2 * d + 1]->text().toDouble();
    if (!(bounds[2 * d] >= lo && bounds[2 * d + 1] <= hi))
    {
      this->takeBoxFromData();
      return;
    }
  }
}
