#include "pqJZDisplayBehavior.h"

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
#include "vtkSMViewLayoutProxy.h"
#include "vtkSMViewProxy.h"

#include <QTimer>

namespace
{
// A categorical legend of more entries than this is a smear of swatches.
constexpr unsigned MaxLegendCategories = 12;
// Share of the split the render view keeps beside a new catalogue spreadsheet.
constexpr double RenderViewShare = 0.62;

void HideCrowdedLegend(pqDataRepresentation* repr)
{
  vtkSMProxy* proxy = repr->getProxy();
  vtkSMProxy* lut = proxy->GetProperty("LookupTable")
    ? vtkSMPropertyHelper(proxy, "LookupTable").GetAsProxy()
    : nullptr;
  if (lut && vtkSMPropertyHelper(lut, "IndexedLookup").GetAsInt() != 0 &&
    vtkSMPropertyHelper(lut, "Annotations").GetNumberOfElements() / 2 > MaxLegendCategories)
  {
    vtkSMPVRepresentationProxy::SetScalarBarVisibility(proxy, repr->getView()->getProxy(), false);
  }
}
}

pqJZDisplayBehavior::pqJZDisplayBehavior(QObject* parentObject)
  : Superclass(parentObject)
{
}

pqJZDisplayBehavior::~pqJZDisplayBehavior() = default;

void pqJZDisplayBehavior::startup()
{
  QObject::connect(pqApplicationCore::instance()->getServerManagerModel(),
    &pqServerManagerModel::representationAdded, this, &pqJZDisplayBehavior::representationAdded);
}

void pqJZDisplayBehavior::representationAdded(pqRepresentation* repr)
{
  auto* dataRepr = qobject_cast<pqDataRepresentation*>(repr);
    dataRepr ? (jz_display::FindEntry(dataRepr->getProxy()) != nullptr) : -1);
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
  for (const auto& repr : this->Added)
  {
    pqView* view = repr ? repr->getView() : nullptr;
    if (auto* rv = qobject_cast<pqRenderView*>(view))
    {
      renderView = rv;
      HideCrowdedLegend(repr);
    }
    else if (auto* ss = qobject_cast<pqSpreadSheetView*>(view))
    {
      sheet = ss;
    }
  }
  this->Added.clear();
  if (!renderView || !sheet || pqActiveObjects::instance().activeView() != sheet)
  {
    if (renderView)
    {
      renderView->render();
    }
    return;
  }
  // The catalogue's spreadsheet was split off the render view: give the
  // picture the larger share, keep it the active view and fit it again.
  vtkSMViewLayoutProxy* layout = vtkSMViewLayoutProxy::FindLayout(sheet->getViewProxy());
  const int location = layout ? layout->GetViewLocation(sheet->getViewProxy()) : -1;
  if (location > 0 && layout->GetViewLocation(renderView->getViewProxy()) == location - 1)
  {
    layout->SetSplitFraction(vtkSMViewLayoutProxy::GetParent(location), RenderViewShare);
  }
  pqActiveObjects::instance().setActiveView(renderView);
  renderView->resetDisplay();
  renderView->render();
}
