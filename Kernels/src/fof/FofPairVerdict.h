// The walk's verdict on a node pair from FoF's classification, for the CPU
// node policy and the CUDA node walk alike.
#pragma once

#include "jz/FofLinking.h"
#include "walk/WalkPolicy.h"

namespace jz
{
JZ_HD PairVerdict fofPairVerdict(FofPairAction action)
{
  switch (action)
  {
    case FofPairAction::Discard:
      return PairVerdict::Prune;
    case FofPairAction::Link:
      return PairVerdict::Accept;
    default:
      return PairVerdict::Keep;
  }
}
} // namespace jz
