"""Stand-ins for JZ-Tree producers that are not built yet, for the tests of the
default views (test_display_defaults.py). The default looks are keyed on the
producers' XML names and output arrays (Plugin/Display/JZDisplayTable.cxx); a stand-in
is a Python algorithm plugin with the name and the outputs that the filter
pages (doc/filters) give the real one (ClusterId, Potential, the Edges port with a
Length cell array, PartType<n> blocks), so that a look is tested before its
producer lands. A name that the loaded plugin already defines is never
replaced: the real producer is tested instead.
"""
import inspect
import os
import tempfile

from paraview import servermanager

# Debian's ParaView 5.11 loads Python plugins through a module that imports
# inspect.getargspec, which Python 3.11 removed; it only reads .args.
if not hasattr(inspect, "getargspec"):
    inspect.getargspec = inspect.getfullargspec

HEADER = '''
import numpy as np
from paraview.util.vtkAlgorithm import smdomain, smproperty, smproxy
from vtkmodules.util.numpy_support import numpy_to_vtk, numpy_to_vtkIdTypeArray, vtk_to_numpy
from vtkmodules.util.vtkAlgorithm import VTKPythonAlgorithmBase
from vtkmodules.vtkCommonDataModel import vtkPolyData


def _array(name, values):
    values = np.ascontiguousarray(values)
    arr = numpy_to_vtkIdTypeArray(values, deep=1) if values.dtype == np.int64 else numpy_to_vtk(values, deep=1)
    arr.SetName(name)
    return arr


def _point_filter(name):
    """Declares a filter proxy `name` of one vtkPolyData input."""
    def declare(cls):
        cls = smdomain.datatype(dataTypes=["vtkPolyData"], composite_data_supported=False)(cls)
        cls = smproperty.input(name="Input", port_index=0)(cls)
        return smproxy.filter(name=name, label=name)(cls)
    return declare


class _PointArraysStandIn(VTKPythonAlgorithmBase):
    """A point set in, the same points out with the arrays that
    new_arrays(point data of the input) names."""

    def __init__(self):
        VTKPythonAlgorithmBase.__init__(self, nInputPorts=1, nOutputPorts=1, outputType="vtkPolyData")

    def RequestData(self, request, inInfo, outInfo):
        inp = vtkPolyData.GetData(inInfo[0])
        out = vtkPolyData.GetData(outInfo)
        out.ShallowCopy(inp)
        for name, values in self.new_arrays(inp.GetPointData()).items():
            out.GetPointData().AddArray(_array(name, values))
        return 1
'''

# name: (group, plugin body). Filters take a point set and read the arrays of
# an upstream JZ-Tree filter, so that their outputs look like the real ones.
STANDINS = {
    "HDBSCAN": ("filters", '''
@_point_filter("HDBSCAN")
class HDBSCANStandIn(_PointArraysStandIn):
    """ClusterId from an upstream GroupId (-1 noise), Probability, OutlierScore."""

    def new_arrays(self, pd):
        ids = vtk_to_numpy(pd.GetArray("GroupId")).astype(np.int64)
        return {"ClusterId": ids, "Probability": (ids >= 0).astype(np.float64),
                "OutlierScore": (ids < 0).astype(np.float64)}
'''),
    "TreeGravity": ("filters", '''
@_point_filter("TreeGravity")
class TreeGravityStandIn(_PointArraysStandIn):
    """A negative Potential, deepest where an upstream Density is highest."""

    def new_arrays(self, pd):
        rho = vtk_to_numpy(pd.GetArray("Density")).astype(np.float64)
        return {"Potential": -np.log10(rho), "Acceleration": np.zeros((len(rho), 3))}
'''),
    "EuclideanMST": ("filters", '''
@_point_filter("EuclideanMST")
class EuclideanMSTStandIn(VTKPythonAlgorithmBase):
    """Port 0 the particles; port 1 ("Edges") the minimum spanning tree of
    the 8-nearest-neighbour graph (scipy), as lines with Length and EndpointIds."""

    def __init__(self):
        VTKPythonAlgorithmBase.__init__(self, nInputPorts=1, nOutputPorts=2, outputType="vtkPolyData")

    def RequestData(self, request, inInfo, outInfo):
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import minimum_spanning_tree
        from scipy.spatial import cKDTree
        from vtkmodules.vtkCommonCore import vtkPoints
        from vtkmodules.vtkCommonDataModel import vtkCellArray
        inp = vtkPolyData.GetData(inInfo[0])
        vtkPolyData.GetData(outInfo, 0).ShallowCopy(inp)
        pts = vtk_to_numpy(inp.GetPoints().GetData()).astype(np.float64)
        d, j = cKDTree(pts).query(pts, k=9)
        i = np.repeat(np.arange(len(pts)), 8)
        graph = coo_matrix((d[:, 1:].ravel() + 1e-300, (i, j[:, 1:].ravel())), shape=(len(pts),) * 2)
        mst = minimum_spanning_tree(graph).tocoo()
        a, b = np.minimum(mst.row, mst.col), np.maximum(mst.row, mst.col)
        edges = vtkPolyData.GetData(outInfo, 1)
        points = vtkPoints()
        points.SetData(numpy_to_vtk(np.concatenate([pts[a], pts[b]]), deep=1))
        edges.SetPoints(points)
        n = len(a)
        conn = np.column_stack([np.full(n, 2), np.arange(n), np.arange(n) + n]).astype(np.int64).ravel()
        lines = vtkCellArray()
        lines.SetCells(n, numpy_to_vtkIdTypeArray(conn, deep=1))
        edges.SetLines(lines)
        edges.GetCellData().AddArray(_array("Length", np.linalg.norm(pts[a] - pts[b], axis=1)))
        edges.GetCellData().AddArray(_array("EndpointIds", np.column_stack([a, b]).astype(np.int64)))
        return 1
'''),
    "ParticleSnapshotReader": ("sources", '''
@smproxy.source(name="ParticleSnapshotReader", label="ParticleSnapshotReader")
class ParticleSnapshotReaderStandIn(VTKPythonAlgorithmBase):
    """Two particle types in blocks PartType0 (a uniform gas) and PartType1
    (a clump), vertices, with Masses and the field array BoxSize."""

    def __init__(self):
        VTKPythonAlgorithmBase.__init__(self, nInputPorts=0, nOutputPorts=1,
                                        outputType="vtkMultiBlockDataSet")

    def RequestData(self, request, inInfo, outInfo):
        from vtkmodules.vtkCommonCore import vtkPoints
        from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkCompositeDataSet, vtkMultiBlockDataSet
        rng = np.random.default_rng(7)
        sets = [rng.uniform(0, 10, (3000, 3)), 5 + rng.normal(0, 0.7, (3000, 3))]
        out = vtkMultiBlockDataSet.GetData(outInfo)
        out.SetNumberOfBlocks(len(sets))
        for t, xyz in enumerate(sets):
            pd = vtkPolyData()
            points = vtkPoints()
            points.SetData(numpy_to_vtk(xyz, deep=1))
            pd.SetPoints(points)
            n = len(xyz)
            verts = vtkCellArray()
            conn = np.column_stack([np.ones(n), np.arange(n)]).astype(np.int64).ravel()
            verts.SetCells(n, numpy_to_vtkIdTypeArray(conn, deep=1))
            pd.SetVerts(verts)
            pd.GetPointData().AddArray(_array("Masses", np.full(n, 1.0 + t)))
            pd.GetFieldData().AddArray(_array("BoxSize", np.array([10.0])))
            out.SetBlock(t, pd)
            out.GetMetaData(t).Set(vtkCompositeDataSet.NAME(), "PartType%d" % t)
        return 1
'''),
}


def defined(group, name):
    pxm = servermanager.ProxyManager().SMProxyManager
    return pxm.GetProxyDefinitionManager().HasDefinition(group, name)


def ensure(name):
    """The paraview.simple function that creates producer `name`: the
    plugin's own when it defines it, else the stand-in's; and which it is."""
    import paraview.simple as simple
    group, body = STANDINS[name]
    if defined(group, name):
        return getattr(simple, name), "real"
    path = os.path.join(tempfile.mkdtemp(prefix="jz_standin_"), f"{name}_standin.py")
    with open(path, "w") as f:
        f.write(HEADER + body)
    simple.LoadPlugin(path)  # adds its function to paraview.simple
    return getattr(simple, name), "stand-in"
