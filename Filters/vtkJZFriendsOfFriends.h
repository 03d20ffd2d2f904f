/**
 * @class   vtkJZFriendsOfFriends
 * @brief   friends-of-friends halo finder on particles (jz-tree)
 *
 * Exact friends-of-friends groups (jz/Fof.h on the CPU or a CUDA GPU;
 * jz/Distributed.h under MPI): port 0 the particles with `GroupId` and
 * `GroupSize`, port 1 the halo catalogue (all sums in double), with the
 * additions of jz/HaloProperties.h (centres of potential, spherical
 * overdensity). On one process the groups at a new LinkingLength are a cut
 * of the cached tree (vtkJZFofTreeCache). On an Input with time steps the
 * results of each step are kept (vtkJZFofResultCache), so that showing a
 * step again at the same properties reuses them. Periodic, BoxBounds, BoxFromData
 * and Device: see vtkJZParticleAlgorithm. User documentation (outputs,
 * definitions, ties, parallel behaviour, bad input):
 * doc/filters/FriendsOfFriends.md, generated from Plugin/FriendsOfFriends.xml.
 *
 * @sa vtkEuclideanClusterExtraction vtkJZKNNDensity
 */
#ifndef vtkJZFriendsOfFriends_h
#define vtkJZFriendsOfFriends_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZParticleAlgorithm.h"

#include <string> // for HaloOptionsError

class vtkJZFofResultCache;
class vtkJZFofTreeCache;

class JZTREEFILTERS_EXPORT vtkJZFriendsOfFriends : public vtkJZParticleAlgorithm
{
public:
  static vtkJZFriendsOfFriends* New();
  vtkTypeMacro(vtkJZFriendsOfFriends, vtkJZParticleAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  enum LinkingLengthModes
  {
    RELATIVE = 0, // LinkingLength * (V/N)^(1/3)
    ABSOLUTE = 1
  };

  ///@{
  /**
   * How LinkingLength is read: RELATIVE (default; b times the mean
   * interparticle separation) or ABSOLUTE (a length).
   */
  vtkSetMacro(LinkingLengthMode, int);
  vtkGetMacro(LinkingLengthMode, int);
  ///@}

  ///@{
  /**
   * The linking length b (Relative) or l (Absolute); default 0.2.
   */
  vtkSetMacro(LinkingLength, double);
  vtkGetMacro(LinkingLength, double);
  ///@}

  ///@{
  /**
   * Groups with fewer members get GroupId -1 and no catalogue entry
   * (default 20).
   */
  vtkSetMacro(MinimumGroupSize, vtkIdType);
  vtkGetMacro(MinimumGroupSize, vtkIdType);
  ///@}

  enum OverdensityReferences
  {
    MEAN_DENSITY = 0,    // total Input mass / periodic box volume (needs Periodic)
    CRITICAL_DENSITY = 1 // CriticalDensity
  };

  ///@{
  /**
   * Catalogue centres of potential: CentreOfPotential and MostBoundId
   * (default off), with Plummer Softening (>= 0, default 0) and
   * GravitationalConstant (> 0, default 1).
   */
  vtkSetMacro(PotentialCentres, bool);
  vtkGetMacro(PotentialCentres, bool);
  vtkBooleanMacro(PotentialCentres, bool);
  vtkSetMacro(Softening, double);
  vtkGetMacro(Softening, double);
  vtkSetMacro(GravitationalConstant, double);
  vtkGetMacro(GravitationalConstant, double);
  ///@}

  ///@{
  /**
   * Spherical-overdensity radius, mass and count (default off) at
   * Overdensity Delta (default 200) times the reference density:
   * MEAN_DENSITY (default) or CRITICAL_DENSITY (CriticalDensity, in the
   * data's mass / length^3 units, default 1).
   */
  vtkSetMacro(SphericalOverdensity, bool);
  vtkGetMacro(SphericalOverdensity, bool);
  vtkBooleanMacro(SphericalOverdensity, bool);
  vtkSetMacro(Overdensity, double);
  vtkGetMacro(Overdensity, double);
  vtkSetMacro(OverdensityReference, int);
  vtkGetMacro(OverdensityReference, int);
  vtkSetMacro(CriticalDensity, double);
  vtkGetMacro(CriticalDensity, double);
  ///@}

  /**
   * Input array 0 is the mass array (one component; none = unit masses) and
   * input array 1 the velocity array (three components; none = no velocity
   * statistics). A name of "None" (or empty) selects none.
   */

  /**
   * Each execution that gets to the groups sets the progress text
   * (GetProgressText, shown by ParaView's progress bar) to
   * ComputingProgressText or, when it reuses the cached result of the same
   * time step (vtkJZFofResultCache), to ReusingProgressText; other
   * executions (bad or empty input) leave it empty. Tests count real FoF
   * computations by it.
   */
  static constexpr const char* ComputingProgressText = "Friends of friends: computing the groups";
  static constexpr const char* ReusingProgressText =
    "Friends of friends: reusing the groups of this time step";

protected:
  vtkJZFriendsOfFriends();
  ~vtkJZFriendsOfFriends() override;

#ifndef __VTK_WRAP__
  int RunParticles(vtkDataObject* input, const std::vector<vtkDataObject*>& outputs) override;
#endif

  int LinkingLengthMode = RELATIVE;
  double LinkingLength = 0.2;
  vtkIdType MinimumGroupSize = 20;
  bool PotentialCentres = false;
  double Softening = 0;
  double GravitationalConstant = 1;
  bool SphericalOverdensity = false;
  double Overdensity = 200;
  int OverdensityReference = MEAN_DENSITY;
  double CriticalDensity = 1;

  // The minimum spanning tree cached for new linking lengths (vtkJZFofTreeCache.h).
  vtkJZFofTreeCache* TreeCache = nullptr;
  // The outputs of the time steps computed at the current properties
  // (vtkJZFofResultCache.h).
  vtkJZFofResultCache* ResultCache = nullptr;

private:
  vtkJZFriendsOfFriends(const vtkJZFriendsOfFriends&) = delete;
  void operator=(const vtkJZFriendsOfFriends&) = delete;

  // Why the catalogue additions' properties are unusable, or empty.
  std::string HaloOptionsError() const;

  // The name of the selected array idx; null when none is selected.
  const char* GetSelectedArrayName(int idx, vtkDataObject* input);
};

#endif
