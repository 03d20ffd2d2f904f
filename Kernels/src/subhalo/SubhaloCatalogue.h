// The subhalo catalogue from the subhalos found per group (each with its
// row, SubhaloProperties.h): ranks and ids, the rows in that order, the
// per-point ids and the parents.
#pragma once

#include <vector>

#include "SubhaloGroup.h"
#include "jz/HugePages.h"
#include "jz/Subhalo.h"

namespace jz
{
// No subhalo yet: SubhaloId and SubhaloRank -1 for each of numPoints, an
// empty catalogue; the backend that runs recorded in the RunInfo returned.
inline RunInfo noSubhalos(Subhalos& out, std::size_t numPoints, Backend backend)
{
  out = Subhalos();
  assignOnHugePages(out.subhaloId, numPoints, GlobalId(-1));
  assignOnHugePages(out.subhaloRank, numPoints, GlobalId(-1));
  RunInfo info;
  info.backend = resolveBackend(backend);
  return info;
}

// found[g]: the subhalos of the group groupIds[g] (member indices into
// memberInputs[g], the input index of each member). Fills out's per-point
// arrays (already sized, -1) and catalogue.
void buildSubhaloCatalogue(const std::vector<GlobalId>& groupIds,
  const std::vector<std::vector<FoundSubhalo>>& found,
  const std::vector<std::vector<Index>>& memberInputs, Subhalos& out, const RunControl& control);
} // namespace jz
