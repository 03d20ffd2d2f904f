// The one table of default looks for new views of JZ-Tree outputs: which
// output (producer XML name and port) is drawn how, coloured by which array.
// Adding a filter's defaults is one entry in JZDisplayTable.cxx. The looks
// themselves live in JZDisplayLooks.cxx; doc/filters gives each one.
#ifndef JZDisplayTable_h
#define JZDisplayTable_h

class vtkSMProxy;

namespace jz_display
{

/// How an output is drawn (see JZDisplayLooks.h).
enum class Look
{
  Categories, ///< particles coloured by an id with a categorical palette, -1 faint
  Spheres,    ///< one translucent sphere per row, sized by a radius array
  Scalars,    ///< particles (or a volume, for an image) coloured by a scalar
  Lines,      ///< line cells coloured by a cell scalar
  Faint,      ///< particles drawn small, grey and translucent (context only)
  BlockTypes  ///< a composite of particle sets, one colour per block
};

/// Which end of a scalar's range is the interesting one (drawn opaque and bright).
enum class Emphasis
{
  High,
  Low
};

struct Entry
{
  const char* Producer;  ///< the XML name of the filter or reader
  int Port;              ///< its output port
  Look How;              ///< the look
  const char* Array;     ///< the array it is coloured by (Categories, Spheres, Scalars, Lines)
  const char* Size;      ///< radius array(s), first present wins, '|'-separated
  const char* NoiseName; ///< Categories: legend text of the id -1
  bool Log;              ///< Scalars, Lines: logarithmic colour scale
  Emphasis Emphasize;    ///< Scalars: the end drawn opaque
  const char* Preset;    ///< Scalars, Lines: the ParaView colour preset
};

/// The entry for output `port` of a proxy of XML name `producer`, or nullptr.
const Entry* FindEntry(const char* producer, int port);

/// The entry for the data shown by representation `repr` (its Input), or nullptr.
const Entry* FindEntry(vtkSMProxy* repr);

}

#endif
