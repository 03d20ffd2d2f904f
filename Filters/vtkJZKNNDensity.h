/**
 * @class   vtkJZKNNDensity
 * @brief   exact k-nearest-neighbour density of a particle set (jz-tree)
 *
 * For every query point (the Input's, or the optional Query data set's on
 * port 1) the K nearest Input points, exactly (jz/Knn.h on the CPU or a CUDA
 * GPU; jz/Distributed.h under MPI), reduced to `SmoothingLength` and
 * `Density` (SPH cubic spline or top hat, jz/DensityKernels.h), optionally
 * `NeighborIds` and `NeighborDistances`. The search runs in the points'
 * precision; float particles with non-float query points run in double.
 * User documentation (outputs, definitions, ties, parallel behaviour, bad
 * input): doc/filters/KNNDensity.md, generated from Plugin/KNNDensity.xml.
 *
 * @sa vtkPointDensityFilter vtkStaticPointLocator
 */
#ifndef vtkJZKNNDensity_h
#define vtkJZKNNDensity_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZQueryPointsAlgorithm.h"

class JZTREEFILTERS_EXPORT vtkJZKNNDensity : public vtkJZQueryPointsAlgorithm
{
public:
  static vtkJZKNNDensity* New();
  vtkTypeMacro(vtkJZKNNDensity, vtkJZQueryPointsAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum Estimators
  {
    SPH_CUBIC_SPLINE = 0,
    TOP_HAT = 1
  };

  ///@{
  /**
   * Number of neighbours K, including the point itself for a self query
   * (default 32). Must be at least 1 and at most the number of Input points.
   */
  vtkSetMacro(NumberOfNeighbors, int);
  vtkGetMacro(NumberOfNeighbors, int);
  ///@}

  ///@{
  /**
   * Density estimator: SPH_CUBIC_SPLINE (default) or TOP_HAT.
   */
  vtkSetMacro(Estimator, int);
  vtkGetMacro(Estimator, int);
  ///@}

  ///@{
  /**
   * Periodic box: when on, distances use the nearest image in BoxBounds and
   * points outside the box are wrapped in (default off).
   */
  vtkSetMacro(Periodic, bool);
  vtkGetMacro(Periodic, bool);
  vtkBooleanMacro(Periodic, bool);
  ///@}

  ///@{
  /**
   * The periodic box (xmin, xmax, ymin, ymax, zmin, zmax), used when
   * Periodic is on. Every extent must be positive. Default (0,1,0,1,0,1).
   */
  vtkSetVector6Macro(BoxBounds, double);
  vtkGetVector6Macro(BoxBounds, double);
  ///@}

  ///@{
  /**
   * Also output the neighbour lists `NeighborIds` and `NeighborDistances`
   * (K components each, nearest first). Off by default: without them no
   * N x K array is ever allocated.
   */
  vtkSetMacro(OutputNeighbors, bool);
  vtkGetMacro(OutputNeighbors, bool);
  vtkBooleanMacro(OutputNeighbors, bool);
  ///@}

  ///@{
  /**
   * Take the periodic box from the Input's field-data array BoxSize (one
   * value L or three Lx Ly Lz; the box is then [0, L] on each axis) when
   * there is one, instead of BoxBounds (default on). See vtkJZPeriodicBox.
   */
  vtkSetMacro(BoxFromData, bool);
  vtkGetMacro(BoxFromData, bool);
  vtkBooleanMacro(BoxFromData, bool);
  ///@}

protected:
  vtkJZKNNDensity();
  ~vtkJZKNNDensity() override = default;

#ifndef __VTK_WRAP__
  int RunQuery(vtkDataObject* input, vtkDataObject* query, vtkDataObject* output,
    vtkJZKernelAdapter::ParticleInput& in) override;
#endif

  int NumberOfNeighbors = 32;
  int Estimator = SPH_CUBIC_SPLINE;
  bool Periodic = false;
  double BoxBounds[6] = { 0, 1, 0, 1, 0, 1 };
  bool BoxFromData = true;
  bool OutputNeighbors = false;

private:
  vtkJZKNNDensity(const vtkJZKNNDensity&) = delete;
  void operator=(const vtkJZKNNDensity&) = delete;
};

#endif
