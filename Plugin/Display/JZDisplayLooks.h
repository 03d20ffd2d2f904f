// The looks of the default-view table (JZDisplayTable.h): each configures a
// new render-view representation of a JZ-Tree output from its data, with
// only server-manager calls, so that the GUI and pvpython's Show() share it.
#ifndef JZDisplayLooks_h
#define JZDisplayLooks_h

class vtkSMProxy;

namespace jz_display
{
struct Entry;

/// Whether ParaView has the shared colour map of the entry's array yet. A
/// look sets up only colour maps that are new, so a user's choices for the
/// map of, say, Density are kept for later filters.
bool HasSharedColorMap(const Entry& entry, vtkSMProxy* repr);

/// Configures `repr` (a vtkSMPVRepresentationProxy whose data is up to date)
/// as `entry` says; `newColorMap` is HasSharedColorMap() before ParaView set
/// the representation up. Returns false when the representation is not one
/// it can configure (a spreadsheet, for instance).
bool ApplyLook(const Entry& entry, vtkSMProxy* repr, bool newColorMap);

/// After the producer of `repr` re-executed: adds legend entries and colours
/// for ids that appeared since, when the id colour map is still categorical.
void ExtendCategories(const Entry& entry, vtkSMProxy* repr);
}

#endif
