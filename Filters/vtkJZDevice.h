/**
 * @class   vtkJZDevice
 * @brief   the values of the JZ-Tree filters' `Device` property
 *
 * One home for the choice every tree filter offers (the `Device` property
 * in the filters' pages, doc/filters/): DEVICE_AUTO (the GPU when a usable
 * one is present, else the CPU),
 * DEVICE_CPU, or DEVICE_CUDA (an error when no usable GPU is present). The
 * values are the kernels' jz::Backend values (pinned by a static_assert in
 * vtkJZKernelAdapter.cxx, next to ToBackend).
 *
 * Only the enumeration; not meant to be instantiated.
 */
#ifndef vtkJZDevice_h
#define vtkJZDevice_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkObject.h"

class JZTREEFILTERS_EXPORT vtkJZDevice : public vtkObject
{
public:
  static vtkJZDevice* New();
  vtkTypeMacro(vtkJZDevice, vtkObject);

  enum Devices
  {
    DEVICE_AUTO = 0,
    DEVICE_CPU = 1,
    DEVICE_CUDA = 2
  };

protected:
  vtkJZDevice() = default;
  ~vtkJZDevice() override = default;

private:
  vtkJZDevice(const vtkJZDevice&) = delete;
  void operator=(const vtkJZDevice&) = delete;
};

#endif
