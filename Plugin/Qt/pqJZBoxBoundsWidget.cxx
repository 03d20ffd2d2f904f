#include "pqJZBoxBoundsWidget.h"

#include "vtkCommand.h"
#include "vtkEventQtSlotConnect.h"
#include "vtkJZPeriodicBox.h"
#include "vtkPVArrayInformation.h"
#include "vtkPVDataInformation.h"
#include "vtkPVDataSetAttributesInformation.h"
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

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

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
  this->FromDataButton = button;
  this->DataBoxNote = new QLabel(this);
  this->DataBoxNote->setObjectName("DataBoxNote");
  this->DataBoxNote->setWordWrap(true);
  this->DataBoxNote->hide();
  layout->addWidget(this->DataBoxNote, 4, 0, 1, 2);

  this->loadFromProperty();
  // Follow changes made elsewhere (Python shell, state files).
  this->Connector->Connect(smproperty, vtkCommand::ModifiedEvent, this, SLOT(loadFromProperty()));
  if (vtkSMProperty* periodic = smproxy->GetProperty("Periodic"))
  {
    // The Periodic check box changes the unchecked value before Apply.
    this->Connector->Connect(
      periodic, vtkCommand::UncheckedPropertyModifiedEvent, this, SLOT(periodicChanged()));
  }
  if (vtkSMProperty* fromData = smproxy->GetProperty("BoxFromData"))
  {
    this->Connector->Connect(
      fromData, vtkCommand::UncheckedPropertyModifiedEvent, this, SLOT(showBoxInUse()));
  }
  // The Input's BoxSize is known once the Input has run.
  auto* input = vtkSMInputProperty::SafeDownCast(smproxy->GetProperty("Input"));
  if (input && input->GetNumberOfProxies() > 0)
  {
    this->Connector->Connect(
      input->GetProxy(0), vtkCommand::UpdateDataEvent, this, SLOT(showBoxInUse()));
  }
  this->showBoxInUse();
}

pqJZBoxBoundsWidget::~pqJZBoxBoundsWidget()
{
  this->Connector->Delete();
}

void pqJZBoxBoundsWidget::loadFromProperty()
{
  if (this->Loading || this->ShowingDataBox)
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
  if (this->ShowingDataBox) // the edits show BoxSize, not BoxBounds
  {
    this->Superclass::apply();
    return;
  }
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

bool pqJZBoxBoundsWidget::boxFromData(vtkSMProxy* proxy, double box[6])
{
  vtkSMProperty* fromData = proxy->GetProperty("BoxFromData");
  auto* input = vtkSMInputProperty::SafeDownCast(proxy->GetProperty("Input"));
  auto* source = input && input->GetNumberOfProxies() > 0
    ? vtkSMSourceProxy::SafeDownCast(input->GetProxy(0))
    : nullptr;
  if (!fromData || vtkSMUncheckedPropertyHelper(fromData).GetAsInt() == 0 || !source)
  {
    return false;
  }
  vtkPVDataInformation* info = source->GetDataInformation(input->GetOutputPortForConnection(0));
  vtkPVArrayInformation* boxSize =
    info ? info->GetFieldDataInformation()->GetArrayInformation("BoxSize") : nullptr;
  if (!boxSize || boxSize->GetNumberOfTuples() != 1)
  {
    return false;
  }
  // One tuple: each component's range is its value.
  double values[3];
  const int count = std::min(boxSize->GetNumberOfComponents(), 3);
  for (int c = 0; c < count; ++c)
  {
    values[c] = boxSize->GetComponentRange(c)[0];
  }
  return boxSize->GetNumberOfComponents() <= 3 && vtkJZPeriodicBox::BoxFromSize(values, count, box);
}

void pqJZBoxBoundsWidget::showBoxInUse()
{
  double box[6];
  const bool fromData = pqJZBoxBoundsWidget::boxFromData(this->proxy(), box);
  if (!fromData && !this->ShowingDataBox)
  {
    return;
  }
  this->ShowingDataBox = fromData;
  for (QLineEdit* edit : this->Edits)
  {
    edit->setReadOnly(fromData);
    edit->setEnabled(!fromData);
  }
  this->FromDataButton->setEnabled(!fromData);
  this->DataBoxNote->setVisible(fromData);
  if (!fromData)
  {
    this->loadFromProperty(); // back to BoxBounds
    return;
  }
  for (int i = 0; i < 6; ++i)
  {
    this->Edits[i]->setText(QString::number(box[i], 'g', QLocale::FloatingPointShortest));
  }
  const QString text = QString("Box from the Input's BoxSize: [0, %1] x [0, %2] x [0, %3] "
                               "(BoxFromData; BoxBounds is not used)")
                         .arg(box[1])
                         .arg(box[3])
                         .arg(box[5]);
  this->DataBoxNote->setText(text);
  // Lets the GUI test see what the panel shows.
  if (std::getenv("JZTREE_WIDGET_LOG"))
  {
    std::fprintf(stderr, "JZTree panel: %s\n", text.toLocal8Bit().constData());
    std::fflush(stderr);
  }
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
  if (!periodic || vtkSMUncheckedPropertyHelper(periodic).GetAsInt() == 0 || this->ShowingDataBox)
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
