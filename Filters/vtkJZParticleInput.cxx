#include "vtkJZParticleInput.h"

#include "vtkJZCommunicator.h"

#include "vtkDataObject.h"
#include "vtkPointSet.h"
#include "vtkType.h"

#if __has_include("vtkJZPeriodicBox.h")
#include "vtkJZPeriodicBox.h"
#define JZ_HAVE_PERIODIC_BOX 1
#endif

#include <algorithm>

namespace vtkJZKernelAdapter
{
std::string ReadParticleInput(vtkDataObject* input, bool periodic, bool boxFromData,
  const double boxBounds[6], ParticleInput& in)
{
  in.comm = MakeCommunicator();
  jz::Communicator& comm = *in.comm;
  std::string error;
  for (vtkDataObject* leaf : GetLeaves(input))
  {
    auto* ps = vtkPointSet::SafeDownCast(leaf);
    if (!ps)
    {
      error = std::string("The Input holds a ") + leaf->GetClassName() +
        "; it must be a point set (e.g. vtkPolyData).";
      break;
    }
    in.pieces.push_back(ps);
  }
  error = AgreeOnError(comm, error);
  if (!error.empty())
    return error;
  in.localPoints = CountPoints(in.pieces);
  in.totalPoints = jz::allSum(comm, in.localPoints);
  if (in.totalPoints == 0)
    return std::string();
  std::copy(boxBounds, boxBounds + 6, in.box);
#if defined(JZ_HAVE_PERIODIC_BOX)
  if (periodic)
  {
    error = vtkJZPeriodicBox::Resolve(comm, input, boxFromData, boxBounds, in.box);
    if (!error.empty())
      return error;
  }
#else
  (void)boxFromData;
#endif
  if (periodic)
  {
    error = PeriodicBoxError(in.box);
    if (!error.empty())
      return error;
  }
  in.useFloat = AllRanks(comm, PointPrecision(in.pieces) == VTK_FLOAT);
  if (in.useFloat)
    GetCoordinates(in.pieces, in.coordsF);
  else
    GetCoordinates(in.pieces, in.coordsD);
  GetGlobalIds(in.pieces, in.ids, error);
  error = AgreeOnError(comm, error);
  if (error.empty())
    MakeGlobalIds(comm, static_cast<std::size_t>(in.localPoints), in.ids, error);
  return error;
}
}
