/**
 * @class   vtkJZTreeGravity
 * @brief   gravitational potential and acceleration of a particle set (tree gravity)
 *
 * For every query point (the Input's, or the optional Query data set's on
 * port 1) the Newtonian potential and acceleration of the Input particles
 * with Plummer softening and isolated boundaries: Barnes-Hut on the
 * jz-tree's planes, or direct summation at OpeningAngle 0 (jz/Gravity.h;
 * locally essential trees under MPI). Outputs the double point arrays
 * `Potential` and `Acceleration`. User documentation (definitions,
 * accuracy, parallel behaviour, bad input): doc/filters/TreeGravity.md,
 * generated from Plugin/TreeGravity.xml.
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
