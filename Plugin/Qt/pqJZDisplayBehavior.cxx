#include "pqJZDisplayBehavior.h"

#include "JZDisplayDefaults.h"
#include "JZDisplayTable.h"

#include "pqActiveObjects.h"
#include "pqApplicationCore.h"
#include "pqDataRepresentation.h"
#include "pqRenderView.h"
#include "pqServerManagerModel.h"
#include "pqSpreadSheetView.h"
#include "vtkSMPVRepresentationProxy.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMProxy.h"
#include "vtkSMTransferFunctionProxy.h"
#include "vtkSMViewLayoutProxy.h"
#include "vtkSMViewProxy.h"

#include <QSet>
#include <QTimer>

#include <cmath>
#include <vector>

namespace
{
// A categorical legend of more entries than this is a smear of swatches.
constexpr unsigned MaxLegendCategories = 12;
// Share of the split the render view keeps beside a new catalogue spreadsheet.
constexpr double RenderViewShare = 0.62;

/// Hides categorical legends too crowded to read, and labels logarithmic
/// legends at the powers of ten (ParaView's own labels overlap in small views).
void TidyLegend(pqDataRepresentation* repr)
{
  vtkSMProxy* proxy = repr->getProxy();
  vtkSMProxy* view = repr->getView()->getProxy();
  vtkSMProxy* lut = proxy->GetProperty("LookupTable")
    ? vtkSMPropertyHelper(proxy, "LookupTable").GetAsProxy()
    : nullptr;
  if (!lut || !vtkSMPVRepresentationProxy::IsScalarBarVisible(proxy, view))
  {
    return;
  }
  if (vtkSMPropertyHelper(lut, "IndexedLookup").GetAsInt() != 0)
  {
    if (vtkSMPropertyHelper(lut, "Annotations").GetNumberOfElements() / 2 > MaxLegendCategories)
    {
      vtkSMPVRepresentationProxy::SetScalarBarVisibility(proxy, view, false);
    }
    return;
  }
  double range[2];
  vtkSMProxy* bar = vtkSMTransferFunctionProxy::FindScalarBarRepresentation(lut, view);
  if (!bar || vtkSMPropertyHelper(lut, "UseLogScale").GetAsInt() == 0 ||
    !vtkSMTransferFunctionProxy::GetRange(lut, range) || !(range[0] > 0))
  {
    return;
  }
  std::vector<double> decades;
  for (double p = std::ceil(std::log10(range[0])); p <= std::log10(range[1]); ++p)
  {
    decades.push_back(std::pow(10.0, p));
  }
  vtkSMPropertyHelper(bar, "CustomLabels")
    .Set(decades.data(), static_cast<unsigned>(decades.size()));
  vtkSMPropertyHelper(bar, "UseCustomLabels").Set(1);
  vtkSMPropertyHelper(bar, "AddRangeLabels").Set(1);
  bar->UpdateVTKObjects();
}
}

pqJZDisplayBehavior::pqJZDisplayBehavior(QObject* parentObject)
  : Superclass(parentObject)
{
}

pqJZDisplayBehavior::~pqJZDisplayBehavior() = default;

void pqJZDisplayBehavior::startup()
{
  if (!jz_display::Enabled())
  {
    return;
  }
  QObject::connect(pqApplicationCore::instance()->getServerManagerModel(),
    &pqServerManagerModel::representationAdded, this, &pqJZDisplayBehavior::representationAdded);
}

void pqJZDisplayBehavior::representationAdded(pqRepresentation* repr)
{
  auto* dataRepr = qobject_cast<pqDataRepresentation*>(repr);
  if (!dataRepr || pqApplicationCore::instance()->isLoadingState() ||
    !jz_display::FindEntry(dataRepr->getProxy()))
  {
    return;
  }
  if (this->Added.isEmpty())
  {
    // After the whole Apply: the GUI shows legends and opens views after
    // creating the representations.
    QTimer::singleShot(0, this, &pqJZDisplayBehavior::tidy);
  }
  this->Added.push_back(dataRepr);
}

void pqJZDisplayBehavior::tidy()
{
  pqRenderView* renderView = nullptr;
  pqSpreadSheetView* sheet = nullptr;
  QSet<pqRepresentation*> added;
  for (const auto& repr : this->Added)
  {
    pqView* view = repr ? repr->getView() : nullptr;
    if (auto* rv = qobject_cast<pqRenderView*>(view))
    {
      renderView = rv;
      added.insert(repr);
      TidyLegend(repr);
    }
    else if (auto* ss = qobject_cast<pqSpreadSheetView*>(view))
    {
      sheet = ss;
    }
  }
  this->Added.clear();
  if (!renderView)
  {
    return;
  }
  if (sheet && pqActiveObjects::instance().activeView() == sheet)
  {
    // The catalogue's spreadsheet was split off the render view: give the
    // picture the larger share and keep it the active view.
    vtkSMViewLayoutProxy* layout = vtkSMViewLayoutProxy::FindLayout(sheet->getViewProxy());
    const int location = layout ? layout->GetViewLocation(sheet->getViewProxy()) : -1;
    if (location > 0 && layout->GetViewLocation(renderView->getViewProxy()) == location - 1)
    {
      layout->SetSplitFraction(vtkSMViewLayoutProxy::GetParent(location), RenderViewShare);
    }
    pqActiveObjects::instance().setActiveView(renderView);
  }
  // ParaView fits the camera to a new output only when nothing else is
  // visible before it hides the input; fit it when the new outputs are all
  // that is visible after that (and after the view changed shape).
  bool onlyNew = true;
  for (pqRepresentation* repr : renderView->getRepresentations())
  {
    if (repr->isVisible() && qobject_cast<pqDataRepresentation*>(repr) && !added.contains(repr))
    {
      onlyNew = false;
    }
  }
  if (onlyNew || sheet)
  {
    renderView->resetDisplay();
  }
  renderView->render();
}
