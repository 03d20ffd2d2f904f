#include "JZDisplayLooks.h"

#include "JZDisplayTable.h"

#include "vtkDataObject.h"
#include "vtkNew.h"
#include "vtkPVArrayInformation.h"
#include "vtkPVDataInformation.h"
#include "vtkSMEnumerationDomain.h"
#include "vtkSMPVRepresentationProxy.h"
#include "vtkSMProperty.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMSessionProxyManager.h"
#include "vtkSMSourceProxy.h"
#include "vtkSMStringVectorProperty.h"
#include "vtkSMTransferFunctionManager.h"
#include "vtkSMTransferFunctionProxy.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace jz_display
{
namespace
{
// Categorical palette: nine saturated colours, far from one another and from
// the grey of the ungrouped/noise id -1 even behind a faint grey haze, and
// visible on ParaView's dark and light backgrounds.
constexpr double Palette[][3] = { { 0.122, 0.467, 0.706 }, { 1.000, 0.498, 0.055 },
  { 0.173, 0.627, 0.173 }, { 0.839, 0.153, 0.157 }, { 0.580, 0.251, 0.839 },
  { 0.090, 0.745, 0.812 }, { 0.910, 0.251, 0.698 }, { 1.000, 0.843, 0.000 },
  { 0.450, 0.950, 0.350 } };
constexpr int PaletteSize = sizeof(Palette) / sizeof(Palette[0]);
constexpr double Grey[3] = { 0.6, 0.6, 0.6 };

// Point Gaussian radii, as fractions of the mean interparticle separation
// (or of the SmoothingLength, where a look sizes by it).
constexpr double ParticleRadius = 0.5;
constexpr double FaintRadius = 0.25;
constexpr double SmoothingRadius = 0.3;
// Opacity of the faint end (ids -1, low densities), of context particles
// (Look::Faint) and of halo spheres.
constexpr double FaintOpacity = 0.12;
constexpr double ContextOpacity = 0.08;
constexpr double SphereOpacity = 0.4;
// With an opacity array but an actor opacity of 1, VTK 9.2's Point Gaussian
// mapper draws in the opaque pass, where even its faint splats write depth
// and hide translucent geometry behind them (the halo spheres); an opacity
// just below 1 sends the particles through the translucent (depth-peeled) pass.
constexpr double TranslucentPassOpacity = 0.999;

const int Points = vtkDataObject::FIELD_ASSOCIATION_POINTS;
const int Cells = vtkDataObject::FIELD_ASSOCIATION_CELLS;

/// What `repr` shows: its Input's data information (up to date after Show).
vtkPVDataInformation* DataOf(vtkSMProxy* repr)
{
  vtkSMPropertyHelper input(repr, "Input", /*quiet=*/true);
  auto* producer = vtkSMSourceProxy::SafeDownCast(input.GetAsProxy());
  return producer ? producer->GetDataInformation(input.GetOutputPort()) : nullptr;
}

void SetInt(vtkSMProxy* proxy, const char* name, int value)
{
  if (proxy->GetProperty(name))
  {
    vtkSMPropertyHelper(proxy, name).Set(value);
  }
}

void SetDouble(vtkSMProxy* proxy, const char* name, double value)
{
  if (proxy->GetProperty(name))
  {
    vtkSMPropertyHelper(proxy, name).Set(value);
  }
}

void SetColor(vtkSMProxy* proxy, const char* name, const double rgb[3])
{
  if (proxy->GetProperty(name))
  {
    vtkSMPropertyHelper(proxy, name).Set(rgb, 3);
  }
}

/// Sets an enumeration property by its text ("Plain circle"); false when absent.
bool SetEnum(vtkSMProxy* proxy, const char* name, const char* text)
{
  vtkSMProperty* property = proxy->GetProperty(name);
  auto* domain = property ? property->FindDomain<vtkSMEnumerationDomain>() : nullptr;
  int valid = 0;
  const int value = domain ? domain->GetEntryValue(text, valid) : 0;
  if (valid)
  {
    vtkSMPropertyHelper(property).Set(value);
  }
  return valid != 0;
}

void SetArray(vtkSMProxy* proxy, const char* name, int association, const char* array)
{
  if (proxy->GetProperty(name))
  {
    vtkSMPropertyHelper(proxy, name).SetInputArrayToProcess(association, array);
  }
}

/// Points (x, y) of the piecewise function held by property `name` of `owner`.
void SetFunction(
  vtkSMProxy* owner, const char* name, const std::vector<std::pair<double, double>>& xy)
{
  vtkSMProxy* function = vtkSMPropertyHelper(owner, name, /*quiet=*/true).GetAsProxy();
  if (!function)
  {
    return;
  }
  std::vector<double> points;
  for (const auto& p : xy)
  {
    points.insert(points.end(), { p.first, p.second, 0.5, 0.0 });
  }
  vtkSMPropertyHelper(function, "Points").Set(points.data(), static_cast<unsigned>(points.size()));
  function->UpdateVTKObjects();
}

/// Point Gaussian splats of radius `factor` x the point array `array`.
void SizeByArray(vtkSMProxy* repr, const std::string& array, double factor)
{
  SetInt(repr, "ScaleByArray", 1);
  SetArray(repr, "SetScaleArray", Points, array.c_str());
  SetInt(repr, "UseScaleFunction", 0);
  SetDouble(repr, "GaussianRadius", factor);
}

/// Point Gaussian opacity through a function of the point array `array`.
void OpacityByArray(
  vtkSMProxy* repr, const char* array, const std::vector<std::pair<double, double>>& xy)
{
  SetInt(repr, "OpacityByArray", 1);
  SetArray(repr, "OpacityArray", Points, array);
  SetFunction(repr, "OpacityTransferFunction", xy);
  SetDouble(repr, "Opacity", TranslucentPassOpacity);
}

bool Range(vtkPVDataInformation* info, const char* array, int association, double range[2])
{
  vtkPVArrayInformation* ai = info ? info->GetArrayInformation(array, association) : nullptr;
  if (!ai)
  {
    return false;
  }
  ai->GetComponentRange(0, range);
  return std::isfinite(range[0]) && std::isfinite(range[1]) && range[0] <= range[1];
}

bool LogRangeOk(const double range[2])
{
  return range[0] > 0 && range[1] > range[0];
}

/// Mean interparticle separation (V/N)^(1/d) over the bounding box, d the
/// number of axes with a positive extent (so planes and lines work too);
/// 0 when unknown.
double MeanSeparation(vtkPVDataInformation* info)
{
  const double* b = info->GetBounds();
  const double n = static_cast<double>(info->GetNumberOfPoints());
  double volume = 1;
  int dims = 0;
  for (int axis = 0; axis < 3; ++axis)
  {
    const double extent = b[2 * axis + 1] - b[2 * axis];
    if (extent > 0 && std::isfinite(extent))
    {
      volume *= extent;
      ++dims;
    }
  }
  return (n > 0 && dims > 0) ? std::pow(volume / n, 1.0 / dims) : 0.0;
}

/// The first array of `candidates` ("A|B") present as point data with a positive maximum.
std::string FirstPresent(vtkPVDataInformation* info, const char* candidates)
{
  std::string list = candidates ? candidates : "";
  size_t start = 0;
  while (start <= list.size())
  {
    const size_t end = std::min(list.find('|', start), list.size());
    const std::string name = list.substr(start, end - start);
    double range[2];
    if (!name.empty() && Range(info, name.c_str(), Points, range) && range[1] > 0)
    {
      return name;
    }
    start = end + 1;
  }
  return std::string();
}

vtkSMProxy* ColorBy(vtkSMProxy* repr, const char* array, int association)
{
  vtkSMPVRepresentationProxy::SetScalarColoring(repr, array, association);
  return vtkSMPropertyHelper(repr, "LookupTable", /*quiet=*/true).GetAsProxy();
}

/// Makes `lut` categorical over the ids -1 (when `noise`) .. maxId, keeping
/// the colours of the ids it already annotates.
void ConfigureCategories(vtkSMProxy* lut, vtkIdType maxId, const char* noise)
{
  std::vector<std::string> annotations;
  std::vector<double> colors;
  if (vtkSMPropertyHelper(lut, "IndexedLookup").GetAsInt() != 0)
  {
    vtkSMPropertyHelper existing(lut, "Annotations");
    for (unsigned i = 0; i < existing.GetNumberOfElements(); ++i)
    {
      annotations.emplace_back(existing.GetAsString(i));
    }
    colors = vtkSMPropertyHelper(lut, "IndexedColors").GetDoubleArray();
    // ParaView cycles the colours when there are fewer than annotations.
    const size_t known = colors.size() / 3;
    for (size_t i = known; known > 0 && i < annotations.size() / 2; ++i)
    {
      colors.insert(
        colors.end(), colors.begin() + 3 * (i % known), colors.begin() + 3 * (i % known) + 3);
    }
  }
  std::set<std::string> annotated;
  for (size_t i = 0; i + 1 < annotations.size(); i += 2)
  {
    annotated.insert(annotations[i]);
  }
  auto add = [&](vtkIdType id, const std::string& text, const double rgb[3])
  {
    const std::string value = std::to_string(id);
    if (annotated.insert(value).second)
    {
      annotations.push_back(value);
      annotations.push_back(text);
      colors.insert(colors.end(), rgb, rgb + 3);
    }
  };
  if (noise)
  {
    add(-1, noise, Grey);
  }
  for (vtkIdType id = 0; id <= maxId; ++id)
  {
    add(id, std::to_string(id), Palette[id % PaletteSize]);
  }
  vtkSMStringVectorProperty::SafeDownCast(lut->GetProperty("Annotations"))
    ->SetElements(annotations);
  vtkSMPropertyHelper(lut, "IndexedColors")
    .Set(colors.data(), static_cast<unsigned>(colors.size()));
  // Annotations first: the GUI's colour map editor offers to generate them
  // (a modal question) when a map turns categorical without any.
  SetInt(lut, "AnnotationsInitialized", 1);
  SetInt(lut, "IndexedLookup", 1);
  SetColor(lut, "NanColor", Grey);
  lut->UpdateVTKObjects();
}

/// A perceptual preset over `range`, inverted when the low end is the
/// interesting one (so that it is the bright end), logarithmic when asked
/// and the range allows it.
void ConfigureScalarColors(vtkSMProxy* lut, const Entry& entry, const double range[2])
{
  vtkSMTransferFunctionProxy::ApplyPreset(lut, entry.Preset, /*rescale=*/false);
  vtkSMTransferFunctionProxy::RescaleTransferFunction(lut, range[0], range[1], false);
  if (entry.Emphasize == Emphasis::Low)
  {
    vtkSMTransferFunctionProxy::InvertTransferFunction(lut);
  }
  const bool log = entry.Log && LogRangeOk(range);
  SetInt(lut, "UseLogScale", log ? 1 : 0);
  if (log)
  {
    vtkSMTransferFunctionProxy::MapControlPointsToLogSpace(lut);
  }
  lut->UpdateVTKObjects();
}

/// Position t in [0, 1] of the range, logarithmic or linear.
double Along(const double range[2], bool log, double t)
{
  return log ? range[0] * std::pow(range[1] / range[0], t) : range[0] + t * (range[1] - range[0]);
}

/// An opacity ramp over the range: `faint` at the dull end, 1 at the
/// emphasised end, rising as t^power in (log) position.
std::vector<std::pair<double, double>> OpacityRamp(
  const Entry& entry, const double range[2], double faint, double power)
{
  const bool log = entry.Log && LogRangeOk(range);
  const int steps = 16;
  std::vector<std::pair<double, double>> xy;
  for (int i = 0; i <= steps; ++i)
  {
    const double t = static_cast<double>(i) / steps;
    const double toward = entry.Emphasize == Emphasis::High ? t : 1 - t;
    xy.emplace_back(Along(range, log, t), faint + (1 - faint) * std::pow(toward, power));
  }
  return xy;
}

// The points (by index, of increasing positions x) a volume mapper can
// resolve: it samples a transfer function in steps of its two closest points,
// at most 16384 steps over the range, so of log-spaced points closer than one
// step only the first is kept (and always the last: the range's top colour).
std::vector<size_t> VolumeTablePoints(const std::vector<double>& x, const double range[2])
{
  const double step = (range[1] - range[0]) / (16384 - 1);
  std::vector<size_t> keep;
  for (size_t i = 0; i < x.size(); ++i)
  {
    if (!keep.empty() && x[i] - x[keep.back()] < step)
    {
      if (i + 1 < x.size())
      {
        continue;
      }
      keep.pop_back();
    }
    keep.push_back(i);
  }
  return keep;
}

bool IsPointCloud(vtkPVDataInformation* info)
{
  const vtkTypeInt64 cells = info->GetNumberOfCells();
  return cells == 0 || cells == info->GetNumberOfPoints();
}

// ---- the looks ------------------------------------------------------------

void Categories(const Entry& entry, vtkSMProxy* repr, vtkPVDataInformation* info)
{
  vtkSMRepresentationProxy::SetRepresentationType(repr, "Point Gaussian");
  SetEnum(repr, "ShaderPreset", "Plain circle");
  if (const double separation = MeanSeparation(info))
  {
    SetDouble(repr, "GaussianRadius", ParticleRadius * separation);
  }
  double ids[2] = { -1, -1 };
  Range(info, entry.Array, Points, ids);
  if (vtkSMProxy* lut = ColorBy(repr, entry.Array, Points))
  {
    ConfigureCategories(lut, static_cast<vtkIdType>(ids[1]), entry.NoiseName);
  }
  // Id -1 faint and half size; every real id full.
  const double top = std::max(ids[1], 0.0) + 1;
  OpacityByArray(repr, entry.Array, { { -1, FaintOpacity }, { -0.5, 1 }, { top, 1 } });
  SetInt(repr, "ScaleByArray", 1);
  SetArray(repr, "SetScaleArray", Points, entry.Array);
  SetInt(repr, "UseScaleFunction", 1);
  SetFunction(repr, "ScaleTransferFunction", { { -1, 0.5 }, { -0.5, 1 }, { top, 1 } });
}

void Spheres(const Entry& entry, vtkSMProxy* repr, vtkPVDataInformation* info)
{
  vtkSMRepresentationProxy::SetRepresentationType(repr, "Point Gaussian");
  SetEnum(repr, "ShaderPreset", "Sphere");
  const std::string radius = FirstPresent(info, entry.Size);
  if (!radius.empty())
  {
    SizeByArray(repr, radius, 1.0);
  }
  double ids[2] = { -1, -1 };
  Range(info, entry.Array, Points, ids);
  if (vtkSMProxy* lut = ColorBy(repr, entry.Array, Points))
  {
    ConfigureCategories(lut, static_cast<vtkIdType>(ids[1]), nullptr);
  }
  SetDouble(repr, "Opacity", SphereOpacity);
}

// An image one point thick along some axis (the SPH maps' projections and slices).
bool IsFlatImage(vtkPVDataInformation* info)
{
  const int* e = info->GetExtent();
  return e[0] == e[1] || e[2] == e[3] || e[4] == e[5];
}

void Volume(const Entry& entry, vtkSMProxy* repr, vtkPVDataInformation* info)
{
  double range[2];
  if (!Range(info, entry.Array, Points, range) ||
    !vtkSMRepresentationProxy::SetRepresentationType(repr, "Volume"))
  {
    return;
  }
  // ParaView 5.11's volume mappers sample a log-scale transfer function in
  // log space but index it linearly, so the log look is built from control
  // points placed logarithmically on a linear scale, in a colour map of this
  // volume's own (the shared one keeps its true log scale for particles).
  SetInt(repr, "UseSeparateColorMap", 1);
  vtkSMProxy* lut = ColorBy(repr, entry.Array, Points);
  if (!lut)
  {
    return;
  }
  const bool log = entry.Log && LogRangeOk(range);
  vtkSMTransferFunctionProxy::ApplyPreset(lut, entry.Preset, /*rescale=*/false);
  vtkSMTransferFunctionProxy::RescaleTransferFunction(lut, 0.0, 1.0, false);
  if (entry.Emphasize == Emphasis::Low)
  {
    vtkSMTransferFunctionProxy::InvertTransferFunction(lut);
  }
  const std::vector<double> preset = vtkSMPropertyHelper(lut, "RGBPoints").GetDoubleArray();
  std::vector<double> x;
  for (size_t i = 0; i + 3 < preset.size(); i += 4)
  {
    x.push_back(Along(range, log, std::min(std::max(preset[i], 0.0), 1.0)));
  }
  std::vector<double> rgb;
  for (const size_t i : VolumeTablePoints(x, range))
  {
    rgb.insert(rgb.end(), { x[i], preset[4 * i + 1], preset[4 * i + 2], preset[4 * i + 3] });
  }
  SetInt(lut, "UseLogScale", 0);
  vtkSMPropertyHelper(lut, "RGBPoints").Set(rgb.data(), static_cast<unsigned>(rgb.size()));
  // A linear rescale would undo the logarithmic spacing.
  SetEnum(lut, "AutomaticRescaleRangeMode", "Never");
  lut->UpdateVTKObjects();
  const auto ramp = OpacityRamp(entry, range, 0.0, 2.0);
  x.clear();
  for (const auto& point : ramp)
  {
    x.push_back(point.first);
  }
  std::vector<std::pair<double, double>> opacity;
  for (const size_t i : VolumeTablePoints(x, range))
  {
    opacity.push_back(ramp[i]);
  }
  SetFunction(repr, "ScalarOpacityFunction", opacity);
}

void Scalars(const Entry& entry, vtkSMProxy* repr, vtkPVDataInformation* info, bool newColorMap)
{
  if (info->DataSetTypeIsA("vtkImageData") && !IsFlatImage(info))
  {
    Volume(entry, repr, info);
    return;
  }
  if (info->DataSetTypeIsA("vtkImageData"))
  {
    // A map (one point thick): the image shown as a slice.
    vtkSMRepresentationProxy::SetRepresentationType(repr, "Slice");
    double range[2];
    vtkSMProxy* lut = ColorBy(repr, entry.Array, Points);
    if (lut && Range(info, entry.Array, Points, range) && newColorMap)
    {
      ConfigureScalarColors(lut, entry, range);
    }
    return;
  }
  const bool particles = IsPointCloud(info);
  vtkSMRepresentationProxy::SetRepresentationType(repr, particles ? "Point Gaussian" : "Surface");
  double range[2];
  const bool hasRange = Range(info, entry.Array, Points, range);
  vtkSMProxy* lut = ColorBy(repr, entry.Array, Points);
  if (lut && hasRange && newColorMap)
  {
    ConfigureScalarColors(lut, entry, range);
  }
  if (!particles)
  {
    return;
  }
  SetEnum(repr, "ShaderPreset", "Plain circle");
  const std::string size = FirstPresent(info, entry.Size);
  if (!size.empty())
  {
    SizeByArray(repr, size, SmoothingRadius);
  }
  else if (const double separation = MeanSeparation(info))
  {
    SetDouble(repr, "GaussianRadius", ParticleRadius * separation);
  }
  if (hasRange && range[1] > range[0])
  {
    OpacityByArray(repr, entry.Array, OpacityRamp(entry, range, 0.03, 1.5));
  }
}

void Lines(const Entry& entry, vtkSMProxy* repr, vtkPVDataInformation* info, bool newColorMap)
{
  vtkSMRepresentationProxy::SetRepresentationType(repr, "Surface");
  double range[2];
  const bool hasRange = Range(info, entry.Array, Cells, range);
  vtkSMProxy* lut = ColorBy(repr, entry.Array, Cells);
  if (lut && hasRange && newColorMap)
  {
    ConfigureScalarColors(lut, entry, range);
    // Lines have no opacity array: the colour map's opacity fades the dull
    // end (e.g. the long MST edges through voids).
    SetFunction(lut, "ScalarOpacityFunction", OpacityRamp(entry, range, 0.05, 1.5));
    SetInt(lut, "EnableOpacityMapping", 1);
    lut->UpdateVTKObjects();
  }
}

void Faint(vtkSMProxy* repr, vtkPVDataInformation* info)
{
  vtkSMRepresentationProxy::SetRepresentationType(repr, "Point Gaussian");
  SetEnum(repr, "ShaderPreset", "Plain circle");
  vtkSMPVRepresentationProxy::SetScalarColoring(repr, nullptr, Points);
  SetColor(repr, "AmbientColor", Grey);
  SetColor(repr, "DiffuseColor", Grey);
  SetDouble(repr, "Opacity", ContextOpacity);
  if (const double separation = MeanSeparation(info))
  {
    SetDouble(repr, "GaussianRadius", FaintRadius * separation);
  }
}

void BlockTypes(vtkSMProxy* repr)
{
  vtkSMRepresentationProxy::SetRepresentationType(repr, "Points");
  SetDouble(repr, "PointSize", 2);
  SetInt(repr, "RenderPointsAsSpheres", 1);
  // ParaView colours the blocks of a composite by the field array
  // vtkBlockColors of its geometry; one particle type per block.
  // Its colour map comes annotated (one entry per block). Marked so before
  // it is switched to categorical, the GUI does not try to derive
  // annotations from the data, which it cannot for vtkBlockColors, and stop
  // at a modal "Could not initialize annotations".
  vtkNew<vtkSMTransferFunctionManager> manager;
  if (vtkSMProxy* lut =
        manager->GetColorTransferFunction("vtkBlockColors", repr->GetSessionProxyManager()))
  {
    SetInt(lut, "AnnotationsInitialized", 1);
    lut->UpdateVTKObjects();
  }
  vtkSMPVRepresentationProxy::SetScalarColoring(repr, "vtkBlockColors", vtkDataObject::FIELD);
}
}

bool HasSharedColorMap(const Entry& entry, vtkSMProxy* repr)
{
  // ParaView 5.11 registers the shared colour map of an array A as
  // "A.PVLookupTable" in the group "lookup_tables".
  vtkSMSessionProxyManager* pxm = repr->GetSessionProxyManager();
  const std::string name = std::string(entry.Array ? entry.Array : "") + ".PVLookupTable";
  return pxm && entry.Array && pxm->GetProxy("lookup_tables", name.c_str()) != nullptr;
}

bool ApplyLook(const Entry& entry, vtkSMProxy* repr, bool newColorMap)
{
  vtkPVDataInformation* info = DataOf(repr);
  if (!vtkSMPVRepresentationProxy::SafeDownCast(repr) || !repr->GetProperty("Representation") ||
    !info)
  {
    return false;
  }
  switch (entry.How)
  {
    case Look::Categories:
      Categories(entry, repr, info);
      break;
    case Look::Spheres:
      Spheres(entry, repr, info);
      break;
    case Look::Scalars:
      Scalars(entry, repr, info, newColorMap);
      break;
    case Look::Lines:
      Lines(entry, repr, info, newColorMap);
      break;
    case Look::Faint:
      Faint(repr, info);
      break;
    case Look::BlockTypes:
      BlockTypes(repr);
      break;
  }
  repr->UpdateVTKObjects();
  return true;
}

void ExtendCategories(const Entry& entry, vtkSMProxy* repr)
{
  if (entry.How != Look::Categories && entry.How != Look::Spheres)
  {
    return;
  }
  vtkSMPropertyHelper color(repr, "ColorArrayName", /*quiet=*/true);
  const char* array = color.GetInputArrayNameToProcess();
  vtkSMProxy* lut = vtkSMPropertyHelper(repr, "LookupTable", /*quiet=*/true).GetAsProxy();
  double ids[2];
  if (!lut || !array || std::string(array) != entry.Array ||
    vtkSMPropertyHelper(lut, "IndexedLookup").GetAsInt() == 0 ||
    !Range(DataOf(repr), entry.Array, Points, ids))
  {
    return;
  }
  ConfigureCategories(lut, static_cast<vtkIdType>(ids[1]), entry.NoiseName);
  if (entry.How == Look::Categories)
  {
    const double top = std::max(ids[1], 0.0) + 1;
    SetFunction(repr, "OpacityTransferFunction", { { -1, FaintOpacity }, { -0.5, 1 }, { top, 1 } });
    SetFunction(repr, "ScaleTransferFunction", { { -1, 0.5 }, { -0.5, 1 }, { top, 1 } });
  }
}

}
