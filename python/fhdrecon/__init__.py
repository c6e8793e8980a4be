"""fhdrecon: iterative reconstruction of non-Cartesian MRI (docs/python.md).

- Plan: a NUFFT plan, a drop-in for finufft.Plan / cufinufft.Plan (types 1
  and 2, 2D and 3D, complex64), on NumPy arrays (CPU) or CuPy / PyTorch CUDA
  arrays (GPU) without copies.
- read_scan / write_scan: fhdrecon HDF5, ISMRMRD and BART files; Scan.
- lowres_maps, espirit_maps, prewhiten, compress_coils: coil processing.
- reconstruct: what the CLI does, returning the images and the report.
- An MRI-NUFFT backend named "fhdrecon", registered on import when mrinufft
  is installed.
"""
from ._core import has_cuda as _has_cuda
from ._plan import Plan
from ._io import Scan, read_scan, write_scan, read_cfl, write_cfl
from ._coils import prewhiten, compress_coils, noise_covariance, whitening_matrix, lowres_maps, espirit_maps
from ._recon import reconstruct, default_cache_dir
from . import _mrinufft

__version__ = "0.1.0"


def has_cuda():
    """True when this build of fhdrecon has its CUDA backend (Plan and
    reconstruct can then run on a GPU)."""
    return _has_cuda()


__all__ = ["Plan", "Scan", "read_scan", "write_scan", "read_cfl", "write_cfl", "prewhiten", "compress_coils",
           "noise_covariance", "whitening_matrix", "lowres_maps", "espirit_maps", "reconstruct",
           "default_cache_dir", "has_cuda"]

_mrinufft.register()
