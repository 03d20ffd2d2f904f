// The extension module jztree._jztree: every registered family of functions
// (JZ_PY_BINDINGS in the *Bindings.cpp files), the kernels' errors as Python
// exceptions, and the module's build facts.
#include "Bindings.h"

PYBIND11_MODULE(_jztree, m)
{
  namespace py = pybind11;
  m.doc() = "The jz-tree kernels over numpy arrays (see the jztree package).";
  // Created once per interpreter and kept: the translator below raises it.
  static PyObject* deviceError = PyErr_NewExceptionWithDoc("jztree.DeviceError",
    "A device was asked for (device=\"cuda\") and is not usable here; both a ValueError "
    "and a RuntimeError.",
    py::make_tuple(py::handle(PyExc_ValueError), py::handle(PyExc_RuntimeError)).release().ptr(),
    nullptr);
  if (!deviceError)
    throw py::error_already_set();
  m.attr("DeviceError") = py::handle(deviceError);
  py::register_exception_translator(
    [](std::exception_ptr p)
    {
      try
      {
        if (p)
          std::rethrow_exception(p);
      }
      catch (const jzpy::DeviceUnavailable& e)
      {
        PyErr_SetString(deviceError, e.what());
      }
      catch (const jz::Aborted& e)
      {
        PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
      }
      catch (const jz::Error& e)
      {
        PyErr_SetString(PyExc_ValueError, e.what());
      }
    });
  m.def("_conversions", &jzpy::conversions,
    "How many input arrays were converted (copied) so far: contiguous float32/float64 "
    "coordinates and float64 values are used in place and do not count.");
  m.def("_interrupted_kernels", &jzpy::interruptedKernels,
    "How many kernel runs Ctrl-C stopped midway, through the kernels' abort hook.");
  m.def("_kernel_seconds", &jzpy::kernelSeconds,
    "Wall-clock seconds of the last call's kernel run alone, without the binding around it.");
#ifdef JZ_PY_HAVE_MPI
  m.attr("_has_mpi") = true;
#else
  m.attr("_has_mpi") = false;
#endif
  m.def("_cuda_usable", []() { return jz::cudaUsable(); }, "Whether a usable CUDA GPU is present.");
  for (jzpy::BindFunction bind : jzpy::bindings())
    bind(m);
}
