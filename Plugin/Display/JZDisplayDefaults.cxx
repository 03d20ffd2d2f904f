#include "JZDisplayDefaults.h"

#include "JZDisplayLooks.h"
#include "JZDisplayTable.h"

#include "vtkCommand.h"
#include "vtkNew.h"
#include "vtkObjectFactory.h"
#include "vtkProcessModule.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMProxyIterator.h"
#include "vtkSMProxyManager.h"
#include "vtkSMProxyProperty.h"
#include "vtkSMSession.h"
#include "vtkSMSessionProxyManager.h"
#include "vtkSMSourceProxy.h"
#include "vtkSessionIterator.h"
#include "vtkWeakPointer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

namespace
{
/// Watches sessions (to reach their proxy managers), registrations of views
/// and representations, the views' lists of representations, and
/// re-executions of the producers of the representations it configured.
class DisplayObserver : public vtkCommand
{
public:
  static DisplayObserver* New();
  vtkTypeMacro(DisplayObserver, vtkCommand);

  void Attach(vtkSession* session)
  {
    auto* smSession = vtkSMSession::SafeDownCast(session);
    vtkSMSessionProxyManager* pxm = smSession ? smSession->GetSessionProxyManager() : nullptr;
    if (!pxm || pxm->HasObserver(vtkCommand::RegisterEvent, this))
    {
      return;
    }
    pxm->AddObserver(vtkCommand::RegisterEvent, this);
    vtkNew<vtkSMProxyIterator> views;
    views->SetSessionProxyManager(pxm);
    views->SetModeToOneGroup();
    for (views->Begin("views"); !views->IsAtEnd(); views->Next())
    {
      this->Watch(views->GetProxy());
    }
  }

  void Execute(vtkObject* caller, unsigned long event, void* data) override
  {
    if (event == vtkCommand::ConnectionCreatedEvent && data)
    {
      auto* pm = vtkProcessModule::GetProcessModule();
      this->Attach(pm ? pm->GetSession(*static_cast<vtkIdType*>(data)) : nullptr);
    }
    else if (event == vtkCommand::RegisterEvent && data)
    {
      this->Registered(vtkSMSessionProxyManager::SafeDownCast(caller),
        *static_cast<vtkSMProxyManager::RegisteredProxyInformation*>(data));
    }
    else if (event == vtkCommand::ModifiedEvent)
    {
      this->Shown(vtkSMProxyProperty::SafeDownCast(caller));
    }
    else if (event == vtkCommand::UpdateDataEvent)
    {
      this->Updated(vtkSMProxy::SafeDownCast(caller));
    }
  }

private:
  /// Follows the representations added to `view`.
  void Watch(vtkSMProxy* view)
  {
    vtkSMProperty* list = view ? view->GetProperty("Representations") : nullptr;
    if (list && !list->HasObserver(vtkCommand::ModifiedEvent, this))
    {
      list->AddObserver(vtkCommand::ModifiedEvent, this);
    }
  }

  void Registered(
    vtkSMSessionProxyManager* pxm, const vtkSMProxyManager::RegisteredProxyInformation& info)
  {
    if (info.Type != vtkSMProxyManager::RegisteredProxyInformation::PROXY || !info.Proxy ||
      !info.GroupName)
    {
      return;
    }
    if (std::strcmp(info.GroupName, "views") == 0)
    {
      this->Watch(info.Proxy);
      return;
    }
    if (std::strcmp(info.GroupName, "representations") != 0 || (pxm && pxm->GetInLoadXMLState()))
    {
      return;
    }
    if (const jz_display::Entry* entry = jz_display::FindEntry(info.Proxy))
    {
      // ParaView finishes setting the representation up after registering it
      // (its colour map: vtkSMPVRepresentationProxy::SetupLookupTable) and
      // then adds it to the view; the look comes once it is in the view.
      this->Pending[info.Proxy] = !jz_display::HasSharedColorMap(*entry, info.Proxy);
    }
  }

  /// A view's list of representations changed: set up those pending in it.
  void Shown(vtkSMProxyProperty* list)
  {
    for (auto pending = this->Pending.begin(); list && pending != this->Pending.end();)
    {
      if (list->IsProxyAdded(pending->first))
      {
        vtkSMProxy* repr = pending->first;
        const bool newColorMap = pending->second;
        pending = this->Pending.erase(pending);
        this->SetUp(repr, newColorMap);
      }
      else
      {
        ++pending;
      }
    }
  }

  void SetUp(vtkSMProxy* repr, bool newColorMap)
  {
    const jz_display::Entry* entry = jz_display::FindEntry(repr);
    if (!entry || !jz_display::ApplyLook(*entry, repr, newColorMap))
    {
      return;
    }
    vtkSMProxy* producer = vtkSMPropertyHelper(repr, "Input").GetAsProxy();
    if (!producer->HasObserver(vtkCommand::UpdateDataEvent, this))
    {
      producer->AddObserver(vtkCommand::UpdateDataEvent, this);
    }
    this->Configured.emplace_back(repr);
  }

  void Updated(vtkSMProxy* producer)
  {
    auto gone = [](const vtkWeakPointer<vtkSMProxy>& repr) { return repr.GetPointer() == nullptr; };
    this->Configured.erase(std::remove_if(this->Configured.begin(), this->Configured.end(), gone),
      this->Configured.end());
    for (const auto& repr : this->Configured)
    {
      if (vtkSMPropertyHelper(repr, "Input").GetAsProxy() == producer)
      {
        if (const jz_display::Entry* entry = jz_display::FindEntry(repr))
        {
          jz_display::ExtendCategories(*entry, repr);
        }
      }
    }
  }

  // Registered, not in a view yet; the value: was its colour map new then?
  std::map<vtkWeakPointer<vtkSMProxy>, bool> Pending;
  std::vector<vtkWeakPointer<vtkSMProxy>> Configured;
};
vtkStandardNewMacro(DisplayObserver);

}

bool jz_display::Enabled()
{
  const char* setting = std::getenv("JZTREE_DISPLAY_DEFAULTS");
  return !setting || std::strcmp(setting, "0") != 0;
}

void jzInstallDisplayDefaults()
{
  static vtkNew<DisplayObserver> observer;
  static bool installed = false;
  auto* pm = vtkProcessModule::GetProcessModule();
  const auto type = vtkProcessModule::GetProcessType();
  // Only processes with proxies: the GUI, pvpython (client) and pvbatch.
  if (installed || !pm || !jz_display::Enabled() ||
    (type != vtkProcessModule::PROCESS_CLIENT && type != vtkProcessModule::PROCESS_BATCH))
  {
    return;
  }
  installed = true;
  pm->AddObserver(vtkCommand::ConnectionCreatedEvent, observer);
  vtkSessionIterator* sessions = pm->NewSessionIterator();
  for (sessions->InitTraversal(); !sessions->IsDoneWithTraversal(); sessions->GoToNextItem())
  {
    observer->Attach(sessions->GetCurrentSession());
  }
  sessions->Delete();
}
