"""Coil processing (docs/coils.md): prewhitening, coil compression and the
sensitivity maps that SENSE uses, as the CLI computes them."""
import dataclasses

import numpy as np

from . import _core
from ._args import flag, integral, whole
from ._io import Scan, _scan_dict


_INT_MAX = 2**31 - 1  # the compiled functions' int: beyond it nanobind said "incompatible function arguments"


def _replace(scan, d):
    return dataclasses.replace(scan, **{k: d[k] for k in ("kspace", "noise")})


def prewhiten(scan):
    """Prewhitens every coil's samples and noise samples with the scan's noise
    (W with W Psi W^H = mean(diag Psi) I, keeping the data's scale).

    Returns (new Scan, W as a (C, C) complex128 array), or (scan, None) when
    the scan has no noise samples."""
    d, w = _core.prewhiten(_scan_dict(scan))
    return (_replace(scan, d), w) if w is not None else (scan, None)


def compress_coils(scan, k):
    """Compresses the coils to k virtual coils (SVD of the data; noise too).

    Returns (new Scan, the k x C matrix, every singular value squared, descending)."""
    k = integral("k", k)
    if abs(k) > _INT_MAX:  # the core's int; within it the core names k's range
        whole("k", k, 1, scan.coils, "must be in")
    d, m, energy = _core.compress_coils(_scan_dict(scan), k)
    return _replace(scan, d), m, energy


def noise_covariance(noise):
    """Psi = (1/M) sum_m n_m n_m^H of (C, M) noise samples, (C, C) complex128."""
    noise = np.ascontiguousarray(noise, dtype=np.complex64)
    if noise.ndim != 2 or min(noise.shape) < 1:
        raise ValueError(f"noise = shape {noise.shape}: needs (C, M) noise samples, C, M >= 1")
    return _core.noise_covariance(noise)


def whitening_matrix(psi, keep_scale=True):
    """W with W Psi W^H = I (keep_scale: mean(diag Psi) I)."""
    psi = np.ascontiguousarray(psi, dtype=np.complex128)
    if psi.ndim != 2 or psi.shape[0] != psi.shape[1] or psi.shape[0] < 1:
        raise ValueError(f"psi = shape {psi.shape}: must be a square (C, C) noise covariance")
    return _core.whitening_matrix(psi, flag("keep_scale", keep_scale))


def lowres_maps(scan, calibration=24, crop=0.1, dcf="auto"):
    """Low-resolution coil maps: the calibration region (calibration samples
    per axis; each coil's density-weighted samples near the centre taken to
    k-space by one type 1 NUFFT and a DFT) under a Hann window, back to the image grid, divided by
    the root sum of squares; zero where that is below crop times its peak.
    Returns (C, nz, ny, nx) complex64."""
    return _core.lowres_maps(_scan_dict(scan), whole("calibration", calibration, 4, 256, "must be in"), float(crop), str(dcf))


def espirit_maps(scan, calibration=24, kernel=6, threshold=0.02, crop=0.8, support_crop=0.1, dcf="auto"):
    """ESPIRiT maps (Uecker et al. 2014) from the calibration region, on the
    support of the low-resolution maps at support_crop (as SENSE uses them).
    Returns (C, nz, ny, nx) complex64."""
    # kernel's range said here: the core's message computes "a matrix of at
    # least 2 kernel - 1" from it, -1 for kernel = 0
    return _core.espirit_maps(_scan_dict(scan), whole("calibration", calibration, 4, 256, "must be in"),
                              whole("kernel", kernel, 2, 256, "must be in"),
                              float(threshold), float(crop),
                              float(support_crop), str(dcf))


__all__ = ["Scan", "prewhiten", "compress_coils", "noise_covariance", "whitening_matrix", "lowres_maps",
           "espirit_maps"]
