#include "Bindings.h"

#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#ifdef JZ_PY_HAVE_MPI
#include "jz/MpiCommunicator.h"
#include <type_traits>
#endif

namespace jzpy
{
namespace
{
std::atomic<std::uint64_t> convertedArrays{ 0 };
std::atomic<std::uint64_t> abortedRuns{ 0 };
std::atomic<double> lastKernelSeconds{ 0 };

std::string dtypeName(const py::array& a)
{
  return py::str(a.dtype()).cast<std::string>();
}

void checkShape(const py::array& a, std::size_t n, int components, const char* what)
{
  const bool vector = components == 1;
  const bool ok = vector ? a.ndim() == 1 : (a.ndim() == 2 && a.shape(1) == components);
  std::string want = vector ? "(" + std::to_string(n) + ",)"
                            : "(N, " + std::to_string(components) + ")";
  if (!ok)
  {
    std::string got = "(";
    for (py::ssize_t d = 0; d < a.ndim(); ++d)
      got += (d ? ", " : "") + std::to_string(a.shape(d));
    got += a.ndim() == 1 ? ",)" : ")";
    throw py::value_error(std::string(what) + " must have shape " + want + ", got " + got);
  }
  if (n != std::size_t(-1) && static_cast<std::size_t>(a.shape(0)) != n)
    throw py::value_error(std::string(what) + " has " + std::to_string(a.shape(0)) +
      " tuples, but the input has " + std::to_string(n) + " points.");
}

// An array of T: in place when it already is aligned, C-contiguous T, else
// one converted copy.
template <class T>
CArray<T> contiguous(const py::array& a)
{
  const bool aligned = reinterpret_cast<std::uintptr_t>(a.data()) % alignof(T) == 0;
  if (py::isinstance<CArray<T>>(a) && aligned)
    return py::reinterpret_borrow<CArray<T>>(a);
  ++convertedArrays;
  // forcecast: also the casts numpy calls unsafe (long double to double).
  constexpr int flags =
    py::array::c_style | py::array::forcecast | py::detail::npy_api::NPY_ARRAY_ALIGNED_;
  auto converted = py::array_t<T, flags>::ensure(a);
  if (!converted)
    throw py::type_error("cannot convert an array of dtype " + dtypeName(a) + " to " +
      (sizeof(T) == 4 ? "float32" : "float64"));
  return py::reinterpret_borrow<CArray<T>>(converted);
}
} // namespace

#ifdef JZ_PY_HAVE_MPI
// mpi4py's handle of a communicator as MPI_Comm: a pointer in Open MPI, an
// integer in MPICH.
template <class C>
C commFromHandle(std::uintptr_t handle)
{
  if constexpr (std::is_pointer_v<C>)
    return reinterpret_cast<C>(handle);
  else
    return static_cast<C>(handle);
}
#endif

py::array asArray(py::handle array, const char* what)
{
  if (py::isinstance<py::array>(array))
    return py::reinterpret_borrow<py::array>(array);
  py::array converted = py::array::ensure(array);
  if (!converted)
  {
    PyErr_Clear();
    throw py::type_error(std::string(what) + " must be a numpy array");
  }
  ++convertedArrays;
  return converted;
}

std::vector<BindFunction>& bindings()
{
  static std::vector<BindFunction> all;
  return all;
}

bool isSinglePrecision(py::handle array, const char* what)
{
  const py::array a = asArray(array, what);
  const char kind = a.dtype().kind();
  if (kind != 'f')
    throw py::type_error(std::string(what) + " must hold float32 or float64 values, got dtype " +
      dtypeName(a));
  return a.itemsize() <= 4;
}

template <class T>
CArray<T> coordinates(py::handle array, const char* what)
{
  const py::array a = asArray(array, what);
  isSinglePrecision(a, what); // the dtype rule
  checkShape(a, std::size_t(-1), 3, what);
  return contiguous<T>(a);
}
template CArray<float> coordinates<float>(py::handle, const char*);
template CArray<double> coordinates<double>(py::handle, const char*);

CArray<double> pointValues(py::handle array, std::size_t n, int components, const char* what)
{
  if (array.is_none())
    return CArray<double>(0);
  const py::array a = asArray(array, what);
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u')
    throw py::type_error(
      std::string(what) + " must hold real numbers, got dtype " + dtypeName(a));
  checkShape(a, n, components, what);
  return contiguous<double>(a);
}

std::uint64_t conversions()
{
  return convertedArrays.load();
}

std::uint64_t interruptedKernels()
{
  return abortedRuns.load();
}

double kernelSeconds()
{
  return lastKernelSeconds.load();
}

Box parseBox(py::handle box)
{
  Box b;
  if (box.is_none())
    return b;
  b.periodic = true;
  if (py::isinstance<py::float_>(box) || py::isinstance<py::int_>(box) ||
    (py::isinstance<py::array>(box) && py::reinterpret_borrow<py::array>(box).ndim() == 0))
  {
    b.hi[0] = b.hi[1] = b.hi[2] = box.cast<double>();
  }
  else
  {
    std::vector<double> lengths;
    try
    {
      lengths = box.cast<std::vector<double>>();
    }
    catch (const py::cast_error&)
    {
      throw py::type_error("box must be None, a length L or three lengths (Lx, Ly, Lz)");
    }
    if (lengths.size() != 3)
      throw py::value_error("box must be None, a length L or three lengths (Lx, Ly, Lz), got " +
        std::to_string(lengths.size()) + " values");
    for (int d = 0; d < 3; ++d)
      b.hi[d] = lengths[d];
  }
  const std::string error = jz::periodicBoxError(true, b.lo, b.hi, inputNames());
  if (!error.empty())
    throw py::value_error(error);
  return b;
}

jz::Backend parseDevice(const std::string& device)
{
  const jz::Backend backend = parseChoice<jz::Backend>(device,
    { { "auto", jz::Backend::Auto }, { "cpu", jz::Backend::CPU }, { "cuda", jz::Backend::CUDA } },
    "device");
  std::string why;
  if (backend == jz::Backend::CUDA && !jz::cudaUsable(&why))
    throw DeviceUnavailable("device=\"cuda\" needs a usable CUDA GPU, and there is none: " + why +
      " (device=\"auto\" runs on the CPU then)");
  return backend;
}

jz::InputNames inputNames()
{
  jz::InputNames names;
  names.neighbourCount = "k";
  names.linkingLength = "linking_length";
  names.periodicBox = "box";
  names.point = "point";
  names.sourcePoint = "point";
  names.queryPoint = "query point";
  names.sourceMasses = "masses";
  return names;
}

int optionalCount(py::handle value, const char* name, int none)
{
  if (value.is_none())
    return none;
  if (!py::isinstance<py::int_>(value) && !py::hasattr(value, "__index__"))
    throw py::type_error(std::string(name) + " must be an integer or None");
  const long long v = py::int_(py::reinterpret_borrow<py::object>(value)).cast<long long>();
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    throw py::value_error(std::string(name) + " is out of range (got " + std::to_string(v) + ")");
  return static_cast<int>(v);
}

void checkRange(const jz::ParameterRange& range, double value, const char* name)
{
  const std::string error = jz::rangeError(range, value, name);
  if (!error.empty())
    throw py::value_error(error);
}

void Comm::agree(const std::string& localError) const
{
  jz::agreeOnErrors(*comm, localError); // jz::Error: ValueError on every rank
}

void Comm::agreeOnFailure(const std::exception_ptr& failure, const std::string& message) const
{
  if (distributed)
  {
    try
    {
      agree(failure && message.empty() ? "invalid arguments" : message);
    }
    catch (const jz::Error&)
    {
      if (!failure)
        throw;
    }
  }
  if (failure)
    std::rethrow_exception(failure);
}

void Comm::givenOnAllOrNone(bool given, const char* what) const
{
  const std::int64_t ranks = total(given ? 1 : 0);
  if (ranks != 0 && ranks != comm->size())
    throw py::value_error(std::string(what) + " must be given on every rank or on none (" +
      std::to_string(ranks) + " of " + std::to_string(comm->size()) + " ranks have them)");
}

std::vector<jz::GlobalId> Comm::globalIds(std::size_t n) const
{
  if (!distributed)
    return {};
  const std::vector<std::int64_t> counts =
    jz::allGatherConcat(*comm, std::vector<std::int64_t>{ static_cast<std::int64_t>(n) });
  jz::GlobalId offset = 0;
  for (int r = 0; r < comm->rank(); ++r)
    offset += counts[r];
  std::vector<jz::GlobalId> ids(n);
  for (std::size_t i = 0; i < n; ++i)
    ids[i] = offset + static_cast<jz::GlobalId>(i);
  return ids;
}

Comm makeComm(py::handle comm)
{
  Comm c;
  if (comm.is_none())
  {
    c.comm = std::make_unique<jz::SerialCommunicator>();
    return c;
  }
#ifdef JZ_PY_HAVE_MPI
  const std::uintptr_t handle =
    py::module_::import("mpi4py.MPI").attr("_handleof")(comm).cast<std::uintptr_t>();
  c.comm = std::make_unique<jz::MpiCommunicator>(commFromHandle<MPI_Comm>(handle));
  c.distributed = true;
  return c;
#else
  throw std::runtime_error("comm= needs jztree built with MPI (find_package(MPI) found none when "
                           "it was built: install libopenmpi-dev and rebuild)");
#endif
}

void runKernel(const std::function<void(const jz::RunControl&)>& kernel)
{
  using Clock = std::chrono::steady_clock;
  const std::thread::id caller = std::this_thread::get_id();
  Clock::time_point nextPoll = Clock::now();
  bool interrupted = false;
  jz::RunControl control;
  control.progress = [&](double)
  {
    // Signals are handled on Python's thread only; a few polls per second.
    if (interrupted || std::this_thread::get_id() != caller)
      return !interrupted;
    const Clock::time_point now = Clock::now();
    if (now < nextPoll)
      return true;
    nextPoll = now + std::chrono::milliseconds(20);
    py::gil_scoped_acquire gil;
    interrupted = PyErr_CheckSignals() != 0; // the exception stays set
    return !interrupted;
  };
  bool aborted = false;
  {
    py::gil_scoped_release release;
    const Clock::time_point start = Clock::now();
    try
    {
      kernel(control);
    }
    catch (const jz::Aborted&)
    {
      aborted = true;
    }
    lastKernelSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  if (interrupted && aborted)
    ++abortedRuns;
  if (interrupted)
    throw py::error_already_set(); // KeyboardInterrupt (or the signal handler's exception)
  if (aborted)
    throw jz::Aborted(); // another rank was interrupted
}
} // namespace jzpy
