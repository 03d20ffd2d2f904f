// The numbering order of kept friends-of-friends groups, the one rule that
// labelFofGroups, labelFofCut and the GPU's numbering (FofHalosCuda.cu)
// share: descending size, ties by the smaller label (the group's smallest
// global id), then by the smaller root (an input index; only equal ids can
// tie the labels).
#pragma once

#include "jz/Config.h"

namespace jz
{
// One kept group. 16 bytes and no padding: CUB's sorts copy it whole, so
// every byte is initialised (compute-sanitizer's initcheck).
struct FofKeptGroup
{
  GlobalId label; // the smallest global id of the group
  Index count;    // members
  Index root;     // input index of the root (labelFofGroups' groupRoot)
};
static_assert(sizeof(FofKeptGroup) == 16, "FofKeptGroup has no padding");

// Whether group a is numbered before group b.
JZ_HD bool fofGroupBefore(const FofKeptGroup& a, const FofKeptGroup& b)
{
  if (a.count != b.count)
    return a.count > b.count;
  if (a.label != b.label)
    return a.label < b.label;
  return a.root < b.root;
}
} // namespace jz
