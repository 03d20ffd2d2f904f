/**
 * @class   vtkJZKNNDensity
 * @brief   exact k-nearest-neighbour density of a particle set (jz-tree)
 *
 * For every query point, finds the K nearest Input points exactly (the
 * jz-tree dual walk of the jz kernels, on the CPU or a CUDA GPU) and reduces
 * them to a smoothing length h (distance to the K-th neighbour) and a
 * density, with either the SPH cubic spline (M4) kernel of compact support h
 *
 *   rho_i = sum_j m_j W(r_ij, h_i),
 *   W(r, h) = 8/(pi h^3) * { 1 - 6q^2 + 6q^3 (q <= 1/2); 2(1-q)^3 (q <= 1); 0 }, q = r/h
 *
 * or the top hat  rho_i = sum_j m_j / (4/3 pi h_i^3).
 *
 * Port 0 ("Input") holds the particles, any vtkPointSet. The optional port 1
 * ("Query") takes any vtkDataSet whose points are evaluated against the
 * particles (e.g. a vtkImageData grid for volume rendering); without it the
 * particles query themselves and each is its own first neighbour.
 *
 * Composite inputs (multiblock, partitioned) are searched as one particle set:
 * the points of all blocks are concatenated in traversal order, so a block's
 * neighbours may lie in other blocks; results go back to each block.
 *
 * The output is a shallow copy of the Query (when connected) or of the Input,
 * of the same data type, with point arrays `SmoothingLength` and `Density`,
 * optionally `NeighborIds` (vtkIdTypeArray, K components, nearest first; the
 * Input's GlobalIds when present, else point indices) and `NeighborDistances`,
 * and a field-data string array `JZDevice` naming the backend that ran
 * ("CPU" or "CUDA").
 *
 * Precision: the search runs in the precision of the points, so distances are
 * exact for float or double particles. With float particles and a Query whose
 * points are not float (an image grid's points are double), both are
 * promoted to double (exactly) rather than rounding the query points to
 * float; the output arrays then are double. Otherwise float points give float
 * arrays and double points double arrays.
 *
 * Errors (vtkErrorMacro, empty output): non-finite coordinates, K < 1, K
 * larger than the number of Input points, a mass array with the wrong number
 * of tuples or components, a non-positive periodic box, an unusable Device.
 * An empty Input gives an empty output without error.
 *
 * Parallel runs (pvbatch/pvserver with MPI): each rank passes its own pieces;
 * the results equal a serial run of all ranks' points together (NeighborIds
 * are global ids: the GlobalIds point array, else the index in the
 * concatenation of the ranks' points in rank order) and stay on the point's
 * rank and piece. An error on any rank fails the filter on every rank.
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

  /**
   * The particle masses are the input array to process 0 (a point array,
   * one component). With no array selected, or with the name empty or
   * "None" and no such array present, every particle has unit mass.
   */

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
