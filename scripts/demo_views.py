"""The view and display settings, and the array access, the demo scripts
share (pvbatch)."""
import numpy as np
from paraview.simple import ColorBy, CreateView, GetScalarBar
from vtkmodules.numpy_interface.dataset_adapter import CompositeDataIterator
from vtkmodules.util.numpy_support import vtk_to_numpy


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
