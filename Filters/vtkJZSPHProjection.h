/**
 * @class   vtkJZSPHProjection
 * @brief   SPH map: surface density and SurfaceDensity-weighted line-of-sight means of particle arrays (exact pixel integrals of the projected kernel)
 *
 * See vtkJZSPHMapAlgorithm for the properties and doc/filters/SPHProjection.md for
 * the definitions.
 */
#ifndef vtkJZSPHProjection_h
#define vtkJZSPHProjection_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZSPHMapAlgorithm.h"

class JZTREEFILTERS_EXPORT vtkJZSPHProjection : public vtkJZSPHMapAlgorithm
{
public:
  static vtkJZSPHProjection* New();
  vtkTypeMacro(vtkJZSPHProjection, vtkJZSPHMapAlgorithm);

protected:
  vtkJZSPHProjection();
  ~vtkJZSPHProjection() override = default;

private:
  vtkJZSPHProjection(const vtkJZSPHProjection&) = delete;
  void operator=(const vtkJZSPHProjection&) = delete;
};

#endif
