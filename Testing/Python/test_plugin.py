"""The JZTree plugin as users see it: loading, proxy and property names,
defaults, enumerations, documentation (doc/filters/).

Usage: pvpython test_plugin.py autoload        (PV_PLUGIN_PATH set, no LoadPlugin)
       pvpython test_plugin.py load PLUGIN.so  (LoadPlugin(path, ns=globals()))
"""
import sys

import numpy as np

from paraview import servermanager
from paraview.simple import *  # noqa: F401,F403

mode = sys.argv[1]
if mode == "load":
    LoadPlugin(sys.argv[2], ns=globals())
failures = []


def check(ok, what):
    print("  ok  " if ok else "  FAIL", what)
    if not ok:
        failures.append(what)


check("KNNDensity" in globals(), f"KNNDensity is defined after {mode}")
if "KNNDensity" not in globals():
    sys.exit(1)

source = PointSource(NumberOfPoints=500, Radius=1.0)
f = KNNDensity(Input=source, NumberOfNeighbors=16, Estimator="Top Hat", Device="CPU",
               OutputNeighbors=1)
expected = ["BoxBounds", "BoxFromData", "Device", "Estimator", "Input", "MassArray",
            "NumberOfNeighbors", "OutputNeighbors", "Periodic", "Query"]
check(sorted(f.ListProperties()) == expected, f"properties {sorted(f.ListProperties())}")
check(f.GetXMLLabel() == "KNN Density", f"label {f.GetXMLLabel()!r}")
check(f.SMProxy.GetXMLGroup() == "filters" and f.SMProxy.GetXMLName() == "KNNDensity",
      "proxy filters/KNNDensity")
hints = f.SMProxy.GetHints()
menu = hints.FindNestedElementByName("ShowInMenu") if hints else None
check(menu is not None and menu.GetAttribute("category") == "JZ-Tree", "ShowInMenu category JZ-Tree")
doc = f.SMProxy.GetDocumentation()
check(bool(doc.GetLongHelp()) and bool(doc.GetShortHelp()) and bool(doc.GetDescription()),
      "filter documentation (long, short, description)")
for name in expected:
    d = f.GetProperty(name).SMProperty.GetDocumentation()
    check(d is not None and len((d.GetDescription() or "").strip()) > 20, f"{name} documented")

d = KNNDensity(Input=source)
check(d.NumberOfNeighbors == 32, "NumberOfNeighbors default 32")
check(d.Estimator == "SPH Cubic Spline", f"Estimator default {d.Estimator!r}")
check(d.Device == "Auto", f"Device default {d.Device!r}")
check(d.Periodic == 0 and d.OutputNeighbors == 0, "Periodic and OutputNeighbors default off")
check(list(d.BoxBounds) == [0, 1, 0, 1, 0, 1], f"BoxBounds default {list(d.BoxBounds)}")
check(d.MassArray[1] == "None", f"MassArray default {list(d.MassArray)}")
check(sorted(d.GetProperty("Estimator").Available) == ["SPH Cubic Spline", "Top Hat"],
      "Estimator values")
check(sorted(d.GetProperty("Device").Available) == ["Auto", "CPU", "CUDA"], "Device values")
check(d.Query is None, "Query is optional and empty by default")
for name in ("Device", "OutputNeighbors", "BoxBounds"):
    check(d.GetProperty(name).SMProperty.GetPanelVisibility() == "advanced", f"{name} is advanced")

f.UpdatePipeline()
info = f.GetDataInformation()
check(info.GetNumberOfPoints() == 500, "runs on a PointSource")
for name in ("SmoothingLength", "Density", "NeighborIds", "NeighborDistances"):
    check(f.PointData[name] is not None, f"output array {name}")
check(f.PointData["NeighborIds"].GetNumberOfComponents() == 16, "NeighborIds has K components")
out = servermanager.Fetch(f)
check(out.GetFieldData().GetAbstractArray("JZDevice").GetValue(0) == "CPU", "JZDevice CPU")

# Query port from Python: an image grid gives an image output
grid = Wavelet(WholeExtent=[0, 9, 0, 9, 0, 9])
q = KNNDensity(Input=source, Query=grid, NumberOfNeighbors=8, Device="CPU")
q.UpdatePipeline()
check(q.GetDataInformation().GetDataSetTypeAsString() == "vtkImageData"
      and q.GetDataInformation().GetNumberOfPoints() == 1000, "Query=Wavelet gives vtkImageData")
q.Query = None
q.UpdatePipeline()
check(q.GetDataInformation().GetNumberOfPoints() == 500, "clearing Query goes back to a self query")

print("FAILED:" if failures else "all checks passed", *failures, sep="\n  ")
sys.exit(1 if failures else 0)
