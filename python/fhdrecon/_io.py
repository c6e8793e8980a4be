"""Scans and their files: fhdrecon's HDF5 scan file, ISMRMRD, BART .cfl/.hdr
(docs/formats.md). Units are fhdrecon's everywhere: k in cycles/FOV, data the
plain (non-unitary) sum; BART k-space is rescaled on the way in and out, as
the CLI does."""
import dataclasses
import os
from typing import Dict, Optional, Tuple

import numpy as np

from . import _core
from ._args import integral, path as _path


@dataclasses.dataclass
class Scan:
    """One scan: every coil's samples on one trajectory.

    kspace : (C, M) complex64, coil c's samples in row c.
    traj : (M, 3) float32, (kx, ky, kz) per sample in cycles/FOV (kz = 0 in 2D).
    matrix : (nx, ny, nz), the image grid (nz = 1 in 2D). Images are arrays of
        shape (nz, ny, nx), x fastest, as the files store them.
    noise : (C, Mn) complex64 noise-only samples for prewhitening, or None.
    dcf : (M,) float32 density weights for gridding, or None (computed).
    phi : (M,) complex64 basis transform Phi(k), or None (Phi = 1).
    field_map : (nz, ny, nx) float32 off-resonance in Hz, or None; needs sample_times.
    sample_times : (M,) float32 seconds after excitation, or None.
    geometry : dict of fov_mm, position, read_dir, phase_dir, slice_dir (LPS, mm), or None.
    provenance : dict of str.
    """

    kspace: np.ndarray
    traj: np.ndarray
    matrix: Tuple[int, int, int]
    noise: Optional[np.ndarray] = None
    dcf: Optional[np.ndarray] = None
    phi: Optional[np.ndarray] = None
    field_map: Optional[np.ndarray] = None
    sample_times: Optional[np.ndarray] = None
    geometry: Optional[Dict] = None
    provenance: Dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def coils(self):
        return int(np.shape(self.kspace)[0])

    @property
    def samples(self):
        return int(np.shape(self.traj)[0])

    def _to_dict(self):
        """The compiled core's form: contiguous arrays of the documented dtypes."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        ksp = np.asarray(d["kspace"])
        if ksp.ndim == 1:
            ksp = ksp[None, :]
        d["kspace"] = np.ascontiguousarray(ksp, dtype=np.complex64)
        d["traj"] = np.ascontiguousarray(d["traj"], dtype=np.float32)
        d["matrix"] = _matrix(d["matrix"])
        for key, dt in (("noise", np.complex64), ("dcf", np.float32), ("phi", np.complex64),
                        ("field_map", np.float32), ("sample_times", np.float32)):
            if d[key] is not None:
                d[key] = np.ascontiguousarray(d[key], dtype=dt)
        if d["noise"] is not None and d["noise"].ndim == 1:
            d["noise"] = d["noise"][None, :]
        d["provenance"] = {str(k): str(v) for k, v in (d["provenance"] or {}).items()}
        return d

    @classmethod
    def _from_dict(cls, d):
        return cls(**d)


def _matrix(matrix):
    """(nx, ny, nz) as whole numbers: int() truncated 16.5 to 16. Their range
    is the core's check (1..65536)."""
    if isinstance(matrix, (str, bytes)) or np.ndim(matrix) != 1:
        raise ValueError(f"matrix = {matrix!r}: needs (nx, ny, nz)")
    return tuple(integral(f"matrix[{a}]", n) for a, n in enumerate(matrix))


def _format(path, format):
    if format != "auto":
        return format
    ext = os.path.splitext(path)[1].lower()
    if ext in (".cfl", ".hdr", ""):
        return "bart"
    if ext in (".mrd", ".ismrmrd"):
        return "ismrmrd"
    return "hdf5"


def _bart_base(name):
    base, ext = os.path.splitext(name)
    return base if ext in (".cfl", ".hdr") else name


def _bart_grid(traj, matrix):
    """(nx, ny, nz) for a BART trajectory: `matrix` as given when it is a
    triple, else the CLI's rule (io/cfl.hpp bart_grid: matrix per axis, or the
    smallest even size whose band holds every sample; nz = 1 for a 2D one)."""
    if matrix is not None and np.ndim(matrix):
        return _matrix(np.broadcast_to(matrix, (3,)))
    n = 0 if matrix is None else integral("matrix", matrix)
    if matrix is not None and n < 1:  # 0 would mean "from the trajectory" to the core
        raise ValueError(f"matrix = {n}: must be at least 1 (None: from the trajectory)")
    return tuple(_core.bart_grid(traj, n))


def _units(normalized_traj, traj_units):
    """The ISMRMRD reader's units word from read_scan's two arguments."""
    if traj_units not in (None, "cycles", "normalized"):
        raise ValueError(f"traj_units = {traj_units!r}: expected None, 'cycles' or 'normalized'")
    if normalized_traj and traj_units == "cycles":
        raise ValueError("normalized_traj=True with traj_units='cycles': choose one")
    return "normalized" if normalized_traj else (traj_units or "")


def read_scan(path, traj=None, matrix=None, format="auto", normalized_traj=False, traj_units=None):
    """Reads a scan file, validated as the CLI validates it.

    path : an fhdrecon HDF5 scan file, an ISMRMRD file (found by content), or
        a BART k-space (NAME, NAME.cfl or NAME.hdr), which needs `traj`.
    traj : BART only: the trajectory pair [3, readout, spokes] in cycles/FOV.
    matrix : BART only: the image size (an int for every axis, or (nx, ny, nz));
        default: the smallest even size whose band holds the trajectory.
    normalized_traj : ISMRMRD only: trajectories in [-0.5, 0.5] (Gadgetron's habit);
        the same as traj_units='normalized'.
    traj_units : ISMRMRD only: None (as the file says; a file that says nothing
        and whose samples all lie within |k| <= 0.5 is refused as looking
        normalized), 'cycles' (cycles/FOV) or 'normalized'.
    Raises ValueError naming the file, field and value for bad input.
    """
    path = _path("path", path)
    traj = None if traj is None else _path("traj", traj)
    fmt = _format(path, format) if traj is None else "bart"
    if fmt == "bart":
        if traj is None:
            raise ValueError(f"{path}: a BART k-space needs its trajectory (traj=...)")
        grid = _bart_grid(_bart_base(traj), matrix)
        return Scan._from_dict(_core.read_bart(_bart_base(traj), _bart_base(path), list(grid)))
    if fmt == "ismrmrd":
        return Scan._from_dict(_core.read_ismrmrd(path, _units(normalized_traj, traj_units)))
    if fmt != "hdf5":
        raise ValueError(f"{path}: format = {format}: expected auto, hdf5, ismrmrd or bart")
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file")
    if _core.is_ismrmrd_file(path):
        return Scan._from_dict(_core.read_ismrmrd(path, _units(normalized_traj, traj_units)))
    return Scan._from_dict(_core.read_scan_h5(path))


def write_scan(path, scan, format="auto", readout=0, traj=None):
    """Writes `scan` atomically (a temporary renamed into place).

    format : auto (by extension: .mrd/.ismrmrd ISMRMRD, .cfl/.hdr/none BART,
        else fhdrecon HDF5), hdf5, ismrmrd or bart.
    readout : samples per spoke for ISMRMRD acquisitions and BART's dims
        (0: one readout of every sample; ISMRMRD needs readout <= 65535).
    traj : BART only: the trajectory pair's name (default NAME_traj).
    """
    path = _path("path", path)
    traj = None if traj is None else _path("traj", traj)
    fmt = _format(path, format)
    d = scan._to_dict()
    if fmt == "bart":
        base = _bart_base(path)
        _core.write_bart(_bart_base(traj) if traj else base + "_traj", base, d, integral("readout", readout))
    elif fmt == "ismrmrd":
        _core.write_ismrmrd(path, d, integral("readout", readout))
    elif fmt == "hdf5":
        _core.write_scan_h5(path, d)
    else:
        raise ValueError(f"{path}: format = {format}: expected auto, hdf5, ismrmrd or bart")


def read_cfl(name):
    """A BART .cfl/.hdr pair as a complex64 array of its dims (dimension 0
    fastest: returned in Fortran order, trailing 1s dropped)."""
    dims, data = _core.read_cfl(_path("name", name))
    while len(dims) > 1 and dims[-1] == 1:
        dims = dims[:-1]
    return data.reshape(dims, order="F")


def write_cfl(name, array):
    """Writes an array as a BART .cfl/.hdr pair (its axis 0 fastest, BART's order)."""
    a = np.asarray(array, dtype=np.complex64)
    _core.write_cfl(_path("name", name), list(a.shape) or [1], np.ascontiguousarray(a.ravel(order="F")))
