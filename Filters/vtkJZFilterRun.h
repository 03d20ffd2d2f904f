/**
 * @file   vtkJZFilterRun.h
 * @brief  How every tree filter runs its kernels: in the input's precision
 * (float only when every rank's points are float), with no partial output
 * after an abort or an error. Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZFilterRun_h
#define vtkJZFilterRun_h

#include "vtkAlgorithm.h"
#include "vtkDataObject.h"
#include "vtkSetGet.h"

#include "jz/Backend.h"

#include <new>
#include <exception>
#include <initializer_list>

namespace vtkJZKernelAdapter
{
/// Calls `run(T())` with T = float when `useFloat`, else double, and returns
/// 1. When the kernels are aborted (jz::Aborted) the `outputs` are emptied
/// with a warning and 1 is returned (an abort is not an error); when they
/// throw (jz::Error: bad input or no GPU, the same on every rank) the
/// outputs are emptied, "<filter> failed: <reason>" is reported and 0
/// returned.
template <class Run>
int RunInPrecision(vtkAlgorithm* self, const char* filter, bool useFloat,
  std::initializer_list<vtkDataObject*> outputs, Run&& run)
{
  try
  {
    if (useFloat)
    {
      run(float());
    }
    else
    {
      run(double());
    }
    return 1;
  }
  catch (const jz::Aborted&)
  {
    for (vtkDataObject* output : outputs)
    {
      output->Initialize();
    }
    vtkWarningWithObjectMacro(self, << filter << " was aborted; the output"
                                    << (outputs.size() > 1 ? "s are" : " is") << " empty.");
    return 1;
  }
  catch (const std::bad_alloc&)
  {
    for (vtkDataObject* output : outputs)
    {
      output->Initialize();
    }
    vtkErrorWithObjectMacro(self, << filter
                                  << " ran out of memory: the input or the parameters (e.g. a "
                                     "resolution or a neighbour count) ask for more than this "
                                     "process can allocate.");
    return 0;
  }
  catch (const std::exception& e)
  {
    for (vtkDataObject* output : outputs)
    {
      output->Initialize();
    }
    vtkErrorWithObjectMacro(self, << filter << " failed: " << e.what());
    return 0;
  }
}
}

#endif
