"""The view and display settings the demo scripts share (pvbatch)."""
from paraview.simple import ColorBy, CreateView, GetScalarBar


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
