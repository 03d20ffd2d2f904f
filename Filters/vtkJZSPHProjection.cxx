#include "vtkJZSPHProjection.h"

#include "vtkObjectFactory.h"

vtkStandardNewMacro(vtkJZSPHProjection);

vtkJZSPHProjection::vtkJZSPHProjection()
{
  this->MapKind = 0;
  this->FilterName = "SPHProjection";

}
