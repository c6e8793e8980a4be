"""Scans and their files: fhdrecon's HDF5 scan file, ISMRMRD, BART .cfl/.hdr
(docs/formats.md). Units are fhdrecon's everywhere: k in cycles/FOV, data the
plain (non-unitary) sum; BART k-space is rescaled on the way in and out, as
the CLI does."""
import dataclasses
import os
import reprlib
import warnings
from typing import Dict, Optional, Tuple

import numpy as np

from . import _core
from ._args import flag, integral, path as _path, whole


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
        shape = np.shape(self.kspace)
        return 1 if len(shape) == 1 else int(shape[0])  # 1-D kspace: one coil, as _to_dict reads it

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
        prov = d["provenance"] or {}
        if not isinstance(prov, dict):
            raise ValueError(f"provenance = {reprlib.repr(prov)}: must be a dict of str")
        d["provenance"] = {str(k): str(v) for k, v in prov.items()}
        return d

    @classmethod
    def _from_dict(cls, d):
        return cls(**d)


def _scan_dict(scan):
    """scan._to_dict(), or TypeError for what is not a Scan (a path gave
    "AttributeError: 'str' object has no attribute '_to_dict'")."""
    if not isinstance(scan, Scan):
        raise TypeError(f"scan = {reprlib.repr(scan)}: must be a fhdrecon.Scan (read_scan reads a file into one)")
    return scan._to_dict()


def _matrix(matrix):
    """(nx, ny, nz) as whole numbers in the core's range (io/scan_checks:
    1..65536): int() truncated 16.5 to 16, and 2**31 reached the core as
    "std::bad_cast"."""
    if isinstance(matrix, (str, bytes)) or np.ndim(matrix) != 1 or len(matrix) != 3:
        raise ValueError(f"matrix = {reprlib.repr(matrix)}: needs (nx, ny, nz)")
    return tuple(whole(f"matrix[{a}]", n, 1, 65536, "matrix size must be in") for a, n in enumerate(matrix))


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
    triple (any other sequence is refused: (32,) became 32^3 and (32, 32) a
    NumPy broadcast error), else the CLI's rule (io/cfl.hpp bart_grid: matrix
    per axis, or the smallest even size whose band holds every sample; nz = 1
    for a 2D one)."""
    if matrix is not None and np.ndim(matrix):
        if isinstance(matrix, (str, bytes)) or np.ndim(matrix) != 1 or len(matrix) != 3:
            raise ValueError(f"matrix = {reprlib.repr(matrix)}: needs an int or (nx, ny, nz)")
        return _matrix(matrix)
    n = 0 if matrix is None else integral("matrix", matrix)
    if matrix is not None and n < 1:  # 0 would mean "from the trajectory" to the core
        raise ValueError(f"matrix = {n}: must be at least 1 (None: from the trajectory)")
    if n > 0:  # 2**40 reached the core as "incompatible function arguments"
        whole("matrix", n, 1, 65536, "matrix size must be in")
    return tuple(_core.bart_grid(traj, n))


def _units(normalized_traj, traj_units):
    """The ISMRMRD reader's units word from read_scan's two arguments."""
    if traj_units not in (None, "cycles", "normalized"):
        raise ValueError(f"traj_units = {traj_units!r}: expected None, 'cycles' or 'normalized'")
    normalized_traj = flag("normalized_traj", normalized_traj)  # 'no' was read as True
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
    if traj is not None and format == "auto" and _is_hdf5(path):
        raise ValueError(f"{path}: traj = {traj!r}: is for a BART k-space; this is an HDF5 file (ISMRMRD or fhdrecon's)")
    fmt = _format(path, format) if traj is None else "bart"
    if fmt == "bart":
        if traj is None:
            raise ValueError(f"{path}: a BART k-space needs its trajectory (traj=...)")
        _ignored(path, "BART", normalized_traj=normalized_traj, traj_units=traj_units)
        grid = _bart_grid(_bart_base(traj), matrix)
        return Scan._from_dict(_core.read_bart(_bart_base(traj), _bart_base(path), list(grid)))
    if fmt == "ismrmrd":
        _ignored(path, "ISMRMRD", matrix=matrix)
        return Scan._from_dict(_core.read_ismrmrd(path, _units(normalized_traj, traj_units)))
    if fmt != "hdf5":
        raise ValueError(f"{path}: format = {format}: expected auto, hdf5, ismrmrd or bart")
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file")
    if _core.is_ismrmrd_file(path):
        _ignored(path, "ISMRMRD", matrix=matrix)
        return Scan._from_dict(_core.read_ismrmrd(path, _units(normalized_traj, traj_units)))
    _units(normalized_traj, traj_units)  # checked as for ISMRMRD, then unused
    _ignored(path, "an fhdrecon HDF5 scan", matrix=matrix, normalized_traj=normalized_traj, traj_units=traj_units)
    return Scan._from_dict(_core.read_scan_h5(path))


def _is_hdf5(path):
    """Whether path is a file that starts with HDF5's signature."""
    try:
        with open(path, "rb") as f:
            return f.read(8) == b"\x89HDF\r\n\x1a\n"
    except OSError:
        return False


def _ignored(path, kind, **given):
    """Warns for each read_scan argument given (not None/False) that `kind` does
    not use, as the CLI warns for its ignored options."""
    for name, value in given.items():
        if value is not None and value is not False:
            warnings.warn(f"read_scan: {name} = {reprlib.repr(value)}: ignored ({path} is {kind}, which does not use it)",
                          stacklevel=3)


def write_scan(path, scan, format="auto", readout=0, traj=None):
    """Writes `scan` atomically (a temporary renamed into place).

    format : auto (by extension: .mrd/.ismrmrd ISMRMRD, .cfl/.hdr/none BART,
        else fhdrecon HDF5), hdf5, ismrmrd or bart.
    readout : samples per spoke for ISMRMRD acquisitions and BART's dims
        (0: one readout of every sample; ISMRMRD needs readout <= 65535).
    traj : BART only: the trajectory pair's name (default NAME_traj).
    A scan the readers would refuse (sample_times not one per sample, a bad
    field_map, ...) is a ValueError naming the field, and nothing is written.
    ISMRMRD and BART cannot hold phi: a scan with it is a ValueError there;
    what they drop besides (dcf; the field map; for BART noise and sample
    times) is written without, with a UserWarning naming it.
    """
    path = _path("path", path)
    traj = None if traj is None else _path("traj", traj)
    fmt = _format(path, format)
    if fmt not in ("bart", "ismrmrd", "hdf5"):
        raise ValueError(f"{path}: format = {format}: expected auto, hdf5, ismrmrd or bart")
    d = _scan_dict(scan)
    readout = whole("readout", readout, 0, 2**31 - 1)
    dropped = [] if fmt == "hdf5" else _dropped(path, "BART" if fmt == "bart" else "ISMRMRD", d)
    if fmt == "bart":
        base = _bart_base(path)
        _core.write_bart(_bart_base(traj) if traj else base + "_traj", base, d, readout)
    elif fmt == "ismrmrd":
        _core.write_ismrmrd(path, d, readout)
    else:
        _core.write_scan_h5(path, d)
    for message in dropped:  # once written: a scan the core refused lost nothing
        warnings.warn(message, stacklevel=2)


def _dropped(path, kind, d):
    """What `kind` (ISMRMRD, BART) cannot hold: phi is refused (without it the
    samples are another scan's: a 3.6x different image); the rest, one
    message each naming the field, as the CLI warns (app/scan_input.cpp
    write_scan_as)."""
    if d["phi"] is not None:
        raise ValueError(f"{path}: phi: {kind} has no place for Phi(k), and without it the data are another scan's; "
                         "write an fhdrecon HDF5 file")
    said = []
    if d["dcf"] is not None:
        said.append(f"{path}: {kind} has no place for density weights: dcf is not written "
                    "(gridding computes them when read)")
    if kind == "BART" and d["noise"] is not None:
        said.append(f"{path}: BART files have no noise acquisitions; the noise samples are not written")
    if kind == "BART" and (d["field_map"] is not None or d["sample_times"] is not None):
        said.append(f"{path}: BART files have no field map or sample times; field_map and sample_times are "
                    "not written (write fhdrecon HDF5)")
    if kind == "ISMRMRD" and d["field_map"] is not None:
        said.append(f"{path}: ISMRMRD has no place for a field map: the sample times are written (sample_time_us, "
                    "TE), field_map is not (write it to an fhdrecon HDF5 file too)")
    return said


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
