/**
 * @file   vtkJZSnapshotSeries.h
 * @brief  The time steps of the snapshot reader: file names -> snapshots -> times.
 *
 * The reader's file names (one, or a numbered series as ParaView's file
 * dialog groups them) become one step per distinct snapshot: the parts of
 * one multi-file snapshot count once. The steps are ordered by the headers'
 * `Time`; when a file has no `Time`, or two snapshots have the same one, the
 * steps keep the given order and their times are 0, 1, 2, ...
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotSeries_h
#define vtkJZSnapshotSeries_h

#include <cstddef>
#include <string>
#include <vector>

class vtkJZSnapshotSeries
{
public:
  struct Step
  {
    std::string File; // a file of the snapshot (any part)
    double Time = 0;
  };

  /// Reads the headers of `fileNames`; throws vtkJZSnapshotHDF5::Error
  /// naming a file that cannot be opened or is not a snapshot.
  void Build(const std::vector<std::string>& fileNames);

  const std::vector<Step>& GetSteps() const { return this->Steps; }

  /// Whether the step times are the headers' Time values (else 0, 1, ...).
  bool GetTimesFromHeaders() const { return this->TimesFromHeaders; }

  /// The step to show at `time`: the last one not after it (the first
  /// before all of them).
  std::size_t StepAt(double time) const;

private:
  std::vector<Step> Steps;
  bool TimesFromHeaders = false;
};

#endif
// VTK-HeaderTest-Exclude: vtkJZSnapshotSeries.h
