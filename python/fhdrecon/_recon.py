"""fhdrecon.reconstruct: the CLI's reconstruction from Python."""
import inspect
import reprlib
import warnings

import numpy as np

from . import _core
from ._args import flag, integral, number, path
from ._io import Scan


def reconstruct(scan, *, device="auto", iters=100, tol=1e-6, lam=None, reg="l2", precondition=True,
                fhd="exact", nufft_tol=1e-6, trig="single", kernel="", coil_combine="sense", maps="lowres",
                calibration=24, maps_crop=0.1, dcf="auto", gridding=True, field_comp="auto", segments=0,
                prewhiten=True, virtual_coils=0, cache_dir=None, admm_rho=0.3, admm_inner=10):
    """Reconstructs `scan` (a Scan) as `fhdrecon --input FILE` does, with the
    same options and defaults (docs/usage.md; the CLI's --lambda is `lam`).

    device : 'auto' (a GPU when one is usable, else the CPU), 'cpu', 'gpu' or 'gpu:N'.
    maps : 'lowres', 'espirit', or an array (C, nz, ny, nx) ((C, ny, nx) in 2D)
        of given maps (SENSE): the sensitivities of the scan's C coils, mixed
        as the coils are when they are prewhitened or compressed.
    cache_dir : where Q is cached per trajectory, as the CLI's --cache-dir
        (None: not cached; fhdrecon.default_cache_dir() shares the CLI's cache).
    Options this run ignores (maps with coil_combine='rss' or one coil,
    nufft_tol with fhd='exact', ...) give the CLI's warning (UserWarning).

    Returns (images, report): images maps each method ('iterative',
    'gridding-trilinear', 'gridding-kb') to a complex64 (nz, ny, nx) array;
    report holds the backend, stage times, per-method seconds, CG's
    iterations and residuals, and lambda (what report.json holds)."""
    if not isinstance(scan, Scan):  # reconstruct('file.h5') was an AttributeError about _to_dict
        raise TypeError(f"scan = {reprlib.repr(scan)}: must be a fhdrecon.Scan (fhdrecon.read_scan reads one)")
    given = _given(locals())
    # Numbers pass as given (the core names a number of the wrong type) unless
    # bools; ints must be whole and flags bools: int() and bool() truncated 2.5
    # to 2 and read 'no' as True.
    opts = dict(device=device, iters=integral("iters", iters), tol=number("tol", tol), reg=reg,
                precondition=flag("precondition", precondition), fhd=fhd,
                nufft_tol=number("nufft_tol", nufft_tol), trig=trig,
                kernel=kernel, coil_combine=coil_combine, calibration=integral("calibration", calibration),
                maps_crop=number("maps_crop", maps_crop), dcf=dcf, gridding=flag("gridding", gridding), field_comp=field_comp,
                segments=integral("segments", segments), prewhiten=flag("prewhiten", prewhiten),
                virtual_coils=integral("virtual_coils", virtual_coils),
                cache_dir=None if cache_dir is None else path("cache_dir", cache_dir),
                admm_rho=number("admm_rho", admm_rho), admm_inner=integral("admm_inner", admm_inner))
    if lam is not None:
        opts["lam"] = number("lam", lam)
    d = scan._to_dict()
    if isinstance(maps, str):
        opts["maps"] = maps
    else:
        opts["given_maps"] = _given_maps(maps, d["matrix"])
    _warn_ignored(given, d["kspace"].shape[0], coil_combine, reg, fhd)
    return _core.reconstruct(d, opts)


def _given_maps(maps, matrix):
    """maps (C, nz, ny, nx), or (C, ny, nx) in 2D, as the core's [C, voxels]
    complex64. Only the size was checked: (C, 1, nx, ny) on a non-square grid
    gave an image 59 % off; None, a scalar or a 1-D array an IndexError."""
    try:
        m = np.asarray(maps, dtype=np.complex64)
    except (TypeError, ValueError):
        m = None
    if m is None or m.ndim < 2 or m.size == 0:
        given = reprlib.repr(maps) if m is None or m.ndim == 0 else f"shape {m.shape}"
        raise ValueError(f"maps = {given}: expected 'lowres', 'espirit' or an array (C, nz, ny, nx) of coil maps")
    if len(matrix) == 3:  # else the core refuses the matrix
        nx, ny, nz = matrix
        if m.shape[1:] != (nz, ny, nx) and not (nz == 1 and m.shape[1:] == (ny, nx)):
            raise ValueError(f"maps = shape {m.shape}: expected (C, nz, ny, nx) = (C, {nz}, {ny}, {nx}) "
                             f"for the scan's matrix {tuple(matrix)}")
    return np.ascontiguousarray(m.reshape(m.shape[0], -1))


def _given(args):
    """The options whose value differs from reconstruct's default: those given."""
    return {name for name, p in inspect.signature(reconstruct).parameters.items()
            if p.default is not inspect.Parameter.empty and not _same(args[name], p.default)}


def _same(value, default):
    if isinstance(value, str) or isinstance(default, str) or default is None:
        return type(value) is type(default) and value == default
    return np.ndim(value) == 0 and value == default


def _warn_ignored(given, coils, coil_combine, reg, fhd):
    """One warning for each group of given options this run ignores: the
    library's rule (recon/problem/options.hpp ignored_options), the CLI's."""
    for names, why in _core.ignored_options(sorted(given), coils, coil_combine, reg, fhd == "nufft"):
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        warnings.warn(f"{listed}: ignored ({why})", stacklevel=3)  # at reconstruct's caller


def default_cache_dir():
    """The CLI's cache directory, its --cache-dir default: ~/.cache/fhdrecon
    ($XDG_CACHE_HOME/fhdrecon when set; Q lies in its q/). As reconstruct's
    cache_dir it shares the CLI's cached Q."""
    return _core.default_cache_dir()
