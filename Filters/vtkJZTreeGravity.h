/**
 * @class   vtkJZTreeGravity
 * @brief   gravitational potential and acceleration of a particle set (tree gravity)
 *
 * For every query point, the Newtonian potential and acceleration due to the
 * Input particles with Plummer softening eps, isolated boundaries:
 *
 *   phi_i = -G sum_{j != i} m_j / sqrt(r_ij^2 + eps^2)
 *   a_i   = -G sum_{j != i} m_j (x_i - x_j) / (r_ij^2 + eps^2)^(3/2)
 *
 * evaluated with Barnes-Hut on the jz-tree's z-order planes (multipoles up to
 * quadrupole, opening angle theta; theta = 0 is exact direct summation). A
 * pair at distance 0 with eps = 0 is skipped; a Query point excludes no
 * particle (a Query point on a particle skips that pair only when eps = 0).
 *
 * Port 0 ("Input") holds the particles, any vtkPointSet (composite inputs are
 * one particle set). The optional port 1 ("Query") takes any vtkDataSet
 * whose points are evaluated, e.g. a vtkImageData grid. The output is a
 * shallow copy of the Query (when connected) or of the Input with the double
 * point arrays `Potential` and `Acceleration` (3 components) and the field
 * data string array `JZDevice`.
 *
 * Errors (vtkErrorMacro, empty output): non-finite coordinates, negative or
 * non-finite masses, OpeningAngle < 0, Softening < 0, a mass array with the
 * wrong number of tuples, Device CUDA without a usable GPU. An empty Input
 * gives an empty output.
 *
 * Parallel runs: every rank evaluates its own points against the particles
 * of all ranks; the results equal a serial run within the accuracy of theta.
 */
#ifndef vtkJZTreeGravity_h
#define vtkJZTreeGravity_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZQueryPointsAlgorithm.h"

class JZTREEFILTERS_EXPORT vtkJZTreeGravity : public vtkJZQueryPointsAlgorithm
{
public:
  static vtkJZTreeGravity* New();
  vtkTypeMacro(vtkJZTreeGravity, vtkJZQueryPointsAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /**
   * Opening angle theta (default 0.5): a node of size s (largest side of its
   * box) at distance d from the receiver node's box is taken as a multipole
   * when s < theta d. 0 means exact direct summation. Must be >= 0.
   */
  vtkSetMacro(OpeningAngle, double);
  vtkGetMacro(OpeningAngle, double);
  ///@}

  ///@{
  /**
   * Plummer softening length eps (default 0). Must be >= 0.
   */
  vtkSetMacro(Softening, double);
  vtkGetMacro(Softening, double);
  ///@}

  ///@{
  /**
   * Gravitational constant G in the data's units (default 1).
   */
  vtkSetMacro(GravitationalConstant, double);
  vtkGetMacro(GravitationalConstant, double);
  ///@}

  /**
   * The particle masses are the input array to process 0 (a point array,
   * one component); none selected means unit masses.
   */

protected:
  vtkJZTreeGravity();
  ~vtkJZTreeGravity() override = default;

#ifndef __VTK_WRAP__
  int RunQuery(vtkDataObject* input, vtkDataObject* query, vtkDataObject* output,
    vtkJZKernelAdapter::ParticleInput& in) override;
#endif

  double OpeningAngle = 0.5;
  double Softening = 0;
  double GravitationalConstant = 1;

private:
  vtkJZTreeGravity(const vtkJZTreeGravity&) = delete;
  void operator=(const vtkJZTreeGravity&) = delete;
};

#endif
