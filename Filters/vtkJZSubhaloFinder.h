/**
 * @class   vtkJZSubhaloFinder
 * @brief   bound substructure inside friends-of-friends groups (SUBFIND-style)
 *
 * Thin wrapper over jz/Subhalo.h: the Input's particles with a `GroupId`
 * point array (FriendsOfFriends' port 0), masses and velocities; port 0 the
 * particles with `SubhaloId` and `SubhaloRank`, port 1 the subhalo catalogue
 * (one vertex per subhalo at its centre of potential). Periodic, BoxBounds,
 * BoxFromData and Device: see vtkJZParticleAlgorithm. User documentation:
 * doc/filters/SubhaloFinder.md, generated from Plugin/SubhaloFinder.xml.
 *
 * @sa vtkJZFriendsOfFriends
 */
#ifndef vtkJZSubhaloFinder_h
#define vtkJZSubhaloFinder_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZParticleAlgorithm.h"

class JZTREEFILTERS_EXPORT vtkJZSubhaloFinder : public vtkJZParticleAlgorithm
{
public:
  static vtkJZSubhaloFinder* New();
  vtkTypeMacro(vtkJZSubhaloFinder, vtkJZParticleAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  ///@{
  /**
   * K of the SPH density that orders the particles (default 32).
   */
  vtkSetMacro(DensityNeighbors, int);
  vtkGetMacro(DensityNeighbors, int);
  ///@}

  ///@{
  /**
   * Nearest group members searched for denser neighbours (default 20).
   */
  vtkSetMacro(SaddleNeighbors, int);
  vtkGetMacro(SaddleNeighbors, int);
  ///@}

  ///@{
  /**
   * Fewest bound members of a subhalo (default 20).
   */
  vtkSetMacro(MinimumSubhaloSize, vtkIdType);
  vtkGetMacro(MinimumSubhaloSize, vtkIdType);
  ///@}

  ///@{
  /**
   * The unbinding potential: Plummer Softening (default 0),
   * GravitationalConstant (default 1) and OpeningAngle (default 0.5; 0 =
   * direct summation).
   */
  vtkSetMacro(Softening, double);
  vtkGetMacro(Softening, double);
  vtkSetMacro(GravitationalConstant, double);
  vtkGetMacro(GravitationalConstant, double);
  vtkSetMacro(OpeningAngle, double);
  vtkGetMacro(OpeningAngle, double);
  ///@}

  /**
   * Input array 0 is the mass array (one component; none = unit masses) and
   * input array 1 the velocity array (three components; required).
   */

protected:
  vtkJZSubhaloFinder();
  ~vtkJZSubhaloFinder() override = default;

#ifndef __VTK_WRAP__
  int RunParticles(vtkDataObject* input, const std::vector<vtkDataObject*>& outputs) override;
#endif

  int DensityNeighbors = 32;
  int SaddleNeighbors = 20;
  vtkIdType MinimumSubhaloSize = 20;
  double Softening = 0;
  double GravitationalConstant = 1;
  double OpeningAngle = 0.5;

private:
  vtkJZSubhaloFinder(const vtkJZSubhaloFinder&) = delete;
  void operator=(const vtkJZSubhaloFinder&) = delete;
};

#endif
