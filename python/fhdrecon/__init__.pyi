# Type stubs of the fhdrecon package (docs/python.md).
import os
from typing import Any, Dict, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._io import Scan as Scan

__version__: str

ArrayLike = Any  # a NumPy array, a CuPy array or a PyTorch tensor
PathLike = Union[str, bytes, os.PathLike]  # a file name: str, bytes, pathlib.Path, ...

def has_cuda() -> bool: ...

class Plan:
    type: int
    n_modes: Tuple[int, ...]
    dim: int
    n_trans: int
    eps: float
    isign: int
    dtype: np.dtype
    nj: int
    def __init__(
        self,
        nufft_type: int,
        n_modes: Union[int, Sequence[int]],
        n_trans: int = ...,
        eps: float = ...,
        isign: Optional[int] = ...,
        dtype: Union[str, np.dtype] = ...,
        **kwargs: Any,
    ) -> None: ...
    @property
    def device(self) -> Optional[Union[str, int]]: ...
    def setpts(
        self,
        x: ArrayLike = ...,
        y: ArrayLike = ...,
        z: ArrayLike = ...,
        s: None = ...,
        t: None = ...,
        u: None = ...,
    ) -> None: ...
    def execute(self, data: ArrayLike, out: Optional[ArrayLike] = ...) -> ArrayLike: ...

def read_scan(
    path: PathLike,
    traj: Optional[PathLike] = ...,
    matrix: Optional[Union[int, Sequence[int]]] = ...,
    format: str = ...,
    normalized_traj: bool = ...,
    traj_units: Optional[str] = ...,
) -> Scan: ...
def write_scan(
    path: PathLike, scan: Scan, format: str = ..., readout: int = ..., traj: Optional[PathLike] = ...
) -> None: ...
def read_cfl(name: PathLike) -> npt.NDArray[np.complex64]: ...
def write_cfl(name: PathLike, array: npt.ArrayLike) -> None: ...
def prewhiten(scan: Scan) -> Tuple[Scan, Optional[npt.NDArray[np.complex128]]]: ...
def compress_coils(
    scan: Scan, k: int
) -> Tuple[Scan, npt.NDArray[np.complex128], npt.NDArray[np.float64]]: ...
def noise_covariance(noise: npt.ArrayLike) -> npt.NDArray[np.complex128]: ...
def whitening_matrix(psi: npt.ArrayLike, keep_scale: bool = ...) -> npt.NDArray[np.complex128]: ...
def lowres_maps(
    scan: Scan, calibration: int = ..., crop: float = ..., dcf: str = ...
) -> npt.NDArray[np.complex64]: ...
def espirit_maps(
    scan: Scan,
    calibration: int = ...,
    kernel: int = ...,
    threshold: float = ...,
    crop: float = ...,
    support_crop: float = ...,
    dcf: str = ...,
) -> npt.NDArray[np.complex64]: ...
def reconstruct(
    scan: Scan,
    *,
    device: str = ...,
    iters: int = ...,
    tol: float = ...,
    lam: Optional[Union[float, str]] = ...,
    reg: str = ...,
    precondition: bool = ...,
    fhd: str = ...,
    nufft_tol: float = ...,
    trig: str = ...,
    kernel: str = ...,
    coil_combine: str = ...,
    maps: Union[str, npt.ArrayLike] = ...,
    calibration: int = ...,
    maps_crop: float = ...,
    dcf: str = ...,
    gridding: bool = ...,
    field_comp: str = ...,
    segments: int = ...,
    prewhiten: bool = ...,
    virtual_coils: int = ...,
    cache_dir: Optional[PathLike] = ...,
    admm_rho: float = ...,
    admm_inner: int = ...,
) -> Tuple[Dict[str, npt.NDArray[np.complex64]], Dict[str, Any]]: ...
def default_cache_dir() -> str: ...
