"""fhdrecon.reconstruct: the CLI's reconstruction from Python."""
import numpy as np

from . import _core


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
    opts = dict(device=device, iters=int(iters), tol=float(tol), reg=reg, precondition=bool(precondition),
                fhd=fhd, nufft_tol=float(nufft_tol), trig=trig, kernel=kernel, coil_combine=coil_combine,
                calibration=int(calibration), maps_crop=float(maps_crop), dcf=dcf, gridding=bool(gridding),
                field_comp=field_comp, segments=int(segments), prewhiten=bool(prewhiten),
                virtual_coils=int(virtual_coils), cache_dir=cache_dir)
    if lam is not None:
        opts["lam"] = lam if isinstance(lam, str) else float(lam)
    if isinstance(maps, str):
        opts["maps"] = maps
    else:
        m = np.asarray(maps, dtype=np.complex64)
        opts["given_maps"] = np.ascontiguousarray(m.reshape(m.shape[0], -1))
    return _core.reconstruct(scan._to_dict(), opts)


def default_cache_dir():
    """The CLI's Q cache directory (~/.cache/fhdrecon/q unless XDG_CACHE_HOME says otherwise)."""
    return _core.default_cache_dir()
