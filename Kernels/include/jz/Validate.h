// Input validation: one function and one message per rule, and one
// validate() per problem, used by the single-process kernels, the distributed
// drivers and the ParaView filters alike.
//
// Every rule returns an empty string when the input keeps it, else the
// message meant for the user, naming the inputs with InputNames.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "Backend.h"
#include "Distributed.h"
#include "Fof.h"
#include "InputNames.h"
#include "Knn.h"
#include "ParameterRanges.h"

namespace jz
{
// How much of a problem the caller holds: all of it, or one rank's piece of
// a distributed problem, whose global counts (K against all sources) the
// caller checks with neighbourCountError and the global count.
enum class ProblemExtent
{
  Whole,
  RankPiece
};

// The rules.
std::string periodicBoxError(
  bool periodic, const double* boxLo, const double* boxHi, const InputNames& names = {});
std::string neighbourCountError(
  std::int64_t k, std::int64_t numSources, const InputNames& names = {});
std::string linkingLengthError(double linkingLength, const InputNames& names = {});
// At most 2^32 - 2 points per process (jz::Index).
std::string pointCountError(std::size_t numPoints);
// A result of `bytes` that cannot fit in the machine's physical memory
// (jz/MachineMemory.h) is refused before anything is allocated, rather
// than left to the system's out-of-memory killer; `what` names it and
// `remedy` says how to shrink it.
std::string memoryError(double bytes, const std::string& what, const std::string& remedy);
// The neighbour lists of numQueries points, k neighbours each, of
// bytesPerNeighbour (an id and a distance), as the caller allocates them and
// the kernels fill them.
std::string neighbourListsMemoryError(std::size_t numQueries, std::int64_t k,
  std::size_t bytesPerNeighbour, const InputNames& names = {});
// The first of n points (interleaved xyz) with a NaN or infinite coordinate;
// `what` names a point ("point", "source point", ...).
template <class T>
std::string nonFiniteCoordinateError(const T* xyz, std::size_t n, const std::string& what);
// The first non-finite value of n tuples of `components` doubles.
std::string nonFiniteValueError(
  const double* values, std::size_t n, int components, const std::string& what);

// Every rule of a problem, in a fixed order; the first broken rule's message.
template <class T>
std::string problemError(const KnnProblem<T>& problem, ProblemExtent extent = ProblemExtent::Whole,
  const InputNames& names = {});
template <class T>
std::string problemError(const FofProblem<T>& problem, ProblemExtent extent = ProblemExtent::Whole,
  const InputNames& names = {});

// The distributed inputs of one rank: its piece's rules (RankPiece), global
// ids, and for FoF the masses and velocities of the options.
template <class T>
std::string distributedInputError(const KnnProblem<T>& problem, const InputNames& names = {});
template <class T>
std::string distributedInputError(
  const FofProblem<T>& problem, const FofDistributedOptions& options, const InputNames& names = {});

// Throws Error with problemError's message when a rule is broken.
template <class P>
void validate(const P& problem)
{
  const std::string error = problemError(problem);
  if (!error.empty())
    throw Error(error);
}

extern template std::string nonFiniteCoordinateError<float>(
  const float*, std::size_t, const std::string&);
extern template std::string nonFiniteCoordinateError<double>(
  const double*, std::size_t, const std::string&);
extern template std::string problemError<float>(
  const KnnProblem<float>&, ProblemExtent, const InputNames&);
extern template std::string problemError<double>(
  const KnnProblem<double>&, ProblemExtent, const InputNames&);
extern template std::string problemError<float>(
  const FofProblem<float>&, ProblemExtent, const InputNames&);
extern template std::string problemError<double>(
  const FofProblem<double>&, ProblemExtent, const InputNames&);
extern template std::string distributedInputError<float>(
  const KnnProblem<float>&, const InputNames&);
extern template std::string distributedInputError<double>(
  const KnnProblem<double>&, const InputNames&);
extern template std::string distributedInputError<float>(
  const FofProblem<float>&, const FofDistributedOptions&, const InputNames&);
extern template std::string distributedInputError<double>(
  const FofProblem<double>&, const FofDistributedOptions&, const InputNames&);
} // namespace jz
