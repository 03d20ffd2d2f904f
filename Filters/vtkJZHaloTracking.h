/**
 * @class   vtkJZHaloTracking
 * @brief   FoF halos followed through the time steps of a particle series
 *
 * The Input is a time series whose points carry GlobalIds (persistent
 * particle ids) and GroupId (FriendsOfFriends' port 0). The filter asks
 * upstream for every time step itself (REQUEST_UPDATE_EXTENT with
 * UPDATE_TIME_STEP, CONTINUE_EXECUTING in RequestData, as ParaView's
 * temporal filters do), keeps only the (id, GroupId, mass) of group members
 * per step, and links consecutive steps by shared ids (jz/HaloTracking.h).
 * The cache holds while the input's pipeline (its MTime), its time steps
 * and MassArray are unchanged: moving through time then costs only the
 * requested step's own update, and a change of MinimumShared only relinks
 * the cached members.
 *
 * Output port 0: the particles at the requested time with TrackId (-1 where
 * GroupId is -1). Port 1: the merger tree (vtkTable: TimeStep, Time,
 * GroupId, TrackId, Count, Mass, DescendantGroupId, SharedWithDescendant,
 * IsMainProgenitor). Port 2: the history of track SelectedTrackId along its
 * main branch (vtkTable: Time, Mass, Count). Under MPI the tables are
 * complete on rank 0 and empty elsewhere. User documentation:
 * doc/filters/HaloTracking.md.
 */
#ifndef vtkJZHaloTracking_h
#define vtkJZHaloTracking_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkDataObjectAlgorithm.h"

class JZTREEFILTERS_EXPORT vtkJZHaloTracking : public vtkDataObjectAlgorithm
{
public:
  static vtkJZHaloTracking* New();
  vtkTypeMacro(vtkJZHaloTracking, vtkDataObjectAlgorithm);
  void PrintSelf(ostream& os, vtkIndent indent) override;

  /// A link needs at least this many shared particles (default 1).
  vtkSetMacro(MinimumShared, int);
  vtkGetMacro(MinimumShared, int);

  /// The track of output port 2; -1 (default): the most massive group's
  /// track at the last time step with groups.
  vtkSetMacro(SelectedTrackId, int);
  vtkGetMacro(SelectedTrackId, int);

protected:
  vtkJZHaloTracking();
  ~vtkJZHaloTracking() override;

  int FillInputPortInformation(int port, vtkInformation* info) override;
  int FillOutputPortInformation(int port, vtkInformation* info) override;
  int RequestDataObject(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestUpdateExtent(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;
  int RequestData(vtkInformation*, vtkInformationVector**, vtkInformationVector*) override;

  int MinimumShared = 1;
  int SelectedTrackId = -1;

private:
  vtkJZHaloTracking(const vtkJZHaloTracking&) = delete;
  void operator=(const vtkJZHaloTracking&) = delete;

  class vtkInternals;
  vtkInternals* Internals;
};

#endif
