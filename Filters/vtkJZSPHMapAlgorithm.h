/**
 * @class   vtkJZSPHMapAlgorithm
 * @brief   base of the SPH maps: particles in, a vtkImageData out
 *
 * The properties SPHProjection, SPHSlice and SPHVolume share (smoothing
 * lengths from an array or the kNN, masses, densities, the mapped arrays,
 * the kernel, the region and resolution, the periodic box, Device) and the
 * run: h and rho (jz/Knn.h, jz/SphMaps.h), each rank's deposit
 * (jz::depositSphMap), the sums reduced over the ranks, the image (or the
 * requested extent of it) written in place in 3-D. User documentation:
 * doc/filters/SPHProjection.md, SPHSlice.md, SPHVolume.md.
 */
#ifndef vtkJZSPHMapAlgorithm_h
#define vtkJZSPHMapAlgorithm_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZParticleAlgorithm.h"

#ifndef __VTK_WRAP__
#include <string> // for PointArrays
#include <vector> // for PointArrays
#endif

class JZTREEFILTERS_EXPORT vtkJZSPHMapAlgorithm : public vtkJZParticleAlgorithm
{
public:
  vtkTypeMacro(vtkJZSPHMapAlgorithm, vtkJZParticleAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum Kernels
  {
    CUBIC_SPLINE = 0,
    WENDLAND_C2 = 1
  };

  /// K of the kNN smoothing lengths when no SmoothingLengthArray is selected (default 32).
  vtkSetMacro(NumberOfNeighbors, int);
  vtkGetMacro(NumberOfNeighbors, int);

  /// CUBIC_SPLINE (default) or WENDLAND_C2, both of compact support h.
  vtkSetMacro(Kernel, int);
  vtkGetMacro(Kernel, int);

  /// The array's h times this is the kernel's support radius (default 1).
  vtkSetMacro(SmoothingLengthScale, double);
  vtkGetMacro(SmoothingLengthScale, double);

  /// Line of sight or slice normal: 0 = X, 1 = Y, 2 = Z (default).
  vtkSetMacro(Axis, int);
  vtkGetMacro(Axis, int);

  /// The slice plane's coordinate along Axis.
  vtkSetMacro(SlicePosition, double);
  vtkGetMacro(SlicePosition, double);

  /// Cells along the image's first and second axes (and z for a volume).
  vtkSetVector3Macro(Resolution, int);
  vtkGetVector3Macro(Resolution, int);
  void SetResolution(int nu, int nv) { this->SetResolution(nu, nv, this->Resolution[2]); }

  /// xmin xmax ymin ymax zmin zmax, half-open; all zeros: from the data.
  vtkSetVector6Macro(Region, double);
  vtkGetVector6Macro(Region, double);

  ///@{
  /// The point arrays to map (any number of components).
  void AddPointArray(const char* name);
  void ClearPointArrays();
  ///@}

  ///@{
  /**
   * The point arrays (one component) of the smoothing lengths and of the
   * densities; empty or "None": kNN smoothing lengths, computed densities.
   * The masses are the input array to process 0 (none: unit masses). The
   * five-argument forms take an array selection as SetInputArrayToProcess
   * does (only the name is used).
   */
  void SetSmoothingLengthArray(const char* name);
  void SetDensityArray(const char* name);
  void SetSmoothingLengthArraySelection(int, int, int, int, const char* name)
  {
    this->SetSmoothingLengthArray(name);
  }
  void SetDensityArraySelection(int, int, int, int, const char* name)
  {
    this->SetDensityArray(name);
  }
  ///@}

protected:
  vtkJZSPHMapAlgorithm();
  ~vtkJZSPHMapAlgorithm() override = default;

  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int ExecuteInformation(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int ComputeInputUpdateExtent(
    vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

#ifndef __VTK_WRAP__
  int RunParticles(vtkDataObject* input, const std::vector<vtkDataObject*>& outputs) override;
  /// 0 projection, 1 slice, 2 volume (jz::SphMapKind).
  int MapKind = 0;
  const char* FilterName = "SPHProjection";
  std::vector<std::string> PointArrays;
  std::string SmoothingLengthArray;
  std::string DensityArray;
  int UpdateExtent[6] = { 0, -1, 0, -1, 0, -1 };
#endif

  int NumberOfNeighbors = 32;
  int Kernel = CUBIC_SPLINE;
  double SmoothingLengthScale = 1.0;
  int Axis = 2;
  double SlicePosition = 0.0;
  int Resolution[3] = { 512, 512, 1 };
  double Region[6] = { 0, 0, 0, 0, 0, 0 };

private:
  vtkJZSPHMapAlgorithm(const vtkJZSPHMapAlgorithm&) = delete;
  void operator=(const vtkJZSPHMapAlgorithm&) = delete;
};

#endif
