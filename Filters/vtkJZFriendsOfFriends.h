/**
 * @class   vtkJZFriendsOfFriends
 * @brief   friends-of-friends halo finder on particles (jz-tree)
 *
 * Groups particles into friends-of-friends (FoF) groups: two particles are
 * friends when their distance is at most the linking length (d <= l; the
 * nearest periodic image when Periodic is on), and a group is a connected
 * component of the friendship graph. Exact: the partition equals that of an
 * all-pairs search, with distances evaluated in double from the input
 * coordinates (float or double points). Runs the jz-tree dual tree walk of
 * the jz kernels on the CPU (multi-threaded) or a CUDA GPU.
 *
 * The linking length is LinkingLength itself (Absolute mode) or, in Relative
 * mode (default), LinkingLength times the mean interparticle separation
 * (V/N)^(1/3), V the periodic box volume when Periodic is on, else the volume
 * of the Input's bounding box.
 *
 * Output port 0: a shallow copy of the Input with point arrays
 *  - `GroupId` (vtkIdTypeArray): 0..G-1 for the groups of at least
 *    MinimumGroupSize members, numbered by descending size with ties broken by
 *    the smallest global point id in the group (the Input's GlobalIds when
 *    present, else the point index); -1 for particles in smaller groups.
 *  - `GroupSize` (vtkIdTypeArray): the size of the particle's group (any size).
 * Output port 1: the halo catalogue, a vtkPolyData with one vertex per kept
 * group, placed at its centre of mass, and point arrays `GroupId`, `Count`,
 * `Mass`, `CenterOfMass` (periodic-aware: members unwrapped around a member
 * before averaging, the result wrapped back into the box), `InertiaRadius`
 * (mass-weighted rms distance from the centre of mass) and, with a velocity
 * array, `MeanVelocity` (mass-weighted) and `VelocityDispersion` (the
 * one-dimensional mass-weighted dispersion sqrt(sum m |v - v_mean|^2 / (3 M))).
 * All sums are accumulated in double. Both outputs carry the field-data
 * string array `JZDevice` naming what ran.
 *
 * Catalogue additions (README, "Halo catalogue additions"): with
 * PotentialCentres, `CentreOfPotential` (the member with the lowest
 * potential due to the group's own members, Plummer Softening, G) and
 * `MostBoundId` (its global id); with SphericalOverdensity, `SORadius`,
 * `SOMass` and `SOCount` around that centre (else the centre of mass) over
 * all Input particles: the largest k with M_j / (4/3 pi r_j^3) >= Delta
 * rho_ref for every j <= k (distances sorted, equal distances together),
 * rho_ref the mean (total mass / periodic box volume) or CriticalDensity.
 *
 * Errors (vtkErrorMacro, empty outputs): non-finite coordinates, a
 * non-positive or non-finite linking length (also a degenerate bounding box
 * in Relative mode), a non-positive periodic box, mass or velocity arrays
 * with the wrong number of tuples or components, Device CUDA without a usable
 * GPU. Empty Input: empty outputs.
 *
 * Periodic, BoxBounds, BoxFromData and Device: see vtkJZParticleAlgorithm.
 *
 * Composite inputs (multiblock, partitioned) are one particle set; port 0
 * keeps their structure. Parallel runs (pvbatch/pvserver with MPI): each rank
 * passes its own pieces; GroupId and GroupSize equal those of a serial run of
 * all ranks' points together (global ids: the GlobalIds point array, else the
 * index in the concatenation of the ranks' points in rank order) and stay on
 * the point's rank and piece; the catalogue on each rank holds the rows (the
 * groups) that rank owns, every row on exactly one rank. An error on any rank
 * fails the filter on every rank.
 *
 * @sa vtkEuclideanClusterExtraction vtkJZKNNDensity
 */
#ifndef vtkJZFriendsOfFriends_h
#define vtkJZFriendsOfFriends_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkJZParticleAlgorithm.h"

#include <string> // for HaloOptionsError

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

private:
  vtkJZFriendsOfFriends(const vtkJZFriendsOfFriends&) = delete;
  void operator=(const vtkJZFriendsOfFriends&) = delete;

  // Why the catalogue additions' properties are unusable, or empty.
  std::string HaloOptionsError() const;

  // The name of the selected array idx; null when none is selected.
  const char* GetSelectedArrayName(int idx, vtkDataObject* input);
};

#endif
