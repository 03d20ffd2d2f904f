// What every binding of the jztree module shares: numpy arrays as the
// kernels read them (used in place when they already are), the box, the
// device and the communicator arguments, and running a kernel with the GIL
// released and Ctrl-C turned into the kernels' abort.
//
// A family of functions (kNN, FoF, ...) is one file that defines its
// functions and registers them with JZ_PY_BINDINGS; Module.cpp needs no edit.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jz/Backend.h"
#include "jz/Communicator.h"
#include "jz/Config.h"
#include "jz/Validate.h"

namespace jzpy
{
namespace py = pybind11;

template <class T>
using CArray = py::array_t<T, py::array::c_style>;

// The registry of binding families (one function per family file).
using BindFunction = void (*)(py::module_&);
std::vector<BindFunction>& bindings();
struct Registration
{
  explicit Registration(BindFunction f) { bindings().push_back(f); }
};
#define JZ_PY_BINDINGS(name)                                                                      \
  static void name(pybind11::module_& m);                                                         \
  static const ::jzpy::Registration name##Registration(&name);                                    \
  static void name(pybind11::module_& m)

// The precision of a coordinate array: float32 stays float, float64 (and any
// other real floating type, converted) double. Anything else (integers,
// complex, bool, objects) is a TypeError naming `what`.
bool isSinglePrecision(py::handle array, const char* what);

// An (n, 3) array of T, C-contiguous: `array` itself when it already is one
// (no copy), else one converted copy (counted by conversions()). Wrong
// dtype: TypeError; wrong shape: ValueError.
template <class T>
CArray<T> coordinates(py::handle array, const char* what);

// Per-point values (n, or n x components) in float64, used in place when
// contiguous float64. None gives an empty array (the kernels' "not given").
CArray<double> pointValues(py::handle array, std::size_t n, int components, const char* what);

// How many input arrays were converted (copied) since the module was loaded.
std::uint64_t conversions();
// How many kernel runs Ctrl-C stopped midway (through the abort hook).
std::uint64_t interruptedKernels();
// Wall-clock seconds of the last kernel run alone (the benchmark of the
// call's overhead).
double kernelSeconds();

// box=None | L | (Lx, Ly, Lz): the periodic box [0, L), checked by the
// kernels' rule.
struct Box
{
  bool periodic = false;
  double lo[3] = { 0, 0, 0 };
  double hi[3] = { 1, 1, 1 };
  double volume() const { return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
  template <class P>
  void applyTo(P& problem) const
  {
    problem.periodic = periodic;
    for (int d = 0; d < 3; ++d)
    {
      problem.boxLo[d] = lo[d];
      problem.boxHi[d] = hi[d];
    }
  }
};
Box parseBox(py::handle box);

// One of the named choices of a string argument, or ValueError listing them:
// `what must be "a", "b" or "c", got "x"`.
template <class E>
E parseChoice(const std::string& value, std::initializer_list<std::pair<const char*, E>> choices,
  const char* what)
{
  std::string names;
  std::size_t i = 0;
  for (const auto& choice : choices)
  {
    if (value == choice.first)
      return choice.second;
    if (i > 0)
      names += i + 1 == choices.size() ? " or " : ", ";
    names += "\"" + std::string(choice.first) + "\"";
    ++i;
  }
  throw py::value_error(std::string(what) + " must be " + names + ", got \"" + value + "\"");
}

// A device that was asked for and is not there: jztree.DeviceError, both a
// RuntimeError (the machine lacks it) and a ValueError (the argument cannot
// be honoured), so that either except clause catches it.
struct DeviceUnavailable : std::runtime_error
{
  using std::runtime_error::runtime_error;
};

// device="auto" | "cpu" | "cuda"; "cuda" without a usable GPU raises
// DeviceUnavailable saying why.
jz::Backend parseDevice(const std::string& device);

// The kernels' input names in the module's words (argument names).
jz::InputNames inputNames();

// An optional integer argument (min_samples=None | n): `none` for None,
// TypeError for a non-integer.
int optionalCount(py::handle value, const char* name, int none);

// A parameter checked against its range in ParameterRanges.h, named as the
// Python argument.
void checkRange(const jz::ParameterRange& range, double value, const char* name);

// comm=None (one process) or an mpi4py communicator.
struct Comm
{
  std::unique_ptr<jz::Communicator> comm;
  bool distributed = false;
  jz::Communicator& operator*() const { return *comm; }
  // Raises ValueError on every rank when any rank has a message.
  void agree(const std::string& localError) const;
  // Runs f, which converts and checks this rank's arguments. When it fails
  // on any rank every rank raises (this one its own exception, the others
  // ValueError naming the rank), so that none waits in a collective.
  template <class F>
  void local(F&& f) const
  {
    std::exception_ptr failure;
    std::string message;
    try
    {
      f();
    }
    catch (py::error_already_set& e)
    {
      failure = std::current_exception();
      message = e.what();
    }
    catch (const std::exception& e)
    {
      failure = std::current_exception();
      message = e.what();
    }
    agreeOnFailure(failure, message);
  }
  void agreeOnFailure(const std::exception_ptr& failure, const std::string& message) const;
  // An optional argument (queries, velocities) given on every rank or on
  // none; ValueError on every rank otherwise.
  void givenOnAllOrNone(bool given, const char* what) const;
  // The sum over the ranks.
  std::int64_t total(std::int64_t local) const { return jz::allSum(*comm, local); }
  // Global ids of this rank's n points (the serial call's indices on the
  // points of all ranks in rank order); empty for one process.
  std::vector<jz::GlobalId> globalIds(std::size_t n) const;
};
Comm makeComm(py::handle comm);

// Runs `kernel` with the GIL released, with a RunControl whose progress hook
// polls for Ctrl-C (briefly re-taking the GIL) and aborts the kernel; then
// raises KeyboardInterrupt. jz::Error becomes ValueError.
void runKernel(const std::function<void(const jz::RunControl&)>& kernel);

// Uninitialised C-contiguous result arrays: (n,) and (n, components).
template <class T>
CArray<T> newArray(std::size_t n)
{
  return CArray<T>({ static_cast<py::ssize_t>(n) });
}
template <class T>
CArray<T> newArray(std::size_t n, std::size_t components)
{
  return CArray<T>({ static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(components) });
}

// Data pointer of an array of `count` values, or nullptr for none (the
// kernels' "not given").
template <class T>
const T* dataOrNull(const CArray<T>& a)
{
  return a.size() > 0 ? a.data() : nullptr;
}

// `array` as a numpy array: itself, or (a list, ...) converted once.
py::array asArray(py::handle array, const char* what);

// Calls f(float{}) or f(double{}) by the precision of `points` (on every
// rank: float only when all ranks' points are float32), after making
// `points` a numpy array (so that a list is converted only once).
template <class F>
auto inPrecision(py::object& points, const Comm& comm, F&& f)
{
  bool single = false;
  comm.local(
    [&]
    {
      points = asArray(points, "points");
      single = isSinglePrecision(points, "points");
    });
  if (comm.distributed)
    single = comm.total(single ? 0 : 1) == 0;
  if (single)
    return f(float{});
  return f(double{});
}
} // namespace jzpy
