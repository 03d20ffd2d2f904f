/**
 * @class   vtkJZSPHSmooth
 * @brief   SPH-smoothed point arrays on the particles, with gradients,
 * divergence, curl and local dispersion (jz/SphSmooth.h)
 *
 * Each particle's K nearest neighbours (itself included) from the exact kNN,
 * h = the distance to the K-th and the "SPH Cubic Spline" density as
 * vtkJZKNNDensity's, then for every selected point array A:
 * `A_Smoothed` = sum_j (m_j / rho_j) A_j W(r_ij, h_i); for a 1-component A
 * `A_Gradient`; for a 3-component A `A_Divergence`, `A_Curl` and
 * `A_Dispersion`. The derivatives are SPH difference estimates. Outputs:
 * `SmoothingLength` and `Density` (in the points' precision) and the
 * smoothed arrays (double). User documentation: doc/filters/SPHSmooth.md,
 * generated from Plugin/SPHSmooth.xml.
 *
 * @sa vtkJZKNNDensity vtkSPHInterpolator
 */
#ifndef vtkJZSPHSmooth_h
#define vtkJZSPHSmooth_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZParticleAlgorithm.h"

#include <string> // for the array names
#include <vector> // for the array names

class JZTREEFILTERS_EXPORT vtkJZSPHSmooth : public vtkJZParticleAlgorithm
{
public:
  static vtkJZSPHSmooth* New();
  vtkTypeMacro(vtkJZSPHSmooth, vtkJZParticleAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /**
   * Number of neighbours K, the particle itself included (default 32).
   * Must be at least 1 and at most the number of Input points.
   */
  vtkSetMacro(NumberOfNeighbors, int);
  vtkGetMacro(NumberOfNeighbors, int);
  ///@}

  ///@{
  /**
   * The point arrays to smooth (any numeric type and number of components).
   */
  void AddPointArray(const char* name);
  void ClearPointArrays();
  int GetNumberOfPointArrays() const;
  const char* GetPointArray(int i) const;
  ///@}

  /**
   * The particle masses are the input array to process 0 (a point array,
   * one component). With no array selected, or with the name empty or
   * "None" and no such array present, every particle has unit mass.
   */

protected:
  vtkJZSPHSmooth();
  ~vtkJZSPHSmooth() override = default;

#ifndef __VTK_WRAP__
  int RunParticles(vtkDataObject* input, const std::vector<vtkDataObject*>& outputs) override;
#endif

  int NumberOfNeighbors = 32;
  std::vector<std::string> PointArrays;

private:
  vtkJZSPHSmooth(const vtkJZSPHSmooth&) = delete;
  void operator=(const vtkJZSPHSmooth&) = delete;
};

#endif
