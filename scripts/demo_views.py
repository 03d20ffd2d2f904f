"""The view and display settings, the start-up and the array access the demo
scripts share (pvbatch)."""
import argparse
import os
import sys

import numpy as np
from paraview.simple import ColorBy, CreateView, GetScalarBar, LoadPlugin
from vtkmodules.numpy_interface.dataset_adapter import CompositeDataIterator
from vtkmodules.util.numpy_support import vtk_to_numpy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def demo_parser(size):
    """The options every demo on ../shared data takes: --plugin, --out, --size
    (default `size`) and --strict."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--plugin", default=os.path.join(
        ROOT, "build/lib/paraview-5.11/plugins/JZTree/JZTree.so"))
    parser.add_argument("--out", default=os.path.join(ROOT, "out"))
    parser.add_argument("--size", type=int, nargs=2, default=size)
    parser.add_argument("--strict", action="store_true", help="exit 125 when the data are absent")
    return parser


def start_demo(args, present, what, ns):
    """Exits (0, or 125 with --strict) saying why when the data are not
    `present`; otherwise loads the plugin into `ns` and makes args.out."""
    if not present:
        print(f"Skipping {what}: the data are not available "
              f"(they live in ../shared/data/external beside the repository).")
        sys.exit(125 if args.strict else 0)
    LoadPlugin(args.plugin, ns=ns)
    os.makedirs(args.out, exist_ok=True)


def leaves(data):
    """The data sets of a (composite) data object, in order."""
    if not data.IsA("vtkCompositeDataSet"):
        return [data]
    return [leaf.VTKObject for leaf in CompositeDataIterator(data)]


def column(data, name):
    """The point array `name` over the leaves of `data`, as one numpy array."""
    parts = [vtk_to_numpy(d.GetPointData().GetArray(name)) for d in leaves(data)
             if d.GetPointData().GetArray(name) is not None]
    a = np.concatenate(parts)
    return a.reshape(len(a), -1) if a.ndim > 1 else a


def render_view(size, background):
    """A render view of `size` pixels on a fixed `background` colour (not the
    palette's), without the orientation axes."""
    view = CreateView("RenderView")
    view.ViewSize = size
    view.OrientationAxesVisibility = 0
    view.Background = background
    try:
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    return view


def point_splats(display, radius, array):
    """Particles have no cells: Point Gaussian draws every point as a sphere
    splat of `radius`, coloured by the point array `array`."""
    display.SetRepresentationType("Point Gaussian")
    display.ShaderPreset = "Sphere"
    display.GaussianRadius = radius
    ColorBy(display, ("POINTS", array))


def scalar_bar(display, view, lut, title, color):
    """Shows the colour legend of `lut` in `view` with `title` in `color`."""
    bar = GetScalarBar(lut, view)
    bar.Title = title
    bar.ComponentTitle = ""
    bar.TitleColor = bar.LabelColor = color
    display.SetScalarBarVisibility(view, True)
    return bar
