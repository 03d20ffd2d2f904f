"""The two sessions every pvserver client compares: the same pipeline on a
2-rank pvserver (the plugin loaded on both sides) and in a serial built-in
session, the reference."""
from paraview import servermanager
from paraview.simple import Connect, Disconnect, LoadPlugin


def parallel_and_serial(port, plugin, run, check):
    """run(ns) builds the pipeline and returns what it fetched; ns holds the
    plugin's proxy constructors. Returns (parallel result, serial result)."""
    Connect("localhost", port)
    ns = {}
    LoadPlugin(plugin, remote=True, ns=ns)
    LoadPlugin(plugin, remote=False, ns=ns)
    check(servermanager.ActiveConnection.GetNumberOfDataPartitions() == 2, "pvserver has 2 ranks")
    par = run(ns)
    Disconnect()
    Connect()
    ns = {}
    LoadPlugin(plugin, remote=False, ns=ns)
    return par, run(ns)
