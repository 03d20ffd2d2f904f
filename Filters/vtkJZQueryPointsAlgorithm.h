/**
 * @class   vtkJZQueryPointsAlgorithm
 * @brief   base of the filters that evaluate particles at query points
 *
 * Port 0 ("Input") takes the particles (a vtkPointSet, or a composite data
 * set whose blocks form one particle set); the optional port 1 ("Query")
 * takes any vtkDataSet whose points are evaluated against them. The output
 * has the type of the Query when one is connected, else of the Input, and a
 * structured Query decides its extent. Every query point may depend on any
 * particle, so the whole Input and the whole extent of a structured Query
 * are requested. Subclasses (vtkJZKNNDensity, vtkJZTreeGravity) write only
 * RequestData.
 */
#ifndef vtkJZQueryPointsAlgorithm_h
#define vtkJZQueryPointsAlgorithm_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkDataObjectAlgorithm.h"

class JZTREEFILTERS_EXPORT vtkJZQueryPointsAlgorithm : public vtkDataObjectAlgorithm
{
public:
  vtkTypeMacro(vtkJZQueryPointsAlgorithm, vtkDataObjectAlgorithm);

  ///@{
  /**
   * Convenience for the optional Query input (port 1).
   */
  void SetQueryConnection(vtkAlgorithmOutput* output);
  void SetQueryData(vtkDataObject* data);
  ///@}

protected:
  vtkJZQueryPointsAlgorithm();
  ~vtkJZQueryPointsAlgorithm() override = default;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

private:
  vtkJZQueryPointsAlgorithm(const vtkJZQueryPointsAlgorithm&) = delete;
  void operator=(const vtkJZQueryPointsAlgorithm&) = delete;
};

#endif
