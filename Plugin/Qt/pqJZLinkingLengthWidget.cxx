#include "pqJZLinkingLengthWidget.h"
#include "pqJZBoxBoundsWidget.h"

#include "pqApplicationCore.h"
#include "pqOutputPort.h"
#include "pqPipelineSource.h"
#include "pqServerManagerModel.h"
#include "vtkCommand.h"
#include "vtkEventQtSlotConnect.h"
#include "vtkPVArrayInformation.h"
#include "vtkPVDataInformation.h"
#include "vtkPVDataSetAttributesInformation.h"
#include "vtkSMProperty.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMProxy.h"
#include "vtkSMUncheckedPropertyHelper.h"

#include "jz/LinkingLength.h"

#include <QDoubleValidator>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSignalBlocker>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace
{
// The slider's range in b = l / (mean separation), log-spaced: FoF halos are
// found at b = 0.2; 0.02 links almost nothing, 1 percolates.
constexpr double kSliderLowB = 0.02;
constexpr double kSliderHighB = 1.0;
constexpr int kSliderSteps = 200;

double sliderToB(int position)
{
  return kSliderLowB * std::pow(kSliderHighB / kSliderLowB, double(position) / kSliderSteps);
}

int bToSlider(double b)
{
  const double t = std::log(b / kSliderLowB) / std::log(kSliderHighB / kSliderLowB);
  return static_cast<int>(std::lround(std::clamp(t, 0.0, 1.0) * kSliderSteps));
}

// Three significant digits: the value the slider writes is the one shown.
double roundForDisplay(double x)
{
  return QString::number(x, 'g', 3).toDouble();
}
}

pqJZLinkingLengthWidget::pqJZLinkingLengthWidget(
  vtkSMProxy* smproxy, vtkSMProperty* smproperty, QWidget* parentObject)
  : Superclass(smproxy, parentObject)
  , Connector(vtkEventQtSlotConnect::New())
{
  this->setProperty(smproperty);
  this->setShowLabel(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  this->Edit = new QLineEdit(this);
  this->Edit->setObjectName("LinkingLength");
  auto* validator = new QDoubleValidator(this->Edit);
  validator->setBottom(0);
  this->Edit->setValidator(validator);
  layout->addWidget(this->Edit);
  this->Slider = new QSlider(Qt::Horizontal, this);
  this->Slider->setObjectName("LinkingLengthSlider");
  this->Slider->setRange(0, kSliderSteps);
  this->Slider->setPageStep(kSliderSteps / 10);
  this->Slider->setToolTip(QString("b from %1 to %2 times the mean interparticle separation, "
                                   "log scale; applies on release once the filter has run")
                             .arg(kSliderLowB)
                             .arg(kSliderHighB));
  layout->addWidget(this->Slider);
  this->Info = new QLabel(this);
  this->Info->setObjectName("LinkingLengthInfo");
  this->Info->setWordWrap(true);
  this->Info->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(this->Info);

  QObject::connect(
    this->Edit, &QLineEdit::textEdited, this, &pqJZLinkingLengthWidget::changeAvailable);
  QObject::connect(
    this->Edit, &QLineEdit::textEdited, this, &pqJZLinkingLengthWidget::updateSummary);
  QObject::connect(
    this->Edit, &QLineEdit::editingFinished, this, &pqJZLinkingLengthWidget::changeFinished);
  QObject::connect(
    this->Slider, &QSlider::valueChanged, this, &pqJZLinkingLengthWidget::sliderMoved);
  QObject::connect(
    this->Slider, &QSlider::sliderReleased, this, &pqJZLinkingLengthWidget::sliderReleased);

  this->loadFromProperty();
  this->Connector->Connect(smproperty, vtkCommand::ModifiedEvent, this, SLOT(loadFromProperty()));
  for (const char* name : { "LinkingLengthMode", "Periodic", "BoxBounds", "BoxFromData", "Input" })
  {
    if (vtkSMProperty* p = smproxy->GetProperty(name))
    {
      this->Connector->Connect(
        p, vtkCommand::UncheckedPropertyModifiedEvent, this, SLOT(updateSummary()));
      this->Connector->Connect(p, vtkCommand::ModifiedEvent, this, SLOT(updateSummary()));
    }
  }
  // The pqPipelineSource of a new filter is registered after its panel
  // widgets are made: connect to its dataUpdated signal once the event loop runs.
  QTimer::singleShot(0, this, &pqJZLinkingLengthWidget::connectToSource);
  this->updateSummary();
}

pqJZLinkingLengthWidget::~pqJZLinkingLengthWidget()
{
  this->Connector->Delete();
}

void pqJZLinkingLengthWidget::connectToSource()
{
  if (this->SourceConnected)
  {
    return;
  }
  auto* model = pqApplicationCore::instance()->getServerManagerModel();
  if (auto* source = model->findItem<pqPipelineSource*>(this->proxy()))
  {
    // Deferred: the data information is complete once the update has returned.
    QObject::connect(source, SIGNAL(dataUpdated(pqPipelineSource*)), this, SLOT(dataUpdated()));
    this->SourceConnected = true;
    this->updateSummary();
  }
}

void pqJZLinkingLengthWidget::dataUpdated()
{
  this->HaveResult = true;
  QTimer::singleShot(0, this, &pqJZLinkingLengthWidget::updateSummary);
}

void pqJZLinkingLengthWidget::loadFromProperty()
{
  if (!this->Loading)
  {
    this->Edit->setText(QString::number(
      vtkSMPropertyHelper(this->property()).GetAsDouble(), 'g', QLocale::FloatingPointShortest));
    this->updateSummary();
  }
}

double pqJZLinkingLengthWidget::sliderUnit() const
{
  vtkSMProxy* proxy = this->proxy();
  if (vtkSMUncheckedPropertyHelper(proxy, "LinkingLengthMode").GetAsInt() == 0)
  {
    return 1.0;
  }
  double box[6];
  long long n = 0;
  if (!pqJZBoxBoundsWidget::inputBounds(proxy, box, &n) || n <= 0)
  {
    return 0.0;
  }
  if (vtkSMUncheckedPropertyHelper(proxy, "Periodic").GetAsInt() != 0)
  {
    for (int i = 0; i < 6; ++i)
    {
      box[i] = vtkSMUncheckedPropertyHelper(proxy, "BoxBounds").GetAsDouble(i);
    }
    pqJZBoxBoundsWidget::boxFromData(proxy, box);
  }
  const double volume = (box[1] - box[0]) * (box[3] - box[2]) * (box[5] - box[4]);
  return jz::relativeLinkingLength(1.0, volume, static_cast<std::size_t>(n));
}

// The slider follows the value (typed, loaded or reset) without applying it.
void pqJZLinkingLengthWidget::placeSlider()
{
  if (this->Slider->isSliderDown())
  {
    return;
  }
  const double unit = this->sliderUnit();
  this->Slider->setEnabled(unit > 0);
  if (unit > 0)
  {
    const QSignalBlocker quiet(this->Slider);
    this->Slider->setValue(bToSlider(this->Edit->text().toDouble() / unit));
  }
}

void pqJZLinkingLengthWidget::sliderMoved(int position)
{
  const double unit = this->sliderUnit();
  if (!(unit > 0))
  {
    return;
  }
  this->Edit->setText(QString::number(roundForDisplay(sliderToB(position) * unit), 'g', 3));
  this->updateSummary();
  if (!this->Slider->isSliderDown()) // keyboard, wheel or a test: apply at once
  {
    this->sliderReleased();
  }
}

void pqJZLinkingLengthWidget::sliderReleased()
{
  if (this->HaveResult)
  {
    this->applyNow();
  }
  else // not run yet: the value waits for Apply like a typed one
  {
    Q_EMIT this->changeAvailable();
    Q_EMIT this->changeFinished();
  }
}

// Pushes this property alone and updates the pipeline: the other properties
// keep whatever the panel holds for them until the next Apply.
void pqJZLinkingLengthWidget::applyNow()
{
  this->apply();
  this->proxy()->UpdateVTKObjects();
  auto* model = pqApplicationCore::instance()->getServerManagerModel();
  if (auto* source = model->findItem<pqPipelineSource*>(this->proxy()))
  {
    source->updatePipeline();
    source->renderAllViews();
  }
}

void pqJZLinkingLengthWidget::apply()
{
  this->Loading = true;
  vtkSMPropertyHelper(this->property()).Set(this->Edit->text().toDouble());
  this->Loading = false;
  this->Superclass::apply();
}

void pqJZLinkingLengthWidget::reset()
{
  this->loadFromProperty();
  this->Superclass::reset();
}

QString pqJZLinkingLengthWidget::summary() const
{
  return this->Info->text();
}

void pqJZLinkingLengthWidget::updateSummary()
{
  vtkSMProxy* proxy = this->proxy();
  QStringList lines;
  double bounds[6];
  long long n = 0;
  const double b = this->Edit->text().toDouble();
  if (pqJZBoxBoundsWidget::inputBounds(proxy, bounds, &n))
  {
    const bool periodic = proxy->GetProperty("Periodic") &&
      vtkSMUncheckedPropertyHelper(proxy, "Periodic").GetAsInt() != 0;
    double box[6];
    for (int i = 0; i < 6; ++i)
    {
      box[i] =
        periodic ? vtkSMUncheckedPropertyHelper(proxy, "BoxBounds").GetAsDouble(i) : bounds[i];
    }
    if (periodic) // the Input's BoxSize instead, when BoxFromData takes it
    {
      pqJZBoxBoundsWidget::boxFromData(proxy, box);
    }
    const double extent[3] = { box[1] - box[0], box[3] - box[2], box[5] - box[4] };
    const double volume = extent[0] * extent[1] * extent[2];
    const bool relative = vtkSMUncheckedPropertyHelper(proxy, "LinkingLengthMode").GetAsInt() == 0;
    // The filter's own definition (jz/LinkingLength.h), so the panel shows
    // exactly the length the filter will use.
    const std::size_t count = static_cast<std::size_t>(std::max(n, 0LL));
    const double separation = jz::relativeLinkingLength(1.0, volume, count);
    const double l = relative ? jz::relativeLinkingLength(b, volume, count) : b;
    const double side = std::max(extent[0], std::max(extent[1], extent[2]));
    if (relative && !(separation > 0))
    {
      lines << "Linking length undefined: the box has no volume (use Absolute).";
    }
    else
    {
      lines << QString(
        "Linking length %1 = %2 of the %3 box side (mean separation %4, %5 particles)")
                 .arg(l, 0, 'g', 4)
                 .arg(side > 0 ? l / side : 0.0, 0, 'g', 4)
                 .arg(periodic ? "periodic" : "bounding")
                 .arg(separation, 0, 'g', 4)
                 .arg(n);
    }
  }
  auto* model = pqApplicationCore::instance()->getServerManagerModel();
  auto* source = model ? model->findItem<pqPipelineSource*>(proxy) : nullptr;
  if (this->HaveResult && source && source->getNumberOfOutputPorts() > 1)
  {
    vtkPVDataInformation* info = source->getOutputPort(1)->getDataInformation();
    if (info && info->GetNumberOfDataSets() > 0)
    {
      long long largest = 0;
      if (auto* count = info->GetPointDataInformation()->GetArrayInformation("Count"))
      {
        largest = static_cast<long long>(count->GetComponentRange(0)[1]);
      }
      lines << QString("Groups found: %1 (largest %2 particles)%3")
                 .arg(static_cast<long long>(info->GetNumberOfPoints()))
                 .arg(info->GetNumberOfPoints() > 0 ? largest : 0)
                 .arg(source->modifiedState() == pqProxy::MODIFIED ? " at the last Apply" : "");
    }
  }
  this->placeSlider();
  const QString text = lines.join("\n");
  if (text != this->Info->text())
  {
    this->Info->setText(text);
    // Lets the GUI test see what the panel shows.
    if (std::getenv("JZTREE_WIDGET_LOG"))
    {
      std::fprintf(
        stderr, "JZTree panel: %s\n", text.toLocal8Bit().replace('\n', " | ").constData());
      std::fflush(stderr);
    }
  }
}
