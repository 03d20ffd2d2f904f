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
 * are requested. The Device property lives here too. RequestData empties
 * the output and reads the pieces of both inputs (vtkJZParticleInput.h);
 * subclasses (vtkJZKNNDensity, vtkJZTreeGravity) write only RunQuery.
 */
#ifndef vtkJZQueryPointsAlgorithm_h
#define vtkJZQueryPointsAlgorithm_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkDataObjectAlgorithm.h"
#include "vtkJZDevice.h" // for the Device values

#ifndef __VTK_WRAP__
namespace vtkJZKernelAdapter
{
struct ParticleInput;
}
#endif

class JZTREEFILTERS_EXPORT vtkJZQueryPointsAlgorithm : public vtkDataObjectAlgorithm
{
public:
  vtkTypeMacro(vtkJZQueryPointsAlgorithm, vtkDataObjectAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /**
   * Convenience for the optional Query input (port 1).
   */
  void SetQueryConnection(vtkAlgorithmOutput* output);
  void SetQueryData(vtkDataObject* data);
  ///@}

  ///@{
  /**
   * Where to run: vtkJZDevice::DEVICE_AUTO (default), DEVICE_CPU or
   * DEVICE_CUDA.
   */
  vtkSetMacro(Device, int);
  vtkGetMacro(Device, int);
  ///@}

  /**
   * The particle masses are the input array to process 0 (a point array,
   * one component). With no array selected, or with the name empty or
   * "None" and no such array present, every particle has unit mass.
   */

protected:
  vtkJZQueryPointsAlgorithm();
  ~vtkJZQueryPointsAlgorithm() override = default;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

#ifndef __VTK_WRAP__
  /**
   * The filter's work once `output` is empty and `in` holds the pieces and
   * global counts of the Input and the Query (`query` null when none is
   * connected); returns RequestData's result.
   */
  virtual int RunQuery(vtkDataObject* input, vtkDataObject* query, vtkDataObject* output,
    vtkJZKernelAdapter::ParticleInput& in) = 0;
#endif

  /**
   * The name of the mass array selected for `input` (input array 0), or
   * nullptr for unit masses.
   */
  const char* SelectedMassArray(vtkDataObject* input);

  int Device = vtkJZDevice::DEVICE_AUTO;

private:
  vtkJZQueryPointsAlgorithm(const vtkJZQueryPointsAlgorithm&) = delete;
  void operator=(const vtkJZQueryPointsAlgorithm&) = delete;
};

#endif
