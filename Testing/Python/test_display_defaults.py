"""Default views of the JZ-Tree outputs in pvpython (doc/ARCHITECTURE.md, "Default views"):
after a plain Show(), each output has the look of the plugin's table, the
same as in the GUI. Checked on the representation, colour-map and
transfer-function properties against values computed here from the data
(numpy), and on rendered pictures: each of the largest halos is drawn in its
own categorical colour. Producers that are not built yet are replaced by
stand-ins with their documented outputs (display_standins.py).

Usage: pvpython test_display_defaults.py SECTION   (see SECTIONS at the bottom)
Rendering sections need an X display (CTest runs them through with-display.sh).
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import display_standins  # noqa: E402
import jztest  # noqa: E402  (loads the plugin)
from checks import run_section  # noqa: E402
from jztest import ROOT, SKIP, simple  # noqa: E402

import numpy as np  # noqa: E402
from paraview import servermanager  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
from vtkmodules.vtkIOImage import vtkPNGReader  # noqa: E402

CLUSTERED = os.path.join(ROOT, "Data", "clustered.vtp")
KNNDensity = getattr(simple, "KNNDensity")
FriendsOfFriends = getattr(simple, "FriendsOfFriends")


def particles():
    return simple.XMLPolyDataReader(FileName=[CLUSTERED])


def view(size=(400, 400)):
    v = simple.CreateView("RenderView")
    v.ViewSize = list(size)
    v.OrientationAxesVisibility = 0
    return v


def fetch_points(proxy, port=0):
    """The points (n, 3) and the data object of an output (fetched whole)."""
    data = servermanager.Fetch(proxy, idx=port)
    n = data.GetNumberOfPoints()
    return np.array([data.GetPoint(i) for i in range(n)]) if not hasattr(data, "GetPoints") \
        else vtk_to_numpy(data.GetPoints().GetData()).astype(np.float64), data


def point_array(data, name):
    return vtk_to_numpy(data.GetPointData().GetArray(name))


def function_points(fn):
    """(x, y) of a piecewise function proxy."""
    p = np.asarray(fn.Points, dtype=np.float64).reshape(-1, 4)
    return p[:, 0], p[:, 1]


def categories(lut):
    """{value: (text, rgb)} of a categorical colour map."""
    ann = list(lut.Annotations)
    rgb = np.asarray(lut.IndexedColors, dtype=np.float64).reshape(-1, 3)
    return {int(ann[i]): (ann[i + 1], rgb[i // 2]) for i in range(0, len(ann), 2)}


def render(v, path):
    simple.Render(v)
    simple.SaveScreenshot(path, v, ImageResolution=list(v.ViewSize))
    r = vtkPNGReader()
    r.SetFileName(path)
    r.Update()
    img = r.GetOutput()
    w, h, _ = img.GetDimensions()
    a = vtk_to_numpy(img.GetPointData().GetScalars()).reshape(h, w, -1)[:, :, :3]
    return a.astype(np.float64) / 255.0  # row 0 at the bottom, as display coordinates


def to_display(v, xyz):
    ren = v.GetRenderer()
    ren.SetWorldPoint(*xyz, 1.0)
    ren.WorldToDisplay()
    x, y, _ = ren.GetDisplayPoint()
    return int(round(x)), int(round(y))


def mean_separation(pts):
    ext = pts.max(axis=0) - pts.min(axis=0)
    ext = ext[ext > 0]
    return (np.prod(ext) / len(pts)) ** (1.0 / len(ext))


# ---- FriendsOfFriends ----------------------------------------------------------

def check_categorical_particles(c, d, array, noise_text, pts, ids):
    c.check(d.Representation == "Point Gaussian", f"{array}: Point Gaussian ({d.Representation})")
    c.check(list(d.ColorArrayName) == ["POINTS", array], f"coloured by {array}")
    lut = simple.GetColorTransferFunction(array)
    c.check(lut.InterpretValuesAsCategories == 1, f"{array}: categorical colour map")
    cats = categories(lut)
    present = set(np.unique(ids).tolist())
    c.check(present <= set(cats), f"every {array} present is annotated ({len(present)} values)")
    c.check(cats.get(-1, ("",))[0] == noise_text, f"-1 is '{noise_text}'")
    grey = cats[-1][1] if -1 in cats else None
    real = sorted(v for v in present if v >= 0)
    first = real[:8]
    colours = [tuple(cats[v][1]) for v in first]
    c.check(len(set(colours)) == len(first), f"the {len(first)} largest {array}s have distinct colours")
    if grey is not None:
        c.check(all(np.abs(cats[v][1] - grey).max() > 0.2 for v in real),
                "no real id shares the grey of -1")
    c.close(d.GaussianRadius, 0.5 * mean_separation(pts), 1e-6,
            "Gaussian radius = 0.5 x mean interparticle separation (V/N)^(1/3)")
    c.check(d.OpacityByArray == 1 and list(d.OpacityArray) == ["POINTS", array],
            f"opacity by {array}")
    x, y = function_points(d.OpacityTransferFunction)
    c.check(np.interp(-1, x, y) <= 0.2 and np.interp(0, x, y) >= 0.99,
            f"id -1 faint (opacity {np.interp(-1, x, y):.2f}), ids >= 0 opaque")
    x, y = function_points(d.ScaleTransferFunction)
    c.check(d.ScaleByArray == 1 and np.interp(-1, x, y) < np.interp(0, x, y),
            "id -1 drawn smaller")


def check_catalogue_spheres(c, cat, d, array, radius):
    """A catalogue shown as spheres of radius `radius`, coloured by `array` in
    the colours of the particles' display d."""
    c.check(cat.Representation == "Point Gaussian" and cat.ShaderPreset == "Sphere",
            f"catalogue as spheres ({cat.Representation}, {cat.ShaderPreset})")
    c.check(list(cat.ColorArrayName) == ["POINTS", array], f"catalogue coloured by {array}")
    c.check(cat.LookupTable.SMProxy == d.LookupTable.SMProxy, "catalogue shares the particles' colours")
    c.check(cat.ScaleByArray == 1 and list(cat.SetScaleArray) == ["POINTS", radius]
            and cat.UseScaleFunction == 0 and cat.GaussianRadius == 1.0,
            f"sphere radius = {radius}")


def sec_fof(c):
    src = particles()
    fof = FriendsOfFriends(Input=src)
    v = view()
    d = simple.Show(fof, v)
    cat = simple.Show(simple.OutputPort(fof, 1), v)
    pts, data = fetch_points(fof)
    ids = point_array(data, "GroupId")
    check_categorical_particles(c, d, "GroupId", "ungrouped", pts, ids)

    # The catalogue: spheres at the centres, radius InertiaRadius, same colours.
    check_catalogue_spheres(c, cat, d, "GroupId", "InertiaRadius")

    # The picture: the centre of each of the 8 largest halos is drawn in the
    # colour of its GroupId (nearest among all annotated colours), and the
    # ungrouped background is faint (mostly the view's background shows).
    centres, catalogue = fetch_points(fof, 1)
    gids = point_array(catalogue, "GroupId")
    simple.ResetCamera(v)
    img = render(v, os.path.join(tempfile.mkdtemp(), "fof.png"))
    cats = categories(d.LookupTable)
    values = sorted(cats)
    table = np.array([cats[k][1] for k in values])
    hits = 0
    for gid in range(8):
        x, y = to_display(v, centres[gids == gid][0])
        patch = img[y - 2:y + 3, x - 2:x + 3].reshape(-1, 3).mean(axis=0)
        nearest = values[int(np.argmin(np.linalg.norm(table - patch, axis=1)))]
        hits += nearest == gid
        print(f"    halo {gid}: pixel {np.round(patch, 2)} nearest to the colour of id {nearest}")
    c.check(hits >= 7, f"the largest halos are drawn in their own colours ({hits} of 8)")
    background = np.asarray(v.Background)
    corner = img[5:60, 5:60].reshape(-1, 3).mean(axis=0)
    c.check(np.abs(corner - background).max() < 0.15,
            f"outside the box the background shows ({np.round(corner, 2)})")


def sec_subhalo(c):
    """SubhaloFinder: particles by SubhaloId ("in no subhalo" faint), the
    catalogue as spheres of radius RVmax (the Vmax circles) in the same colours."""
    from test_subhalo import host_with_satellites
    x, vel, _ = host_with_satellites()
    src = jztest.producer(jztest.polydata(x, {"Velocities": vel}))
    fof = FriendsOfFriends(Input=src, LinkingLengthMode="Absolute", LinkingLength=0.5)
    sub = getattr(simple, "SubhaloFinder")(Input=fof, VelocityArray=["POINTS", "Velocities"])
    v = view()
    d = simple.Show(sub, v)
    cat = simple.Show(simple.OutputPort(sub, 1), v)
    pts, data = fetch_points(sub)
    check_categorical_particles(c, d, "SubhaloId", "in no subhalo", pts,
                                point_array(data, "SubhaloId"))
    check_catalogue_spheres(c, cat, d, "SubhaloId", "RVmax")


def sec_catalogue_views(c):
    # The catalogue's preferred view is a spreadsheet, and it is also shown in
    # the current render view (what the GUI's Apply does).
    fof = FriendsOfFriends(Input=particles())
    v = view()
    controller = servermanager.ParaViewPipelineController()
    preferred = controller.ShowInPreferredView(fof.SMProxy, 1, v.SMProxy)
    c.check(preferred is not None and preferred.GetXMLName() == "SpreadSheetView",
            f"catalogue opens in a spreadsheet ({preferred.GetXMLName() if preferred else None})")
    repr_ = v.SMProxy.FindRepresentation(fof.SMProxy, 1)
    c.check(repr_ is not None, "and is drawn in the render view too")
    if repr_ is not None:
        c.check(servermanager._getPyProxy(repr_).Representation == "Point Gaussian",
                "as spheres")


def sec_extend(c):
    # Re-running with more groups extends the legend and colours; the colours
    # of the groups already there stay.
    fof = FriendsOfFriends(Input=particles(), MinimumGroupSize=50)
    simple.Show(fof, view())
    lut = simple.GetColorTransferFunction("GroupId")
    before = categories(lut)
    fof.MinimumGroupSize = 5
    fof.UpdatePipeline()
    _, data = fetch_points(fof)
    top = int(point_array(data, "GroupId").max())
    after = categories(lut)
    c.check(top > max(before), f"more groups after the change ({max(before)} -> {top})")
    c.check(set(range(-1, top + 1)) <= set(after), "every new GroupId is annotated")
    c.check(all(np.array_equal(after[k][1], before[k][1]) for k in before),
            "the earlier colours are kept")


# ---- KNNDensity ----------------------------------------------------------------

def sec_knn(c):
    knn = KNNDensity(Input=particles())
    d = simple.Show(knn, view())
    _, data = fetch_points(knn)
    rho = point_array(data, "Density").astype(np.float64)
    c.check(d.Representation == "Point Gaussian", "KNN: Point Gaussian")
    c.check(list(d.ColorArrayName) == ["POINTS", "Density"], "coloured by Density")
    lut = d.LookupTable
    c.check(lut.UseLogScale == 1, "logarithmic colour scale")
    rgb = np.asarray(lut.RGBPoints).reshape(-1, 4)
    c.close([rgb[0, 0], rgb[-1, 0]], [rho.min(), rho.max()], 1e-5, "colour range = density range")
    c.close(rgb[0, 1:], [0.001462, 0.000466, 0.013866], 1e-3, "Inferno: black at the low end")
    c.close(rgb[-1, 1:], [0.988362, 0.998364, 0.644924], 1e-3, "Inferno: pale yellow at the high end")
    # log-mapped control points: Inferno's evenly spaced points land evenly in log(rho)
    step = np.diff(np.log(rgb[:, 0]))
    c.check(step.std() < 0.05 * step.mean(), "control points evenly spaced in log(Density)")
    c.check(d.ScaleByArray == 1 and list(d.SetScaleArray) == ["POINTS", "SmoothingLength"]
            and d.UseScaleFunction == 0, "splat radius from SmoothingLength")
    c.check(0 < d.GaussianRadius < 1, f"radius a fraction of h ({d.GaussianRadius})")
    x, y = function_points(d.OpacityTransferFunction)
    c.check(d.OpacityByArray == 1 and np.all(np.diff(y) > 0) and y[0] < 0.1 and y[-1] == 1,
            "opacity rises with density, low densities faint")


def sec_sph_smooth(c):
    # SPHSmooth opens as KNNDensity does: particles coloured by log Density.
    smooth = getattr(simple, "SPHSmooth")(Input=particles(), NumberOfNeighbors=16)
    d = simple.Show(smooth, view())
    _, data = fetch_points(smooth)
    rho = point_array(data, "Density").astype(np.float64)
    c.check(d.Representation == "Point Gaussian", "SPHSmooth: Point Gaussian")
    c.check(list(d.ColorArrayName) == ["POINTS", "Density"], "coloured by Density")
    c.check(d.LookupTable.UseLogScale == 1, "logarithmic colour scale")
    rgb = np.asarray(d.LookupTable.RGBPoints).reshape(-1, 4)
    c.close([rgb[0, 0], rgb[-1, 0]], [rho.min(), rho.max()], 1e-5, "colour range = density range")
    c.check(d.ScaleByArray == 1 and list(d.SetScaleArray) == ["POINTS", "SmoothingLength"],
            "splat radius from SmoothingLength")


def sec_knn_infinite(c):
    # Coincident points give h = 0 and Density = +inf: no log scale is
    # possible; the view still opens, coloured by Density, without errors.
    rng = np.random.default_rng(3)
    pts = np.concatenate([rng.uniform(0, 1, (2000, 3)), np.repeat([[0.5, 0.5, 0.5]], 40, axis=0)])
    knn = KNNDensity(Input=jztest.producer(jztest.polydata(pts)), NumberOfNeighbors=8)
    d = simple.Show(knn, view())
    _, data = fetch_points(knn)
    rho = point_array(data, "Density")
    c.check(np.isinf(rho).any(), "the data has infinite densities")
    c.check(d.Representation == "Point Gaussian" and list(d.ColorArrayName) == ["POINTS", "Density"],
            "still shown as particles coloured by Density")
    c.check(d.OpacityByArray == 0, "no opacity ramp over an infinite range")


def sec_knn_grid(c):
    from paraview.simple import ProgrammableSource
    grid = ProgrammableSource(OutputDataSetType="vtkImageData")
    grid.ScriptRequestInformation = (
        "from paraview import util\nutil.SetOutputWholeExtent(self, [0, 31, 0, 31, 0, 31])")
    grid.Script = ("out = self.GetOutput()\nout.SetExtent(0, 31, 0, 31, 0, 31)\n"
                   "out.SetSpacing(1 / 31.0, 1 / 31.0, 1 / 31.0)")
    knn = KNNDensity(Input=particles(), Query=grid)
    v = view()
    d = simple.Show(knn, v)
    _, data = fetch_points(knn)
    rho = point_array(data, "Density").astype(np.float64)
    c.check(d.Representation == "Volume", f"a Query grid is a volume ({d.Representation})")
    c.check(d.UseSeparateColorMap == 1, "with a colour map of its own")
    lut = d.LookupTable
    rgb = np.asarray(lut.RGBPoints).reshape(-1, 4)
    c.check(lut.UseLogScale == 0, "linear scale (volume mappers index linearly)")
    c.close([rgb[0, 0], rgb[-1, 0]], [rho.min(), rho.max()], 1e-5, "over the density range")
    # Log-spaced points, thinned at the low end to those the mapper's table
    # (16384 steps over the range) resolves: each log step a whole multiple
    # of the top's, and no two points closer than one table step.
    step = np.diff(np.log(rgb[:, 0]))
    top = step[-8:].mean()
    c.check(step[-8:].std() < 0.05 * top, "colour points spaced logarithmically at the top")
    multiple = step[:-1] / top
    c.check(np.abs(multiple - np.round(multiple)).max() < 0.05 * multiple.max(),
            "lower points a log-spaced subset")
    c.check(np.diff(rgb[:, 0]).min() >= (rho.max() - rho.min()) / 16383 * (1 - 1e-6),
            "no two colour points closer than the volume mapper's table step")
    x, y = function_points(d.ScalarOpacityFunction)
    c.check(y[0] == 0 and y[-1] == 1 and np.all(np.diff(y) >= 0), "opacity 0 -> 1 with density")
    mid = np.interp(np.sqrt(rho.min() * rho.max()), x, y)
    c.check(0.1 < mid < 0.5, f"opacity ramp in log(Density): {mid:.2f} at the geometric mean")
    c.check(lut.AutomaticRescaleRangeMode == "Never", "not rescaled linearly on Apply")
    # the shared Density map (for particles) is not touched by the volume
    shared = simple.GetColorTransferFunction("Density")
    c.check(shared.SMProxy != lut.SMProxy, "the shared Density map stays separate")
    img = render(v, os.path.join(tempfile.mkdtemp(), "grid.png"))
    c.check(img.max() > 0.7, f"the volume shows bright dense regions (max {img.max():.2f})")


def sec_sph_maps(c):
    """A projection and a slice show as an image slice on a log colour scale;
    a volume as a volume."""
    for name, array, rep in (("SPHProjection", "SurfaceDensity", "Slice"),
                             ("SPHSlice", "Density", "Slice"), ("SPHVolume", "Density", "Volume")):
        f = getattr(simple, name)(Input=particles(), Resolution=[32, 32, 32][:3 if rep == "Volume" else 2])
        v = view()
        d = simple.Show(f, v)
        c.check(d.Representation == rep, f"{name}: shown as {rep} ({d.Representation})")
        c.check(d.ColorArrayName[1] == array, f"{name}: coloured by {array} ({d.ColorArrayName[1]})")
        if rep == "Slice":
            c.check(d.LookupTable.UseLogScale == 1, f"{name}: log colour scale")
            img = render(v, os.path.join(tempfile.mkdtemp(), name + ".png"))
            c.check(img.max() > 0.5, f"{name}: the picture shows the map (max {img.max():.2f})")
        simple.Delete(d)
        simple.Delete(f)


def sec_knn_surface(c):
    plane = simple.Plane(Origin=[0, 0, 0.5], Point1=[1, 0, 0.5], Point2=[0, 1, 0.5],
                         XResolution=20, YResolution=20)
    knn = KNNDensity(Input=particles(), Query=plane)
    d = simple.Show(knn, view())
    c.check(d.Representation == "Surface", f"a Query surface stays a surface ({d.Representation})")
    c.check(list(d.ColorArrayName) == ["POINTS", "Density"], "coloured by Density")


def sec_user_colormap(c):
    # A colour map the user already set up for Density is kept by new filters.
    first = KNNDensity(Input=particles())
    simple.Show(first, view())
    lut = simple.GetColorTransferFunction("Density")
    lut.ApplyPreset("Cool to Warm", True)
    lut.UseLogScale = 0
    colours = np.asarray(lut.RGBPoints).reshape(-1, 4)[:, 1:]
    second = KNNDensity(Input=particles(), NumberOfNeighbors=8)
    d = simple.Show(second, view())
    c.check(d.LookupTable.SMProxy == lut.SMProxy, "the new view uses the shared Density map")
    # (ParaView itself may rescale the map to the new data range.)
    c.check(lut.UseLogScale == 0 and np.array_equal(
        np.asarray(lut.RGBPoints).reshape(-1, 4)[:, 1:], colours), "which keeps the user's colours")


# ---- state files and the switch -------------------------------------------------

def sec_state(c):
    fof = FriendsOfFriends(Input=particles())
    v = view()
    d = simple.Show(fof, v)
    simple.ColorBy(d, ("POINTS", "Mass"))
    d.GaussianRadius = 0.0123
    d.OpacityByArray = 0
    path = os.path.join(tempfile.mkdtemp(), "state.pvsm")
    simple.SaveState(path)
    simple.ResetSession()
    simple.LoadState(path)
    fof2 = simple.FindSource("FriendsOfFriends1")
    v2 = simple.GetActiveViewOrCreate("RenderView")
    d2 = simple.GetDisplayProperties(fof2, v2)
    c.check(list(d2.ColorArrayName) == ["POINTS", "Mass"], f"state keeps its colouring ({list(d2.ColorArrayName)})")
    c.check(abs(d2.GaussianRadius - 0.0123) < 1e-12 and d2.OpacityByArray == 0,
            "and its radius and opacity settings")


def sec_off(c):
    # JZTREE_DISPLAY_DEFAULTS=0 (set by CTest for this section): ParaView's own look.
    if os.environ.get("JZTREE_DISPLAY_DEFAULTS") != "0":
        print("needs JZTREE_DISPLAY_DEFAULTS=0")
        sys.exit(2)
    fof = FriendsOfFriends(Input=particles())
    d = simple.Show(fof, view())
    lut = simple.GetColorTransferFunction("GroupId")
    c.check(lut.InterpretValuesAsCategories == 0 and d.OpacityByArray == 0,
            "switched off: no categorical colours, no opacity array")


# ---- producers that may still be stand-ins --------------------------------------

def sec_hdbscan(c):
    make, kind = display_standins.ensure("HDBSCAN")
    print(f"  HDBSCAN: {kind}")
    src = particles()
    upstream = src if kind == "real" else FriendsOfFriends(Input=src)
    h = make(Input=upstream)
    d = simple.Show(h, view())
    pts, data = fetch_points(h)
    check_categorical_particles(c, d, "ClusterId", "noise", pts, point_array(data, "ClusterId"))


def sec_gravity(c):
    make, kind = display_standins.ensure("TreeGravity")
    print(f"  TreeGravity: {kind}")
    src = particles()
    g = make(Input=src if kind == "real" else KNNDensity(Input=src))
    d = simple.Show(g, view())
    _, data = fetch_points(g)
    phi = point_array(data, "Potential").astype(np.float64)
    c.check(d.Representation == "Point Gaussian" and list(d.ColorArrayName) == ["POINTS", "Potential"],
            "TreeGravity: particles coloured by Potential")
    lut = d.LookupTable
    rgb = np.asarray(lut.RGBPoints).reshape(-1, 4)
    c.check(lut.UseLogScale == 0, "linear scale (the potential is negative)")
    c.close([rgb[0, 0], rgb[-1, 0]], [phi.min(), phi.max()], 1e-5, "over the potential range")
    c.check(rgb[0, 1:].sum() > rgb[-1, 1:].sum(), "the deepest potential is the bright end")
    x, y = function_points(d.OpacityTransferFunction)
    c.check(y[0] == 1 and y[-1] < 0.1, "deep potential opaque, shallow faint")


def sec_emst(c):
    make, kind = display_standins.ensure("EuclideanMST")
    print(f"  EuclideanMST: {kind}")
    m = make(Input=particles())
    v = view()
    p = simple.Show(m, v)
    e = simple.Show(simple.OutputPort(m, 1), v)
    c.check(p.Representation == "Point Gaussian" and list(p.ColorArrayName)[1] == ""
            and p.Opacity < 0.5, "MST particles: faint grey context")
    c.check(e.Representation == "Surface" and list(e.ColorArrayName) == ["CELLS", "Length"],
            f"edges coloured by Length ({e.Representation}, {list(e.ColorArrayName)})")
    lut = e.LookupTable
    rgb = np.asarray(lut.RGBPoints).reshape(-1, 4)
    c.check(lut.UseLogScale == 1, "logarithmic lengths")
    c.check(rgb[0, 1:].sum() > rgb[-1, 1:].sum(), "short edges (dense regions) the bright end")
    x, y = function_points(lut.ScalarOpacityFunction)
    c.check(lut.EnableOpacityMapping == 1 and y[0] == 1 and y[-1] < 0.1,
            "long edges faint, short ones opaque")


def sec_reader(c):
    make, kind = display_standins.ensure("ParticleSnapshotReader")
    print(f"  ParticleSnapshotReader: {kind}")
    if kind == "real":
        snap = os.path.join(ROOT, "..", "shared", "data", "external", "gadget4-cosmobox-n32-l50",
                            "snapshot_062.hdf5")
        if not os.path.exists(snap):
            print("no ../shared snapshot")
            sys.exit(SKIP)
        r = make(FileName=snap)
    else:
        r = make()
    v = view()
    d = simple.Show(r, v)
    c.check(d.Representation == "Points", f"snapshot as points ({d.Representation})")
    c.check(list(d.ColorArrayName) == ["FIELD", "vtkBlockColors"], "one colour per particle type")
    simple.ResetCamera(v)
    img = render(v, os.path.join(tempfile.mkdtemp(), "reader.png"))
    background = np.asarray(v.Background)
    fg = img.reshape(-1, 3)
    fg = fg[np.abs(fg - background).max(axis=1) > 0.1]
    colours = np.unique(np.round(fg * 4), axis=0)
    c.check(len(fg) > 100 and len(colours) >= 2,
            f"the picture shows the types in different colours ({len(colours)} colour classes)")


SECTIONS = {
    "fof": sec_fof, "subhalo": sec_subhalo, "catalogue_views": sec_catalogue_views, "extend": sec_extend,
    "knn": sec_knn, "knn_infinite": sec_knn_infinite, "knn_grid": sec_knn_grid, "knn_surface": sec_knn_surface,
    "sph_smooth": sec_sph_smooth,
    "user_colormap": sec_user_colormap, "state": sec_state, "off": sec_off,
    "hdbscan": sec_hdbscan, "gravity": sec_gravity, "emst": sec_emst, "reader": sec_reader,
    "sph_maps": sec_sph_maps,
}

if __name__ == "__main__":
    checker = run_section(SECTIONS)
    try:
        checker.finish()
    except SystemExit as done:
        # ParaView 5.11 crashes in its teardown after rendering when the
        # script ends through sys.exit; the result is known here already.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(done.code or 0)
