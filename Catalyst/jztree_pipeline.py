"""Catalyst (ParaView 5.11, legacy API, script version 2) pipeline for JZ-Tree.

Each step: FriendsOfFriends and KNNDensity on the simulation's particles
(channel "input"); the halo catalogue is written per step as CSV
(halos_NNNN.csv), an image every JZ_IMAGE_EVERY steps (image_NNNN.png), and
the particles of the last step (particles_NNNN.vtp) so that a test can redo
the analysis offline.

The plugin is loaded from JZ_PLUGIN (the path of JZTree.so) when set;
otherwise PV_PLUGIN_PATH must name its directory (ParaView loads it at start).
JZ_OUT is the output directory (default ./catalyst-out).
"""
import os

from paraview import catalyst
from paraview import servermanager
from paraview.simple import *  # noqa: F401,F403

plugin = os.environ.get("JZ_PLUGIN")
if plugin:
    LoadPlugin(plugin, ns=globals())
out = os.environ.get("JZ_OUT", "catalyst-out")
image_every = int(os.environ.get("JZ_IMAGE_EVERY", "5"))
box = [0, 1, 0, 1, 0, 1]

# The simulation's particles: a producer with the channel's name.
particles = TrivialProducer(registrationName="input")
fof = FriendsOfFriends(registrationName="fof", Input=particles, LinkingLengthMode="Relative",
                       LinkingLength=0.2, MinimumGroupSize=20, Periodic=1, BoxBounds=box,
                       MassArray=["POINTS", "Mass"], VelocityArray=["POINTS", "Velocity"])
knn = KNNDensity(registrationName="knn", Input=particles, NumberOfNeighbors=32,
                 MassArray=["POINTS", "Mass"], Periodic=1, BoxBounds=box)

options = catalyst.Options()
options.GlobalTrigger = "TimeStep"
options.CatalystLiveTrigger = "TimeStep"

view = None


def write_catalogue(path, catalogue):
    """Rank 0 writes the (gathered) catalogue, one row per group by GroupId."""
    from vtkmodules.util.numpy_support import vtk_to_numpy
    import numpy as np
    pd = catalogue.GetPointData()
    n = catalogue.GetNumberOfPoints()
    cols = {name: vtk_to_numpy(pd.GetArray(name)).reshape(n, -1) if n else np.zeros((0, 1))
            for name in ("GroupId", "Count", "Mass", "CenterOfMass", "InertiaRadius",
                         "MeanVelocity", "VelocityDispersion")}
    order = np.argsort(cols["GroupId"][:, 0], kind="stable")
    with open(path, "w") as f:
        f.write("GroupId,Count,Mass,x,y,z,InertiaRadius,vx,vy,vz,VelocityDispersion\n")
        for i in order:
            row = [int(cols["GroupId"][i, 0]), int(cols["Count"][i, 0]), cols["Mass"][i, 0],
                   *cols["CenterOfMass"][i], cols["InertiaRadius"][i, 0],
                   *cols["MeanVelocity"][i], cols["VelocityDispersion"][i, 0]]
            f.write(",".join(repr(v) if isinstance(v, int) else "%.9g" % v for v in row) + "\n")


def catalyst_execute(info):
    global view
    from paraview.modules.vtkRemotingCore import vtkProcessModule
    rank = vtkProcessModule.GetProcessModule().GetPartitionId()
    step = info.timestep
    os.makedirs(out, exist_ok=True)
    fof.UpdatePipeline(info.time)
    knn.UpdatePipeline(info.time)
    catalogue = servermanager.Fetch(fof, idx=1)  # gathered on rank 0
    if rank == 0:
        write_catalogue(os.path.join(out, "halos_%04d.csv" % step), catalogue)
        rho = knn.PointData["Density"].GetRange()
        print("catalyst step %d: %d groups, density %.3g .. %.3g"
              % (step, catalogue.GetNumberOfPoints(), rho[0], rho[1]), flush=True)
    if info.cycle == int(os.environ.get("JZ_STEPS", "10")) - 1:
        particles_all = servermanager.Fetch(particles)
        if rank == 0:
            from vtkmodules.vtkIOXML import vtkXMLPolyDataWriter
            w = vtkXMLPolyDataWriter()
            w.SetInputData(particles_all)
            w.SetFileName(os.path.join(out, "particles_%04d.vtp" % step))
            w.Write()
    if image_every > 0 and step % image_every == 0:
        if view is None:
            view = CreateView("RenderView")
            view.ViewSize = [600, 600]
            view.OrientationAxesVisibility = 0
            d = Show(knn, view)
            d.SetRepresentationType("Point Gaussian")
            d.GaussianRadius = 0.003
            ColorBy(d, ("POINTS", "Density"))
            GetColorTransferFunction("Density").UseLogScale = 1
            h = Show(OutputPort(fof, 1), view)
            h.SetRepresentationType("Points")
            h.PointSize = 8
            h.RenderPointsAsSpheres = 1
            h.ColorArrayName = ["POINTS", ""]
            h.AmbientColor = h.DiffuseColor = [1, 1, 1]
            view.CameraPosition = [0.5, 0.5, 3.2]
            view.CameraFocalPoint = [0.5, 0.5, 0.5]
            view.CameraViewUp = [0, 1, 0]
        GetDisplayProperties(knn, view).RescaleTransferFunctionToDataRange(False, True)
        SaveScreenshot(os.path.join(out, "image_%04d.png" % step), view, ImageResolution=[600, 600])
