#include "vtkJZPeriodicBox.h"

#include "vtkJZKernelAdapter.h"

#include "vtkCompositeDataIterator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDataObject.h"
#include "vtkFieldData.h"
#include "vtkObjectFactory.h"
#include "vtkSmartPointer.h"

#include "jz/Communicator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

vtkStandardNewMacro(vtkJZPeriodicBox);

namespace
{
// -1 malformed, 0 none, 1 found.
int FromFieldData(vtkFieldData* fieldData, double box[6])
{
  vtkDataArray* array = fieldData ? fieldData->GetArray("BoxSize") : nullptr;
  if (!array)
  {
    return 0;
  }
  const vtkIdType count = array->GetNumberOfValues();
  std::vector<double> values(static_cast<std::size_t>(count));
  for (vtkIdType i = 0; i < count; ++i)
  {
    values[i] = array->GetComponent(
      i / array->GetNumberOfComponents(), static_cast<int>(i % array->GetNumberOfComponents()));
  }
  return vtkJZPeriodicBox::BoxFromSize(values.data(), static_cast<int>(count), box) ? 1 : -1;
}
}

//------------------------------------------------------------------------------
bool vtkJZPeriodicBox::BoxFromSize(const double* values, int count, double box[6])
{
  if (count != 1 && count != 3)
  {
    return false;
  }
  for (int d = 0; d < 3; ++d)
  {
    box[2 * d] = 0.0;
    box[2 * d + 1] = values[count == 1 ? 0 : d];
  }
  return true;
}

//------------------------------------------------------------------------------
int vtkJZPeriodicBox::BoxFromData(vtkDataObject* data, double box[6])
{
  if (!data)
  {
    return 0;
  }
  if (const int found = FromFieldData(data->GetFieldData(), box))
  {
    return found;
  }
  auto* composite = vtkCompositeDataSet::SafeDownCast(data);
  if (!composite)
  {
    return 0;
  }
  vtkSmartPointer<vtkCompositeDataIterator> it;
  it.TakeReference(composite->NewIterator());
  for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem())
  {
    vtkDataObject* leaf = it->GetCurrentDataObject();
    if (const int found = FromFieldData(leaf ? leaf->GetFieldData() : nullptr, box))
    {
      return found;
    }
  }
  return 0;
}

//------------------------------------------------------------------------------
std::string vtkJZPeriodicBox::Resolve(jz::Communicator& comm, vtkDataObject* input,
  bool boxFromData, const double boxBounds[6], double box[6])
{
  std::copy(boxBounds, boxBounds + 6, box);
  if (!boxFromData)
  {
    return vtkJZKernelAdapter::PeriodicBoxError(box);
  }
  // Each rank checks its own BoxSize; then the ranks agree on one box
  // through min and max over those that carry a BoxSize.
  double local[6];
  const int found = BoxFromData(input, local);
  std::string error;
  if (found < 0)
  {
    error = "The Input's field-data array BoxSize must hold 1 value (a cube) or 3 (Lx Ly Lz); "
            "switch BoxFromData off to use BoxBounds instead.";
  }
  for (int d = 0; d < 3 && found > 0 && error.empty(); ++d)
  {
    if (!(local[2 * d + 1] > 0) || !std::isfinite(local[2 * d + 1]))
    {
      std::ostringstream msg;
      msg << "The Input's field-data BoxSize gives the periodic box side " << local[2 * d + 1]
          << " along "
          << "xyz"[d] << "; it must be positive and finite (or switch BoxFromData off).";
      error = msg.str();
    }
  }
  error = vtkJZKernelAdapter::AgreeOnError(comm, error);
  if (!error.empty())
  {
    return error;
  }
  const double inf = std::numeric_limits<double>::infinity();
  std::int64_t carriers = found > 0 ? 1 : 0;
  double lo[6], hi[6];
  for (int i = 0; i < 6; ++i)
  {
    lo[i] = found > 0 ? local[i] : inf;
    hi[i] = found > 0 ? local[i] : -inf;
  }
  comm.allReduceSum(&carriers, 1);
  comm.allReduceMin(lo, 6);
  comm.allReduceMax(hi, 6);
  if (carriers == 0)
  {
    return vtkJZKernelAdapter::PeriodicBoxError(box);
  }
  if (!std::equal(lo, lo + 6, hi))
  {
    return "The ranks' pieces carry different BoxSize field data; the periodic box is ambiguous.";
  }
  std::copy(lo, lo + 6, box);
  return {};
}
