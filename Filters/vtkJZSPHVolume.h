/**
 * @class   vtkJZSPHVolume
 * @brief   SPH map: voxel-integrated SPH density and mass-weighted voxel means on a 3-D grid
 *
 * See vtkJZSPHMapAlgorithm for the properties and doc/filters/SPHVolume.md for
 * the definitions.
 */
#ifndef vtkJZSPHVolume_h
#define vtkJZSPHVolume_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZSPHMapAlgorithm.h"

class JZTREEFILTERS_EXPORT vtkJZSPHVolume : public vtkJZSPHMapAlgorithm
{
public:
  static vtkJZSPHVolume* New();
  vtkTypeMacro(vtkJZSPHVolume, vtkJZSPHMapAlgorithm);

protected:
  vtkJZSPHVolume();
  ~vtkJZSPHVolume() override = default;

private:
  vtkJZSPHVolume(const vtkJZSPHVolume&) = delete;
  void operator=(const vtkJZSPHVolume&) = delete;
};

#endif
