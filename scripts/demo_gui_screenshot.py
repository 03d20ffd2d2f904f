"""Sets up the ParaView GUI for doc/gui_screenshot.png (run inside the GUI by
scripts/demo_gui_screenshot.sh through `paraview --script`): the Gadget-4
z = 0 snapshot opened through the plugin's reader, KNN Density and Friends Of
Friends with the periodic box from the file, particles coloured by GroupId
(particles in no group grey), the halo catalogue as spheres and as a table,
and the Friends Of Friends panel showing the box taken from BoxSize and the
groups found.
"""
import os

from paraview.simple import *  # noqa: F401,F403

snapshot = os.environ["JZ_SNAPSHOT"]
snap = OpenDataFile(snapshot)
RenameSource("snapshot_062.hdf5", snap)
density = KNNDensity(Input=snap, NumberOfNeighbors=32, MassArray=["POINTS", "Masses"], Periodic=1)
fof = FriendsOfFriends(Input=density, LinkingLength=0.2, MinimumGroupSize=32, Periodic=1,
                       MassArray=["POINTS", "Masses"], VelocityArray=["POINTS", "Velocities"])
fof.UpdatePipeline()

layout = GetLayout()
view = GetActiveViewOrCreate("RenderView")
view.OrientationAxesVisibility = 1
particles = Show(OutputPort(fof, 0), view)
particles.SetRepresentationType("Points")
particles.PointSize = 2
ColorBy(particles, ("POINTS", "GroupId"))
lut = GetColorTransferFunction("GroupId")
lut.ApplyPreset("Rainbow Uniform", True)
lut.RescaleTransferFunction(0.0, 75.0)
lut.AutomaticRescaleRangeMode = "Never"
lut.UseBelowRangeColor = 1
lut.BelowRangeColor = [0.55, 0.57, 0.62]  # GroupId -1: in no group
particles.SetScalarBarVisibility(view, True)
bar = GetScalarBar(lut, view)
bar.Title = "GroupId"
bar.ComponentTitle = ""
bar.RangeLabelFormat = "%.0f"
catalogue = Show(OutputPort(fof, 1), view)
catalogue.SetRepresentationType("Points")
catalogue.RenderPointsAsSpheres = 1
catalogue.PointSize = 9
ColorBy(catalogue, None)
catalogue.AmbientColor = catalogue.DiffuseColor = [1.0, 1.0, 1.0]
catalogue.Opacity = 0.6
for source in (snap, density):
    Hide(source, view)
view.CameraPosition = [118, 88, 74]
view.CameraFocalPoint = [25, 25, 25]
view.CameraViewUp = [0, 0, 1]
view.ResetCamera(False)
Render(view)

# The catalogue as a table beside the view.
layout.SplitHorizontal(0, 0.58)
table = CreateView("SpreadSheetView")
AssignViewToLayout(view=table, layout=layout, hint=2)
Show(OutputPort(fof, 1), table)
table.HiddenColumnLabels = ["Point ID", "Points", "Points_Magnitude", "CenterOfMass_Magnitude",
                            "MeanVelocity_Magnitude", "Block Number"]
SetActiveView(view)
SetActiveSource(fof)
Render(view)
