/**
 * @class   vtkJZParticleAlgorithm
 * @brief   base of the tree filters that take only particles
 *
 * Port 0 ("Input") takes the particles: a vtkPointSet, or a composite data
 * set whose blocks form one particle set. Output port 0 has the Input's type
 * (the particles with the filter's point arrays); any further output port is
 * a vtkPolyData (FriendsOfFriends' catalogue, EuclideanMST's edges). The
 * properties every such filter has live here: the periodic box (Periodic,
 * BoxBounds, BoxFromData; see vtkJZPeriodicBox) and Device. RequestData
 * empties every output (no partial result is ever left behind); subclasses
 * (vtkJZFriendsOfFriends, vtkJZEuclideanMST, vtkJZHDBSCAN) set their number
 * of output ports and write RunParticles.
 */
#ifndef vtkJZParticleAlgorithm_h
#define vtkJZParticleAlgorithm_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZDevice.h"         // for the Device values
#include "vtkPointSetAlgorithm.h"

#ifndef __VTK_WRAP__
#include <string> // for CheckAndReadParticles
#include <vector> // for RunParticles
namespace vtkJZKernelAdapter
{
struct ParticleInput;
}
#endif

class JZTREEFILTERS_EXPORT vtkJZParticleAlgorithm : public vtkPointSetAlgorithm
{
public:
  vtkTypeMacro(vtkJZParticleAlgorithm, vtkPointSetAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /**
   * Periodic box: nearest-image distances in BoxBounds, points outside are
   * wrapped in (default off).
   */
  vtkSetMacro(Periodic, bool);
  vtkGetMacro(Periodic, bool);
  vtkBooleanMacro(Periodic, bool);
  ///@}

  ///@{
  /**
   * The periodic box (xmin, xmax, ymin, ymax, zmin, zmax), used when
   * Periodic is on; default unit box.
   */
  vtkSetVector6Macro(BoxBounds, double);
  vtkGetVector6Macro(BoxBounds, double);
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

  ///@{
  /**
   * Where to run: vtkJZDevice::DEVICE_AUTO (default), DEVICE_CPU or
   * DEVICE_CUDA.
   */
  vtkSetMacro(Device, int);
  vtkGetMacro(Device, int);
  ///@}

protected:
  vtkJZParticleAlgorithm();
  ~vtkJZParticleAlgorithm() override = default;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

#ifndef __VTK_WRAP__
  /**
   * The filter's work once every output is empty; outputs[p] is the data
   * object of output port p (port 1 and above: vtkPolyData). Returns
   * RequestData's result.
   */
  virtual int RunParticles(vtkDataObject* input, const std::vector<vtkDataObject*>& outputs) = 0;

  /**
   * Collective. Reads the Input's points and global ids with this filter's
   * periodic box (vtkJZKernelAdapter::ReadParticleInput); false after
   * reporting the error.
   */
  bool ReadParticles(vtkDataObject* input, vtkJZKernelAdapter::ParticleInput& in);

  /**
   * Collective. ReadParticles after the filter's own checks: false after
   * reporting `error` (when not empty; then nothing is read) or the input's.
   */
  bool CheckAndReadParticles(
    const std::string& error, vtkDataObject* input, vtkJZKernelAdapter::ParticleInput& in);
#endif

  bool Periodic = false;
  double BoxBounds[6] = { 0, 1, 0, 1, 0, 1 };
  bool BoxFromData = true;
  int Device = vtkJZDevice::DEVICE_AUTO;

private:
  vtkJZParticleAlgorithm(const vtkJZParticleAlgorithm&) = delete;
  void operator=(const vtkJZParticleAlgorithm&) = delete;
};

#endif
