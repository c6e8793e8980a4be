"""fhdrecon.reconstruct: the CLI's reconstruction from Python."""
import reprlib

import numpy as np

from . import _core
from ._args import flag, integral, path


def reconstruct(scan, *, device="auto", iters=100, tol=1e-6, lam=None, reg="l2", precondition=True,
                fhd="exact", nufft_tol=1e-6, trig="single", kernel="", coil_combine="sense", maps="lowres",
                calibration=24, maps_crop=0.1, dcf="auto", gridding=True, field_comp="auto", segments=0,
                prewhiten=True, virtual_coils=0, cache_dir=None):
    """Reconstructs `scan` (a Scan) as `fhdrecon --input FILE` does, with the
    same options and defaults (docs/usage.md; the CLI's --lambda is `lam`).

    device : 'auto' (a GPU when one is usable, else the CPU), 'cpu', 'gpu' or 'gpu:N'.
    maps : 'lowres', 'espirit', or an array (C, nz, ny, nx) of given maps (SENSE).
    cache_dir : where Q is cached per trajectory (None: not cached; the CLI
        caches under ~/.cache/fhdrecon by default, fhdrecon.default_cache_dir()).

    Returns (images, report): images maps each method ('iterative',
    'gridding-trilinear', 'gridding-kb') to a complex64 (nz, ny, nx) array;
    report holds the backend, stage times, per-method seconds, CG's
    iterations and residuals, and lambda (what report.json holds)."""
    # Numbers pass as given (the core names a number of the wrong type); ints
    # must be whole and flags bools: int() and bool() truncated 2.5 to 2 and
    # read 'no' as True.
    opts = dict(device=device, iters=integral("iters", iters), tol=tol, reg=reg,
                precondition=flag("precondition", precondition), fhd=fhd, nufft_tol=nufft_tol, trig=trig,
                kernel=kernel, coil_combine=coil_combine, calibration=integral("calibration", calibration),
                maps_crop=maps_crop, dcf=dcf, gridding=flag("gridding", gridding), field_comp=field_comp,
                segments=integral("segments", segments), prewhiten=flag("prewhiten", prewhiten),
                virtual_coils=integral("virtual_coils", virtual_coils),
                cache_dir=None if cache_dir is None else path("cache_dir", cache_dir))
    if lam is not None:
        opts["lam"] = lam
    if isinstance(maps, str):
        opts["maps"] = maps
    else:
        opts["given_maps"] = _given_maps(maps)
    return _core.reconstruct(scan._to_dict(), opts)


def _given_maps(maps):
    """maps (C, nz, ny, nx) as the core's [C, voxels] complex64; None, a scalar
    or a 1-D array failed with an IndexError before."""
    try:
        m = np.asarray(maps, dtype=np.complex64)
    except (TypeError, ValueError):
        m = None
    if m is None or m.ndim < 2 or m.size == 0:
        given = reprlib.repr(maps) if m is None or m.ndim == 0 else f"shape {m.shape}"
        raise ValueError(f"maps = {given}: expected 'lowres', 'espirit' or an array (C, nz, ny, nx) of coil maps")
    return np.ascontiguousarray(m.reshape(m.shape[0], -1))


def default_cache_dir():
    """The CLI's Q cache directory (~/.cache/fhdrecon/q unless XDG_CACHE_HOME says otherwise)."""
    return _core.default_cache_dir()
