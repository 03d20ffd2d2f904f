/**
 * @file   vtkJZSnapshotSharedMemory.h
 * @brief  Output arrays that need no fresh memory of their own.
 *
 * Reading a snapshot from the page cache costs mostly the first touch of
 * fresh output memory, and some output arrays repeat values the reader
 * already holds: the vertex cells' connectivity (0 .. N-1) is the start of
 * their offsets (0 .. N), the 64-bit GlobalIds are the bits of 64-bit
 * ParticleIDs, and MassTable masses are one value N times.
 *
 * - ShareMemory: a second VTK array over the first values of another's
 *   memory. The memory lives while either array holds it (each releases it
 *   when destroyed or when VTK reallocates it, which copies first), so
 *   pipelines may keep either array alone. Values written into one are seen
 *   in the other (VTK filters do not write into their inputs).
 * - MapConstant: an array of one value repeated, mapped copy-on-write from
 *   one small memory file (Linux memfd): no memory is touched until a value
 *   is written, and a write copies only its page.
 *
 * Both return false where they cannot (the caller then allocates and
 * fills as usual); neither changes an array's type, name or size.
 *
 * Not wrapped; include it only from .cxx files.
 */
#ifndef vtkJZSnapshotSharedMemory_h
#define vtkJZSnapshotSharedMemory_h

#include "vtkType.h"

class vtkDataArray;

namespace vtkJZSnapshotSharedMemory
{
/// Makes `alias` (a vtkAOSDataArrayTemplate of the same value size as
/// `owner`, its components set) hold the first `values` values of `owner`'s
/// memory. `owner` must own memory from malloc (VTK's or posix_memalign's)
/// or have been shared before.
bool ShareMemory(vtkDataArray* owner, vtkDataArray* alias, vtkIdType values);

/// Makes `array` (a vtkAOSDataArrayTemplate, components set) hold `values`
/// values, each equal to the array's own type's bytes at `value`.
bool MapConstant(vtkDataArray* array, vtkIdType values, const void* value);
}

#endif
