/**
 * @file   vtkJZParticleInput.h
 * @brief  The particle input of the tree filters that take only points:
 * pieces, precision, coordinates, global ids and the periodic box, checked
 * and agreed on over the ranks. Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZParticleInput_h
#define vtkJZParticleInput_h

#include "vtkJZKernelAdapter.h"

#include "jz/Communicator.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class vtkDataObject;
class vtkDataSet;

namespace vtkJZKernelAdapter
{
struct ParticleInput
{
  std::unique_ptr<jz::Communicator> comm;
  std::vector<vtkDataSet*> pieces;
  std::int64_t localPoints = 0;
  std::int64_t totalPoints = 0;
  bool useFloat = false; // float only when every rank's points are float
  Buffer<float> coordsF;
  Buffer<double> coordsD;
  Buffer<jz::GlobalId> ids;
  double box[6] = { 0, 1, 0, 1, 0, 1 }; // the periodic box used
};

/// Collective. Fills `in` from the filter's input; returns the error (the
/// same on every rank) or an empty string. With totalPoints == 0 nothing
/// else is filled.
std::string ReadParticleInput(vtkDataObject* input, bool periodic, bool boxFromData,
  const double boxBounds[6], ParticleInput& in);
}

#endif
// VTK-HeaderTest-Exclude: vtkJZParticleInput.h
