#include "vtkJZSnapshotSeries.h"

#include "vtkJZSnapshotLayout.h"

#include <algorithm>
#include <cmath>
#include <set>

//------------------------------------------------------------------------------
void vtkJZSnapshotSeries::Build(const std::vector<std::string>& fileNames)
{
  this->Steps.clear();
  this->TimesFromHeaders = false;
  std::set<std::string> seen; // the first part of each snapshot
  bool allTimes = true;
  for (const std::string& name : fileNames)
  {
    double time = 0;
    bool hasTime = false;
    const std::string first = vtkJZSnapshotLayout::SeriesEntry(name, time, hasTime);
    allTimes = allTimes && hasTime;
    if (seen.insert(first).second)
    {
      this->Steps.push_back({ name, time });
    }
  }
  std::vector<Step> byTime = this->Steps;
  std::stable_sort(
    byTime.begin(), byTime.end(), [](const Step& a, const Step& b) { return a.Time < b.Time; });
  const bool distinct =
    std::adjacent_find(byTime.begin(), byTime.end(),
      [](const Step& a, const Step& b) { return !(a.Time < b.Time); }) == byTime.end();
  this->TimesFromHeaders = allTimes && distinct;
  if (this->TimesFromHeaders)
  {
    this->Steps = byTime;
    return;
  }
  for (std::size_t i = 0; i < this->Steps.size(); ++i)
  {
    this->Steps[i].Time = static_cast<double>(i);
  }
}

//------------------------------------------------------------------------------
std::size_t vtkJZSnapshotSeries::StepAt(double time) const
{
  std::size_t step = 0;
  for (std::size_t i = 0; i < this->Steps.size(); ++i)
  {
    const double t = this->Steps[i].Time;
    if (t <= time + 1e-12 * std::max(1.0, std::abs(t))) // time values as ParaView passes them back
    {
      step = i;
    }
  }
  return step;
}
