/**
 * @class   vtkJZSPHSlice
 * @brief   SPH map: the SPH estimate of the density and of particle arrays on a plane
 *
 * See vtkJZSPHMapAlgorithm for the properties and doc/filters/SPHSlice.md for
 * the definitions.
 */
#ifndef vtkJZSPHSlice_h
#define vtkJZSPHSlice_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZSPHMapAlgorithm.h"

class JZTREEFILTERS_EXPORT vtkJZSPHSlice : public vtkJZSPHMapAlgorithm
{
public:
  static vtkJZSPHSlice* New();
  vtkTypeMacro(vtkJZSPHSlice, vtkJZSPHMapAlgorithm);

protected:
  vtkJZSPHSlice();
  ~vtkJZSPHSlice() override = default;

private:
  vtkJZSPHSlice(const vtkJZSPHSlice&) = delete;
  void operator=(const vtkJZSPHSlice&) = delete;
};

#endif
