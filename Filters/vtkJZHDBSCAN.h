/**
 * @class   vtkJZHDBSCAN
 * @brief   HDBSCAN* density clusters of a particle set (jz/Hdbscan.h).
 *
 * The mutual-reachability minimum spanning tree on the jz-tree, then the
 * condensed tree, cluster selection by excess of mass or leaf, membership
 * probabilities and GLOSH outlier scores, with the semantics of the hdbscan
 * library 0.8.33. Point outputs: `ClusterId` (-1 noise; 0..C-1 by descending
 * size, ties by the smallest global id), `Probability`, `OutlierScore` and
 * `CoreDistance`. User documentation: doc/filters/HDBSCAN.md.
 */
#ifndef vtkJZHDBSCAN_h
#define vtkJZHDBSCAN_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZParticleAlgorithm.h"

class JZTREEFILTERS_EXPORT vtkJZHDBSCAN : public vtkJZParticleAlgorithm
{
public:
  static vtkJZHDBSCAN* New();
  vtkTypeMacro(vtkJZHDBSCAN, vtkJZParticleAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum SelectionMethod
  {
    EXCESS_OF_MASS = 0,
    LEAF = 1
  };

  vtkSetMacro(MinClusterSize, int);
  vtkGetMacro(MinClusterSize, int);
  /// 0 = MinClusterSize.
  vtkSetMacro(MinSamples, int);
  vtkGetMacro(MinSamples, int);
  vtkSetMacro(ClusterSelectionMethod, int);
  vtkGetMacro(ClusterSelectionMethod, int);
  vtkSetMacro(AllowSingleCluster, vtkTypeBool);
  vtkGetMacro(AllowSingleCluster, vtkTypeBool);
  vtkBooleanMacro(AllowSingleCluster, vtkTypeBool);

protected:
  vtkJZHDBSCAN() = default;
  ~vtkJZHDBSCAN() override = default;

#ifndef __VTK_WRAP__
  int RunParticles(vtkDataObject* input, const std::vector<vtkDataObject*>& outputs) override;
#endif

  int MinClusterSize = 20;
  int MinSamples = 0;
  int ClusterSelectionMethod = EXCESS_OF_MASS;
  vtkTypeBool AllowSingleCluster = false;

private:
  vtkJZHDBSCAN(const vtkJZHDBSCAN&) = delete;
  void operator=(const vtkJZHDBSCAN&) = delete;
};

#endif
