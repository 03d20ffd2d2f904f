// VTK-HeaderTest-Exclude: vtkJZParticleInput.h
#include "vtkJZParticleInput.h"

#include "vtkJZCommunicator.h"
#include "vtkJZPeriodicBox.h"

#include "vtkDataObject.h"
#include "vtkType.h"

#include "jz/Distributed.h"

#include <algorithm>

namespace vtkJZKernelAdapter
{
//------------------------------------------------------------------------------
std::string ReadPieces(vtkDataObject* input, vtkDataObject* query, ParticleInput& in)
{
  in.comm = MakeCommunicator();
  in.hasQuery = query != nullptr;
  std::string error;
  if (CollectPieces(input, true, "Input", in.pieces, error) && query)
  {
    CollectPieces(query, false, "Query", in.queryPieces, error);
  }
  error = AgreeOnError(*in.comm, error);
  if (!error.empty())
  {
    return error;
  }
  in.localPoints = CountPoints(in.pieces);
  std::int64_t counts[2] = { in.localPoints, query ? CountPoints(in.queryPieces) : 0 };
  in.comm->allReduceSum(counts, 2);
  in.totalPoints = counts[0];
  in.totalQueries = counts[1];
  return std::string();
}

//------------------------------------------------------------------------------
std::string ReadPeriodicBox(vtkDataObject* input, bool periodic, bool boxFromData,
  const double boxBounds[6], ParticleInput& in)
{
  std::copy(boxBounds, boxBounds + 6, in.box);
  return periodic ? vtkJZPeriodicBox::Resolve(*in.comm, input, boxFromData, boxBounds, in.box)
                  : std::string();
}

//------------------------------------------------------------------------------
std::string ReadPoints(const PointArrayRequest& request, ParticleInput& in,
  const std::function<std::string(const ParticleInput&)>& pieceError)
{
  in.useFloat = AllRanks(*in.comm,
    PointPrecision(in.pieces) == VTK_FLOAT &&
      (!in.hasQuery || PointPrecision(in.queryPieces) == VTK_FLOAT));
  std::string error;
  if (GetPointValues(in.pieces, request.masses, 1, "MassArray", in.masses, error) &&
    GetPointValues(in.pieces, request.velocities, 3, "VelocityArray", in.velocities, error) &&
    request.globalIds)
  {
    GetGlobalIds(in.pieces, in.ids, error);
  }
  if (in.useFloat)
  {
    GetCoordinates(in.pieces, in.coordsF);
    if (in.hasQuery)
    {
      GetCoordinates(in.queryPieces, in.queriesF);
    }
  }
  else
  {
    GetCoordinates(in.pieces, in.coordsD);
    if (in.hasQuery)
    {
      GetCoordinates(in.queryPieces, in.queriesD);
    }
  }
  if (error.empty() && pieceError)
  {
    error = pieceError(in);
  }
  error = AgreeOnError(*in.comm, error);
  if (error.empty() && request.globalIds)
  {
    MakeGlobalIds(*in.comm, static_cast<std::size_t>(in.localPoints), in.ids, error);
  }
  return error;
}

//------------------------------------------------------------------------------
std::string ReadParticleInput(vtkDataObject* input, bool periodic, bool boxFromData,
  const double boxBounds[6], ParticleInput& in)
{
  std::string error = ReadPieces(input, nullptr, in);
  if (error.empty() && in.totalPoints > 0)
  {
    error = ReadPeriodicBox(input, periodic, boxFromData, boxBounds, in);
  }
  if (error.empty() && in.totalPoints > 0)
  {
    error = ReadPoints(PointArrayRequest(), in);
  }
  return error;
}
}
