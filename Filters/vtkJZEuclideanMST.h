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
 * by exactly one rank. See the README section "Euclidean Minimum Spanning
 * Tree".
 */
#ifndef vtkJZEuclideanMST_h
#define vtkJZEuclideanMST_h

#include "JZTreeFiltersModule.h"
#include "vtkPointSetAlgorithm.h"

class JZTREEFILTERS_EXPORT vtkJZEuclideanMST : public vtkPointSetAlgorithm
{
public:
  static vtkJZEuclideanMST* New();
  vtkTypeMacro(vtkJZEuclideanMST, vtkPointSetAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum MetricType
  {
    EUCLIDEAN = 0,
    MUTUAL_REACHABILITY = 1
  };

  vtkSetClampMacro(Metric, int, EUCLIDEAN, MUTUAL_REACHABILITY);
  vtkGetMacro(Metric, int);

  /// Core distance = distance to the MinSamples-th nearest other point.
  vtkSetMacro(MinSamples, int);
  vtkGetMacro(MinSamples, int);

  vtkSetMacro(Periodic, vtkTypeBool);
  vtkGetMacro(Periodic, vtkTypeBool);
  vtkBooleanMacro(Periodic, vtkTypeBool);

  vtkSetVector6Macro(BoxBounds, double);
  vtkGetVector6Macro(BoxBounds, double);

  /// With Periodic: take the box from the Input's field data `BoxSize`.
  vtkSetMacro(BoxFromData, vtkTypeBool);
  vtkGetMacro(BoxFromData, vtkTypeBool);
  vtkBooleanMacro(BoxFromData, vtkTypeBool);

  /// 0 = Auto, 1 = CPU, 2 = CUDA (as jz::Backend).
  vtkSetClampMacro(Device, int, 0, 2);
  vtkGetMacro(Device, int);

protected:
  vtkJZEuclideanMST();
  ~vtkJZEuclideanMST() override = default;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int Metric = EUCLIDEAN;
  int MinSamples = 5;
  vtkTypeBool Periodic = false;
  double BoxBounds[6] = { 0, 1, 0, 1, 0, 1 };
  vtkTypeBool BoxFromData = true;
  int Device = 0;

private:
  vtkJZEuclideanMST(const vtkJZEuclideanMST&) = delete;
  void operator=(const vtkJZEuclideanMST&) = delete;
};

#endif
