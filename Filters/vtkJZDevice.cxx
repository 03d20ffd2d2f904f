#include "vtkJZDevice.h"

#include "vtkObjectFactory.h"

vtkStandardNewMacro(vtkJZDevice);
