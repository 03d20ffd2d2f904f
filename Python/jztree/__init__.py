"""jztree: the jz-tree kernels of JZ-Tree for ParaView over numpy arrays.

Exact k nearest neighbours and densities, friends-of-friends groups with a
halo catalogue, Euclidean minimum spanning trees, HDBSCAN*, tree gravity and
SPH maps (projection, slice, volume),
without ParaView. Every function takes points as an (N, 3) float32 or
float64 array (used in place when C-contiguous), releases the GIL while it
runs, stops on Ctrl-C, takes ``box=None | L | (Lx, Ly, Lz)`` for a periodic
box [0, L) where periodic boundaries apply, ``device="auto" | "cpu" |
"cuda"`` and ``comm=None | an mpi4py communicator`` (each rank passes its
own points; the result is that of the serial call on all points). Bad input
raises ValueError (TypeError for a wrong dtype). See doc/python.md.
"""
from . import _jztree

# Every public function of the extension (one file per family registers its
# functions there), re-exported here.
__all__ = sorted(name for name in dir(_jztree) if not name.startswith("_"))
globals().update({name: getattr(_jztree, name) for name in __all__})
for _function in __all__:
    try:  # help() then names the package, where users find the functions
        globals()[_function].__module__ = __name__
    except (AttributeError, TypeError):
        pass
del _function
