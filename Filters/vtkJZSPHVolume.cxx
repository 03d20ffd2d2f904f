#include "vtkJZSPHVolume.h"

#include "vtkObjectFactory.h"

vtkStandardNewMacro(vtkJZSPHVolume);

vtkJZSPHVolume::vtkJZSPHVolume()
{
  this->MapKind = 2;
  this->FilterName = "SPHVolume";
  this->Resolution[0] = this->Resolution[1] = this->Resolution[2] = 128;
}
