#include "vtkJZFofTreeCache.h"

#include "jz/StageTimer.h" // the one scoped clock of the kernels
#include "jz/FofFromTree.h"

#include "vtkDataArray.h"
#include "vtkDataSet.h"
#include "vtkPointData.h"
#include "vtkPointSet.h"
#include "vtkPoints.h"

#include <algorithm>
#include <cstdint>
#include <utility>

bool vtkJZFofTreeCache::Key::operator==(const Key& o) const
{
  return inputStamp == o.inputStamp && periodic == o.periodic && std::equal(box, box + 6, o.box) &&
    device == o.device && useFloat == o.useFloat && numPoints == o.numPoints;
}

std::vector<unsigned long long> vtkJZFofTreeCache::Stamp(const std::vector<vtkDataSet*>& pieces)
{
  std::vector<unsigned long long> stamp;
  auto add = [&stamp](vtkObject* o)
  {
    stamp.push_back(reinterpret_cast<std::uintptr_t>(o));
    stamp.push_back(o ? o->GetMTime() : 0);
  };
  for (vtkDataSet* piece : pieces)
  {
    auto* ps = vtkPointSet::SafeDownCast(piece);
    add(ps && ps->GetPoints() ? ps->GetPoints()->GetData() : nullptr);
    add(piece->GetPointData()->GetGlobalIds());
    add(piece->GetPointData()->GetArray("GlobalIds"));
  }
  return stamp;
}

template <class T>
jz::RunInfo vtkJZFofTreeCache::Groups(const jz::FofProblem<T>& problem, const Key& key,
  jz::Backend backend, const jz::RunControl& control)
{
  if (!(key == this->Current))
  {
    this->Current = key;
    this->Runs = 0;
    this->HaveTree = false;
    this->Tree = jz::FofTreeOrder{};
    this->Walked = jz::FofGroups{};
  }
  ++this->Runs;
  this->LastCut = false;
  // The tree is CPU-only: an explicit CUDA run always walks.
  if (this->Runs == 1 || backend == jz::Backend::CUDA)
  {
    this->FirstLength = problem.linkingLength;
    this->Walked = jz::FofGroups{};
    try
    {
      return jz::computeFofGroups<T>(problem, this->Walked, backend, control);
    }
    catch (...)
    {
      this->Runs = 0; // nothing of this run is kept
      this->Walked = jz::FofGroups{};
      throw;
    }
  }
  jz::RunInfo info;
  if (!this->HaveTree && problem.linkingLength == this->FirstLength &&
    this->Walked.groupRoot.size() == problem.numPoints)
  {
    // Only MinimumGroupSize changed: the walk's groups are numbered again.
    info.backend = jz::Backend::CPU;
    return info;
  }
  if (!this->HaveTree || problem.linkingLength > this->TreeMaxLength)
  {
    // The linking length changed on the same data: from now on cut a tree,
    // built only up to TreeReach times the longer of the first and this
    // length (the slider's range in Relative mode from the default b = 0.2):
    // a forest, far cheaper than the whole tree; a longer length rebuilds it.
    jz::EmstProblem<T> tree;
    tree.points = problem.points;
    tree.numPoints = problem.numPoints;
    tree.periodic = problem.periodic;
    std::copy(problem.boxLo, problem.boxLo + 3, tree.boxLo);
    std::copy(problem.boxHi, problem.boxHi + 3, tree.boxHi);
    tree.ids = problem.ids;
    tree.maxLength = TreeReach * std::max(this->FirstLength, problem.linkingLength);
    jz::EmstEdges edges;
    info = jz::computeEmst(tree, edges, jz::Backend::CPU, control);
    this->Tree = jz::FofTreeOrder{};
    jz::buildFofTreeOrder(std::move(edges), problem.numPoints, problem.ids, this->Tree);
    this->TreeMaxLength = tree.maxLength;
    this->HaveTree = true;
    this->Walked = jz::FofGroups{};
  }
  this->CutLength = problem.linkingLength;
  info.backend = jz::Backend::CPU;
  this->LastCut = true;
  return info;
}

template jz::RunInfo vtkJZFofTreeCache::Groups<float>(
  const jz::FofProblem<float>&, const Key&, jz::Backend, const jz::RunControl&);
template jz::RunInfo vtkJZFofTreeCache::Groups<double>(
  const jz::FofProblem<double>&, const Key&, jz::Backend, const jz::RunControl&);
