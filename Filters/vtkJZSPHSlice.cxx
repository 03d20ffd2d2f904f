#include "vtkJZSPHSlice.h"

#include "vtkObjectFactory.h"

vtkStandardNewMacro(vtkJZSPHSlice);

vtkJZSPHSlice::vtkJZSPHSlice()
{
  this->MapKind = 1;
  this->FilterName = "SPHSlice";

}
