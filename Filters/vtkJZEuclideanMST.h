/**
 * @class   vtkJZEuclideanMST
 * @brief   Euclidean minimum spanning tree of a particle set on the jz-tree.
 *
 * Borůvka rounds on the z-order tree planes (jz/Emst.h). Metric "Euclidean"
 * or "Mutual Reachability" (HDBSCAN*'s max(core(a), core(b), |a - b|) with
 * core = distance to the MinSamples-th nearest other point). Output port 0:
 * the particles (plus `CoreDistance` in mutual-reachability mode); port 1
 * ("Edges"): one line cell per tree edge, each with its own two points (the
 * second at its nearest image when periodic), cell arrays `Length` and
 * `EndpointIds` (global ids, smaller first). Under MPI every edge is output
 * by exactly one rank. User documentation: doc/filters/EuclideanMST.md.
 */
#ifndef vtkJZEuclideanMST_h
#define vtkJZEuclideanMST_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZParticleAlgorithm.h"

class JZTREEFILTERS_EXPORT vtkJZEuclideanMST : public vtkJZParticleAlgorithm
{
public:
  static vtkJZEuclideanMST* New();
  vtkTypeMacro(vtkJZEuclideanMST, vtkJZParticleAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum MetricType
  {
    EUCLIDEAN = 0,
    MUTUAL_REACHABILITY = 1
  };

  vtkSetMacro(Metric, int);
  vtkGetMacro(Metric, int);

  /// Core distance = distance to the MinSamples-th nearest other point.
  vtkSetMacro(MinSamples, int);
  vtkGetMacro(MinSamples, int);

protected:
  vtkJZEuclideanMST();
  ~vtkJZEuclideanMST() override = default;

#ifndef __VTK_WRAP__
  int RunParticles(vtkDataObject* input, const std::vector<vtkDataObject*>& outputs) override;
#endif

  int Metric = EUCLIDEAN;
  int MinSamples = 5;

private:
  vtkJZEuclideanMST(const vtkJZEuclideanMST&) = delete;
  void operator=(const vtkJZEuclideanMST&) = delete;
};

#endif
