/**
 * @file   vtkJZFofTreeCache.h
 * @brief  FriendsOfFriends' cached minimum spanning tree: groups at a new
 * LinkingLength are a cut of the tree (jz/FofFromTree.h) instead of a new
 * walk, while the input, Periodic, the box, Device and the precision are
 * unchanged. The first execution walks as always and keeps the walk's
 * groups, so that a change of MinimumGroupSize alone only numbers them
 * again; the first re-execution with a new linking length builds the
 * tree's edges up to TreeReach times the longer of the first and the new
 * linking length (once; the walk's groups are then dropped); later ones
 * only cut them, unless the linking length goes beyond them (then they are
 * rebuilt).
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZFofTreeCache_h
#define vtkJZFofTreeCache_h

#include "vtkType.h"

#include "jz/Emst.h"
#include "jz/Fof.h"
#include "jz/FofFromTree.h"

#include <cstddef>
#include <vector>

class vtkDataSet;

class vtkJZFofTreeCache
{
public:
  /// Everything the groups depend on besides the linking length.
  struct Key
  {
    /// Per piece: the coordinate array and its MTime, the GlobalIds array
    /// and its MTime (the input data object itself may be a new shallow
    /// copy at every execution; its arrays are not).
    std::vector<unsigned long long> inputStamp;
    bool periodic = false;
    double box[6] = { 0, 0, 0, 0, 0, 0 };
    int device = 0;
    bool useFloat = false;
    std::size_t numPoints = 0;
    bool operator==(const Key& o) const;
  };

  /// The input stamp of the pieces.
  static std::vector<unsigned long long> Stamp(const std::vector<vtkDataSet*>& pieces);

  /// The groups of `problem` (one process): by walk (WalkedGroups()), the
  /// last walk's again, or by cut (LastWasCut()).
  template <class T>
  jz::RunInfo Groups(const jz::FofProblem<T>& problem, const Key& key, jz::Backend backend,
    const jz::RunControl& control);

  /// Whether the last Groups() call cut the cached tree (then LabelCut
  /// numbers the cut straight from the tree's order).
  bool LastWasCut() const { return this->LastCut; }

  /// Else: the groups of the last walk (for jz::labelFofGroups).
  const jz::FofGroups& WalkedGroups() const { return this->Walked; }

  /// After a cut: jz::labelFofCut of the cached tree at the last linking length.
  std::size_t LabelCut(jz::GlobalId minimumGroupSize, jz::GlobalId* groupId,
    jz::GlobalId* groupSize, std::vector<jz::Index>* reference, const jz::RunControl& control)
  {
    return jz::labelFofCut(
      this->Tree, this->CutLength, minimumGroupSize, groupId, groupSize, reference, control);
  }

  /// The cached edges reach this many times the longest linking length
  /// seen when they are built (Relative b = 0.2 -> 1, the slider's end).
  static constexpr double TreeReach = 5.0;

private:
  Key Current;
  int Runs = 0; // executions with the Current key
  bool HaveTree = false;
  bool LastCut = false;
  double FirstLength = 0; // the linking length of the first (walking) run
  double CutLength = 0;   // the linking length of the last cut
  jz::FofGroups Walked;   // the groups of the first run (until the tree is built)
  jz::FofTreeOrder Tree;  // the tree's edges up to TreeMaxLength, in single-linkage order
  double TreeMaxLength = 0;
};

#endif
// VTK-HeaderTest-Exclude: vtkJZFofTreeCache.h
