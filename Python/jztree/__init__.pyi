# Type stubs of the jztree module (the functions live in jztree._jztree).
from typing import Any, Dict, Literal, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

ArrayLike = npt.ArrayLike
Box = Union[None, float, Sequence[float]]
Device = Literal["auto", "cpu", "cuda"]
Comm = Any  # an mpi4py.MPI.Comm, or None

__all__: list[str]

class DeviceError(ValueError, RuntimeError): ...

def knn(
    points: ArrayLike,
    k: int,
    queries: Optional[ArrayLike] = None,
    box: Box = None,
    device: Device = "auto",
    comm: Comm = None,
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.floating]]: ...
def density(
    points: ArrayLike,
    k: int = 32,
    masses: Optional[ArrayLike] = None,
    estimator: Literal["sph", "tophat"] = "sph",
    queries: Optional[ArrayLike] = None,
    box: Box = None,
    device: Device = "auto",
    comm: Comm = None,
) -> Tuple[npt.NDArray[np.floating], npt.NDArray[np.floating]]: ...
def fof(
    points: ArrayLike,
    linking_length: float,
    min_size: int = 20,
    relative: bool = True,
    masses: Optional[ArrayLike] = None,
    velocities: Optional[ArrayLike] = None,
    box: Box = None,
    device: Device = "auto",
    comm: Comm = None,
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], Dict[str, np.ndarray]]: ...
def emst(
    points: ArrayLike,
    min_samples: Optional[int] = None,
    box: Box = None,
    device: Device = "auto",
    comm: Comm = None,
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def hdbscan(
    points: ArrayLike,
    min_cluster_size: int = 20,
    min_samples: Optional[int] = None,
    method: Literal["eom", "leaf"] = "eom",
    allow_single_cluster: bool = False,
    box: Box = None,
    device: Device = "auto",
    comm: Comm = None,
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def gravity(
    points: ArrayLike,
    masses: Optional[ArrayLike] = None,
    theta: float = 0.5,
    softening: float = 0.0,
    G: float = 1.0,
    queries: Optional[ArrayLike] = None,
    device: Device = "auto",
    comm: Comm = None,
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def sph_projection(
    points: ArrayLike,
    masses: Optional[ArrayLike] = None,
    h: Optional[ArrayLike] = None,
    k: int = 32,
    axis: int = 2,
    resolution: Sequence[int] = (512, 512),
    region: Optional[Sequence[float]] = None,
    box: Box = None,
    kernel: Literal["cubic", "wendland"] = "cubic",
    h_scale: float = 1.0,
    device: Device = "auto",
    comm: Comm = None,
) -> npt.NDArray[np.float64]: ...
def sph_slice(
    points: ArrayLike,
    position: float,
    masses: Optional[ArrayLike] = None,
    h: Optional[ArrayLike] = None,
    k: int = 32,
    axis: int = 2,
    resolution: Sequence[int] = (512, 512),
    region: Optional[Sequence[float]] = None,
    box: Box = None,
    kernel: Literal["cubic", "wendland"] = "cubic",
    h_scale: float = 1.0,
    arrays: Optional[Dict[str, ArrayLike]] = None,
    device: Device = "auto",
    comm: Comm = None,
) -> Dict[str, npt.NDArray[np.float64]]: ...
def sph_volume(
    points: ArrayLike,
    masses: Optional[ArrayLike] = None,
    h: Optional[ArrayLike] = None,
    k: int = 32,
    resolution: Sequence[int] = (128, 128, 128),
    region: Optional[Sequence[float]] = None,
    box: Box = None,
    kernel: Literal["cubic", "wendland"] = "cubic",
    h_scale: float = 1.0,
    device: Device = "auto",
    comm: Comm = None,
) -> npt.NDArray[np.float64]: ...
