// The inputs' names in the kernels' error messages (jz/Validate.h, the
// gravity and halo-property rules): the kernels' own words by default; the
// filters pass their property names (NumberOfNeighbors, BoxBounds,
// Softening, ...) so that users read what they can change.
#pragma once

#include <string>

namespace jz
{
struct InputNames
{
  std::string neighbourCount = "the number of neighbours K";
  std::string linkingLength = "the linking length";
  std::string periodicBox = "the periodic box";
  std::string point = "point";
  std::string sourcePoint = "source point";
  std::string queryPoint = "query point";
  std::string sourceMasses = "the source mass array";
  std::string openingAngle = "the opening angle";
  std::string softening = "the softening";
  std::string gravitationalConstant = "the gravitational constant";
  std::string overdensity = "the overdensity";
  std::string referenceDensity = "the reference density";
};
} // namespace jz
