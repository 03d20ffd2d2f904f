/**
 * @file   vtkJZParticleInput.h
 * @brief  The input of every tree filter, read the same way: the Input's
 * pieces (and the Query's), the global counts, the periodic box, the
 * precision, the coordinates, the selected point arrays (masses, velocities)
 * and the global ids, each step checked and agreed on over the ranks
 * (doc/filters, "Parallel runs"), so that all ranks fail together and none
 * waits for the others. Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZParticleInput_h
#define vtkJZParticleInput_h

#include "vtkJZKernelAdapter.h"

#include "jz/Communicator.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

class vtkDataObject;
class vtkDataSet;

namespace vtkJZKernelAdapter
{
/// The point arrays a filter reads besides the coordinates.
struct PointArrayRequest
{
  const char* masses = nullptr;     // SelectedArrayName of the MassArray; null: unit masses
  const char* velocities = nullptr; // of the VelocityArray (3 components); null: none
  bool globalIds = true;            // the GlobalIds, else the index over all ranks
};

struct ParticleInput
{
  std::unique_ptr<jz::Communicator> comm;
  std::vector<vtkDataSet*> pieces;      // the Input's point sets
  std::vector<vtkDataSet*> queryPieces; // the Query's data sets (when connected)
  bool hasQuery = false;
  std::int64_t localPoints = 0;         // this rank's Input points
  std::int64_t totalPoints = 0;         // over all ranks
  std::int64_t totalQueries = 0;        // over all ranks
  double box[6] = { 0, 1, 0, 1, 0, 1 }; // the periodic box used
  bool useFloat = false; // float only when every rank's points (and queries) are float
  Buffer<float> coordsF, queriesF;
  Buffer<double> coordsD, queriesD;
  Buffer<double> masses, velocities;
  Buffer<jz::GlobalId> ids;

  /// The Input's (and the Query's) coordinates in the run's precision T.
  template <class T>
  const Buffer<T>& Coordinates() const
  {
    return Pick<T>(this->coordsF, this->coordsD);
  }
  template <class T>
  const Buffer<T>& QueryCoordinates() const
  {
    return Pick<T>(this->queriesF, this->queriesD);
  }

private:
  template <class T>
  static const Buffer<T>& Pick(const Buffer<float>& f, const Buffer<double>& d)
  {
    if constexpr (std::is_same<T, float>::value)
      return f;
    else
      return d;
  }
};

/// Collective. The communicator, the pieces of the Input (point sets) and of
/// the Query (data sets; null when not connected) and the global counts.
/// Returns the error (the same on every rank) or an empty string.
std::string ReadPieces(vtkDataObject* input, vtkDataObject* query, ParticleInput& in);

/// Collective when `periodic`: the periodic box (vtkJZPeriodicBox::Resolve)
/// into `in.box`; else `in.box` is BoxBounds. Returns the error or "".
std::string ReadPeriodicBox(vtkDataObject* input, bool periodic, bool boxFromData,
  const double boxBounds[6], ParticleInput& in);

/// Collective. The precision, the coordinates of the Input and Query, the
/// requested point arrays and the global ids (MakeGlobalIds). `pieceError`,
/// when given, checks this rank's piece once its coordinates are read (and
/// only when everything before succeeded). Returns the error or "".
std::string ReadPoints(const PointArrayRequest& request, ParticleInput& in,
  const std::function<std::string(const ParticleInput&)>& pieceError = nullptr);

/// ReadPieces, ReadPeriodicBox and ReadPoints (global ids only), for the
/// filters with only an Input. With totalPoints == 0 nothing after the
/// counts is read.
std::string ReadParticleInput(vtkDataObject* input, bool periodic, bool boxFromData,
  const double boxBounds[6], ParticleInput& in);
}

#endif
