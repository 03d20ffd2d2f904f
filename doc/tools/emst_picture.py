"""Renders doc/emst_hdbscan.png: a slab of clustered particles with its
Euclidean minimum spanning tree coloured by edge length (left) and the
HDBSCAN* clusters (right, the plugin's default view).

  scripts/with-display.sh pvbatch doc/tools/emst_picture.py PLUGIN.so OUT.png
"""
import sys

import numpy as np
from paraview.simple import *  # noqa: F401,F403

LoadPlugin(sys.argv[1], ns=globals())
out = sys.argv[2]
sys.path.insert(0, "Testing/Python")
from jztest import polydata, producer  # noqa: E402

rng = np.random.default_rng(3)
centres = rng.random((7, 3))
parts = [rng.random((1500, 3))]
for k, c in enumerate(centres):
    m = 400 + 150 * k
    r = 0.02 + 0.012 * k
    parts.append(c + r * rng.standard_normal((m, 3)))
    parts.append(c + 0.3 * r * rng.standard_normal((m // 4, 3)) + r * rng.standard_normal(3))
x = np.concatenate(parts) % 1.0
x = x[np.abs(x[:, 2] - 0.5) < 0.5].astype(np.float32)
src = producer(polydata(x))

layout = CreateLayout("emst")
left = CreateView("RenderView")
AssignViewToLayout(view=left, layout=layout, hint=0)
mst = EuclideanMST(Input=src)
# The edges alone, a little wider than the default view draws them.
edges = Show(OutputPort(mst, 1), left)
edges.LineWidth = 2.0
left.OrientationAxesVisibility = 0
left.UseColorPaletteForBackground = 0
left.Background = [0.02, 0.02, 0.05]
left.ResetCamera()
layout.SplitHorizontal(0, 0.5)
right = CreateView("RenderView")
AssignViewToLayout(view=right, layout=layout, hint=2)
hd = HDBSCAN(Input=src, MinClusterSize=60)
Show(hd, right)
right.OrientationAxesVisibility = 0
right.ResetCamera()
for v in (left, right):
    v.CameraPosition = [0.5, 0.5, 3.2]
    v.CameraFocalPoint = [0.5, 0.5, 0.5]
    v.CameraViewUp = [0, 1, 0]
SaveScreenshot(out, layout, ImageResolution=[1600, 800])
