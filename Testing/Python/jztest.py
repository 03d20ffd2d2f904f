"""Shared helpers of the JZTree pvpython tests.

The plugin is found through PV_PLUGIN_PATH (set by CTest) or, failing that,
at build/lib/paraview-5.11/plugins/JZTree/JZTree.so under the repository.
Reference answers come from scipy's cKDTree, which shares no code with the
jz-tree kernels.
"""
import os
import sys

import numpy as np
from scipy.spatial import cKDTree

from paraview import servermanager
from paraview.simple import *  # noqa: F401,F403
from vtkmodules.util.misc import calldata_type
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray, vtk_to_numpy
from vtkmodules.util.vtkConstants import VTK_STRING
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkPolyData

from checks import Checker  # noqa: F401 (re-exported for the tests)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP = 125  # CTest SKIP_RETURN_CODE


def load_plugin():
    """Makes KNNDensity available here (idempotent). With PV_PLUGIN_PATH set,
    ParaView has usually loaded the plugin at start-up already."""
    if "KNNDensity" in globals():
        return
    path = None
    for d in os.environ.get("PV_PLUGIN_PATH", "").split(os.pathsep):
        if d and os.path.exists(os.path.join(d, "JZTree.so")):
            path = os.path.join(d, "JZTree.so")
            break
    if path is None:
        path = os.path.join(ROOT, "build/lib/paraview-5.11/plugins/JZTree/JZTree.so")
    LoadPlugin(path, ns=globals())


load_plugin()
simple = sys.modules["paraview.simple"]
KNNDensity = globals()["KNNDensity"]


def polydata(points, arrays=None):
    """vtkPolyData with the given (n, 3) points (dtype kept) and point arrays."""
    pd = vtkPolyData()
    pts = vtkPoints()
    pts.SetData(numpy_to_vtk(np.ascontiguousarray(points), deep=1))
    pd.SetPoints(pts)
    for name, values in (arrays or {}).items():
        values = np.ascontiguousarray(values)
        if values.dtype == np.int64:
            arr = numpy_to_vtkIdTypeArray(values, deep=1)
        else:
            arr = numpy_to_vtk(values, deep=1)
        arr.SetName(name)
        pd.GetPointData().AddArray(arr)
    return pd


def producer(data):
    """A pipeline source proxy holding a VTK data object."""
    tp = simple.TrivialProducer()
    tp.GetClientSideObject().SetOutput(data)
    return tp


class Run:
    """One KNNDensity execution: the output data object and captured errors."""

    def __init__(self, output, errors):
        self.output = output
        self.errors = errors

    def array(self, name):
        arr = self.output.GetPointData().GetArray(name)
        if arr is None:
            return None
        a = vtk_to_numpy(arr)
        return a.reshape(len(a), -1) if arr.GetNumberOfComponents() > 1 else a

    def has(self, name):
        """Whether the output (any block of a composite output) has the array."""
        if self.output.IsA("vtkCompositeDataSet"):
            it = self.output.NewIterator()
            it.InitTraversal()
            while not it.IsDoneWithTraversal():
                pd = it.GetCurrentDataObject().GetPointData()
                if pd.GetAbstractArray(name) is not None:
                    return True
                it.GoToNextItem()
            return False
        return self.output.GetPointData().GetAbstractArray(name) is not None

    def device(self):
        arr = self.output.GetFieldData().GetAbstractArray("JZDevice")
        return arr.GetValue(0) if arr is not None else None


def _update_observing(proxy, observers, time=None):
    """Updates a filter proxy (at `time` when given) with the observers,
    (event, callback) pairs, on its VTK algorithm; returns the algorithm."""
    alg = proxy.GetClientSideObject()
    tags = [alg.AddObserver(event, callback) for event, callback in observers]
    try:
        if time is None:
            proxy.UpdatePipeline()
        else:
            proxy.UpdatePipeline(time)
    finally:
        for tag in tags:
            alg.RemoveObserver(tag)
    return alg


def _collector(messages):
    """An observer of a message event that appends the message to `messages`."""
    @calldata_type(VTK_STRING)
    def on_event(obj, event, message):
        messages.append(message)
    return on_event


def _update_collecting_events(proxy, events, time=None):
    """Updates a filter proxy; returns its VTK algorithm and, per event of
    `events`, the messages it raised meanwhile."""
    messages = [[] for _ in events]
    alg = _update_observing(proxy, [(e, _collector(m)) for e, m in zip(events, messages)], time)
    return alg, messages


def update_collecting(proxy, time=None):
    """Updates a filter proxy (at `time` when given); returns its VTK
    algorithm and the messages of the error and of the warning events it
    raised meanwhile."""
    alg, (errors, warnings) = _update_collecting_events(
        proxy, ("ErrorEvent", "WarningEvent"), time)
    return alg, errors, warnings


def update_collecting_errors(proxy, time=None):
    """Updates a filter proxy (at `time` when given); returns its VTK
    algorithm and the messages of the error events it raised meanwhile
    (warnings are printed as usual)."""
    alg, (errors,) = _update_collecting_events(proxy, ("ErrorEvent",), time)
    return alg, errors


def data_leaves(obj):
    """The data sets of a data object: its leaves when composite (in the
    filters' traversal order), else the object itself."""
    if not obj.IsA("vtkCompositeDataSet"):
        return [obj]
    leaves = []
    it = obj.NewIterator()
    it.InitTraversal()
    while not it.IsDoneWithTraversal():
        leaves.append(it.GetCurrentDataObject())
        it.GoToNextItem()
    return leaves


# A time series for a ProgrammableSource, read from an npz file at {path}
# (format the scripts with path=...) whose 'times' are the time steps and
# whose other arrays are per step. SERIES_INFO_SCRIPT is the
# ScriptRequestInformation; a Script starts with SERIES_STEP_SCRIPT (d the
# npz, s the step served: the last at or before the requested time), defines
# piece(sel) (a vtkPolyData of the selected points of step s) and n, and ends
# with SERIES_OUTPUT_SCRIPT (one piece, or two blocks for a multiblock output).
SERIES_INFO_SCRIPT = """
import numpy as np
times = np.load(r'{path}')['times']
info = self.GetOutputInformation(0)
ex = self.GetExecutive()
info.Remove(ex.TIME_STEPS())
info.Remove(ex.TIME_RANGE())
for t in times:
    info.Append(ex.TIME_STEPS(), float(t))
if len(times):
    info.Append(ex.TIME_RANGE(), float(times[0]))
    info.Append(ex.TIME_RANGE(), float(times[-1]))
"""

SERIES_STEP_SCRIPT = """
import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray
from vtkmodules.vtkCommonCore import vtkPoints
d = np.load(r'{path}')
times = d['times']
info = self.GetOutputInformation(0)
ex = self.GetExecutive()
t = info.Get(ex.UPDATE_TIME_STEP()) if info.Has(ex.UPDATE_TIME_STEP()) else 0.0
s = int(np.searchsorted(times, t, side='right')) - 1 if len(times) else 0
s = s if s > 0 else 0
"""

SERIES_OUTPUT_SCRIPT = """
out = self.GetOutputDataObject(0)
if out.IsA('vtkMultiBlockDataSet'):
    half = np.arange(n) % 2 == 0
    out.SetNumberOfBlocks(2)
    out.SetBlock(0, piece(half))
    out.SetBlock(1, piece(~half))
else:
    out.ShallowCopy(piece(np.ones(n, bool)))
if len(times):
    out.GetInformation().Set(out.DATA_TIME_STEP(), float(times[s]))
"""


def count_fof_executions(proxy):
    """Counts a FriendsOfFriends proxy's executions by what they did: a dict
    {"computing": n, "reusing": m} that grows at each execution's end (the
    filter's progress text says whether it computed the groups or reused the
    cached result of the time step)."""
    alg = proxy.GetClientSideObject()
    counts = {"computing": 0, "reusing": 0}

    def on_end(obj, event):
        text = (obj.GetProgressText() or "").lower()
        for what in counts:
            if what in text:
                counts[what] += 1

    alg.AddObserver("EndEvent", on_end)
    return counts


def update_observing_progress(proxy, observer):
    """Updates a filter proxy with observer(alg, event) on its ProgressEvent;
    returns its VTK algorithm."""
    return _update_observing(proxy, [("ProgressEvent", observer)])


def check_progress_in_steps(c, proxy):
    """Updates the proxy: it reports at least 3 increasing values in (0, 1)."""
    seen = []
    update_observing_progress(proxy, lambda o, e: seen.append(o.GetProgress()))
    inner = [p for p in seen if 0 < p < 1]
    return c.check(len(inner) >= 3 and inner == sorted(inner),
                   f"progress reported in steps ({len(inner)} values in (0,1), increasing)")


def update_aborting(proxy):
    """Updates the proxy, aborting from the progress callback once past 0.2
    (what the GUI's cancel does); returns its VTK algorithm."""

    def abort(o, e):
        if o.GetProgress() > 0.2:
            o.SetAbortExecute(1)

    return update_observing_progress(proxy, abort)


def output_copies(alg, ports=1):
    """Shallow copies of the first `ports` outputs of a VTK algorithm, which
    outlive its proxy."""
    copies = []
    for port in range(ports):
        o = alg.GetOutputDataObject(port)
        c = o.NewInstance()
        c.ShallowCopy(o)
        copies.append(c)
    return copies


def _run_filter(make, data, query, ports, props, update):
    """run_filter's work; update(proxy) returns the VTK algorithm and the
    lists of messages returned after the output copies."""
    sources = [producer(data)]
    kwargs = dict(Input=sources[0])
    if query is not None:
        sources.append(producer(query))
        kwargs["Query"] = sources[1]
    f = make(**kwargs)
    for k, v in props.items():
        setattr(f, k, v)
    alg, *messages = update(f)
    outs = output_copies(alg, ports)
    simple.Delete(f)
    simple.Delete(sources[0])
    return (outs, *messages)


def run_filter(make, data, query=None, ports=1, **props):
    """Runs the filter proxy `make` (e.g. KNNDensity) on a VTK data object
    (and an optional Query data object) with the properties `props`; returns
    copies of its first `ports` outputs and the errors it reported."""
    return _run_filter(make, data, query, ports, props, update_collecting_errors)


def run_filter_collecting(make, data, query=None, ports=1, **props):
    """run_filter, returning the warnings the filter reported after its errors."""
    return _run_filter(make, data, query, ports, props, update_collecting)


def knn(data, query=None, **props):
    """Runs KNNDensity on a VTK data object (and optional query data object)."""
    (out,), errors = run_filter(KNNDensity, data, query, **props)
    return Run(out, errors)


def wrap(points, box):
    """Points wrapped into the periodic box (xmin xmax ymin ymax zmin zmax)."""
    lo = np.array(box[0::2], dtype=np.float64)
    length = np.array(box[1::2], dtype=np.float64) - lo
    w = lo + np.mod(points.astype(np.float64) - lo, length)
    return np.where(w >= lo + length, lo, w), lo, length


def reference(points, queries, k, box=None):
    """Exact K-NN distances (float64) from cKDTree; (distances, ids)."""
    p = points.astype(np.float64)
    q = (points if queries is None else queries).astype(np.float64)
    if box is None:
        tree = cKDTree(p)
        d, i = tree.query(q, k)
    else:
        pw, lo, length = wrap(p, box)
        qw, _, _ = wrap(q, box)
        tree = cKDTree(pw - lo, boxsize=length)
        d, i = tree.query(qw - lo, k)
    return d.reshape(len(q), k), i.reshape(len(q), k)


def true_distances(points, queries, ids, box=None):
    """Float64 distance of each query to each of its reported neighbours."""
    p = points.astype(np.float64)
    q = (points if queries is None else queries).astype(np.float64)
    diff = p[ids] - q[:, None, :]
    if box is not None:
        length = np.array(box[1::2], dtype=np.float64) - np.array(box[0::2], dtype=np.float64)
        diff = np.mod(diff, length)  # points may lie several periods apart
        diff = np.minimum(diff, length - diff)
    return np.sqrt((diff ** 2).sum(axis=2))


def tolerance(dtype):
    return 1e-5 if dtype == np.float32 else 1e-10


def sph_density(dist, h, masses):
    """rho_i = sum_j m_j W(r_ij, h_i), M4 kernel with compact support h."""
    q = dist / h[:, None]
    w = np.where(q <= 0.5, 1 - 6 * q**2 + 6 * q**3,
                 np.where(q <= 1.0, 2 * (1 - q) ** 3, 0.0))
    return (masses * w).sum(axis=1) * 8.0 / (np.pi * h**3)


def tophat_density(h, masses):
    return masses.sum(axis=1) / (4.0 / 3.0 * np.pi * h**3)


def verify_neighbors(c, run, points, queries, k, box=None, ids_map=None, label="", atol=None):
    """Exactness of a run with OutputNeighbors on, against cKDTree.

    Distances equal the reference K smallest; every row lists K distinct ids;
    every id is at its reported distance (so ties may be broken either way).
    """
    dtype = points.dtype
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    # Output rounding: float32 distances below 1e-38 are subnormal, with an
    # absolute spacing of 1.4e-45.
    if atol is None:
        atol = 2e-45 if dtype == np.float32 else 1e-320
    nq = len(points) if queries is None else len(queries)
    ref_d, _ = reference(points, queries, k, box)
    nid = run.array("NeighborIds")
    nd = run.array("NeighborDistances")
    h = run.array("SmoothingLength")
    if not c.check(nid is not None and nd is not None and h is not None,
                   f"{label}: output arrays present"):
        return
    nid = nid.reshape(nq, k)
    nd = nd.reshape(nq, k)
    if ids_map is not None:  # GlobalIds -> point index
        inverse = {g: i for i, g in enumerate(ids_map)}
        nid = np.vectorize(inverse.get)(nid)
    c.close(nd, ref_d, rtol, f"{label}: NeighborDistances == cKDTree", atol=atol)
    c.close(h, ref_d[:, -1], rtol, f"{label}: SmoothingLength == K-th distance", atol=atol)
    c.check(bool(np.all(np.diff(nd, axis=1) >= 0)), f"{label}: distances nearest first")
    srt = np.sort(nid, axis=1)
    c.check(bool(np.all(srt[:, 1:] != srt[:, :-1])), f"{label}: no id repeated in a row")
    c.check(bool(np.all((nid >= 0) & (nid < len(points)))), f"{label}: ids in range")
    actual = true_distances(points, queries, np.clip(nid, 0, len(points) - 1), box)
    c.close(nd, actual, rtol, f"{label}: every id at its reported distance", atol=atol)
