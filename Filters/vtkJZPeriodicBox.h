/**
 * @class   vtkJZPeriodicBox
 * @brief   the periodic box of the JZ-Tree filters: from the data or BoxBounds
 *
 * One home for the rule every filter with `Periodic` follows (the
 * BoxFromData property in the filters' pages, doc/filters/): with
 * `BoxFromData` on and a field-data array `BoxSize` on the Input (one value L, or three Lx Ly Lz), the box is
 * [0, L] on each axis and `BoxBounds` is ignored; otherwise `BoxBounds` is
 * the box. The snapshot reader writes `BoxSize`. The GUI's BoxBounds widget
 * uses BoxFromSize() to show the same box.
 *
 * Only static methods; not meant to be instantiated.
 */
#ifndef vtkJZPeriodicBox_h
#define vtkJZPeriodicBox_h

#include "JZTreeFiltersModule.h" // for export macro
#include "vtkObject.h"

#ifndef __VTK_WRAP__
#include <string> // for Resolve
namespace jz
{
class Communicator;
}
#endif

class vtkDataObject;

class JZTREEFILTERS_EXPORT vtkJZPeriodicBox : public vtkObject
{
public:
  static vtkJZPeriodicBox* New();
  vtkTypeMacro(vtkJZPeriodicBox, vtkObject);

  /**
   * The box [0, Lx] x [0, Ly] x [0, Lz] (xmin xmax ymin ymax zmin zmax) of
   * the `count` values of a BoxSize array: one value is a cube, three are
   * the sides. False (box untouched) for any other count.
   */
  static bool BoxFromSize(const double* values, int count, double box[6]);

  /**
   * The box from the BoxSize field-data array of `data` or, for a composite
   * data set without one, of its first leaf that has one: 1 when found, 0
   * when there is none, -1 when it does not hold 1 or 3 values.
   */
  static int BoxFromData(vtkDataObject* data, double box[6]);

#ifndef __VTK_WRAP__
  /**
   * The periodic box a filter uses (collective: every rank calls it when
   * Periodic is on). A rank whose piece carries no BoxSize takes the other
   * ranks'. Returns why the box is unusable (ranks with different BoxSize
   * values, a malformed BoxSize, an extent that is not positive and
   * finite), or an empty string.
   */
  static std::string Resolve(jz::Communicator& comm, vtkDataObject* input, bool boxFromData,
    const double boxBounds[6], double box[6]);
#endif

protected:
  vtkJZPeriodicBox() = default;
  ~vtkJZPeriodicBox() override = default;

private:
  vtkJZPeriodicBox(const vtkJZPeriodicBox&) = delete;
  void operator=(const vtkJZPeriodicBox&) = delete;
};

#endif
