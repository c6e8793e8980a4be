#!/usr/bin/env python3
"""How SigPy's SENSE time grows with the coil count, for fhdrecon's SENSE time goal.

    python3 scripts/peer_sense.py [--matrix 128] [--samples 1048576] [--coils 8]
                                  [--iters 30] [--device 0]

Issue 11 asks 8-coil SENSE to take at most 3x one coil's time. This times the
same comparison with SigPy 0.1.27, one coil and C coils, on the GPU (CuPy, --device 0)
or the CPU (Numba, --device -1), two ways:

  toeplitz  the same algorithm as fhdrecon's: one PSF on the doubled grid
            (sigpy.fourier.toeplitz_psf, oversampling 2), CG on
            sum_c S_c^H T S_c + lambda I, the coils batched in one array
  nufft     SigPy's own SENSE (sigpy.mri.linop.Sense, its default NUFFT at
            oversampling 1.25) solved by sigpy.app.LinearLeastSquares

Timed: A^H y, the PSF (toeplitz) and the CG iterations, after one untimed
warm-up solve (CuPy's kernel compilation and cuFFT plans). The data are random
(a timing needs no image): 3D radial spokes through the centre, smooth complex
maps. Prints one line per case, how far the two ways' images differ (they solve
one problem) and the C-coil / 1-coil ratios.
"""
import argparse
import math
import time

import numpy as np

# numpy 2.x removed aliases that sigpy 0.1.27 may reach (no-ops where present).
for _old, _new in (("complex", complex), ("float", float), ("int", int), ("bool", bool), ("product", np.prod)):
    if not hasattr(np, _old):
        setattr(np, _old, _new)

import sigpy as sp  # noqa: E402
import sigpy.mri  # noqa: E402,F401  (SigPy's SENSE operator)


def radial_coords(n, samples):
    """Spokes of 2n samples through the centre, directions on a golden-angle spiral."""
    per = 2 * n
    spokes = max(1, samples // per)
    k = (np.arange(per) + 0.5 - n) / 2.0
    s = np.arange(spokes) + 0.5
    cz = 1.0 - s / spokes
    sz = np.sqrt(np.maximum(0.0, 1.0 - cz * cz))
    phi = np.mod(s * math.pi * (3.0 - math.sqrt(5.0)), 2 * math.pi)
    d = np.stack([sz * np.cos(phi), sz * np.sin(phi), cz], axis=-1)  # [spokes, 3]
    return (d[:, None, :] * k[None, :, None]).astype(np.float32)  # [spokes, 2n, 3]


def smooth_maps(coils, n):
    """Coil c: a Gaussian around a point on a ring, with a linear phase."""
    ax = (np.arange(n) - n / 2) / n
    x, y, z = np.meshgrid(ax, ax, ax, indexing="ij")
    maps = np.empty((coils, n, n, n), np.complex64)
    for c in range(coils):
        a = 2 * math.pi * c / coils
        cx, cy = 0.5 * math.cos(a), 0.5 * math.sin(a)
        mag = np.exp(-((x - cx) ** 2 + (y - cy) ** 2 + z**2) / 0.3)
        maps[c] = mag * np.exp(1j * (a + 2 * x - y))
    return maps


def sync(device):
    if device != sp.cpu_device:
        device.xp.cuda.Device(device.id).synchronize()


def toeplitz_solve(coord, y, maps, iters, lam):
    """CG on sum_c S_c^H T S_c with one PSF for every coil (fhdrecon's method)."""
    coils, shape = maps.shape[0], maps.shape[1:]
    F = sp.linop.NUFFT(maps.shape, coord, oversamp=2.0, width=4)
    S = sp.linop.Multiply(shape, maps)
    b = S.H(F.H(y))
    psf = sp.fourier.toeplitz_psf(coord, shape, 2.0, 4)  # one (2n)^3 kernel, broadcast over coils
    big = (coils,) + psf.shape
    R = sp.linop.Resize(big, maps.shape)
    T = R.H * sp.linop.FFT(big, axes=(-1, -2, -3)).H * sp.linop.Multiply(big, psf) * \
        sp.linop.FFT(big, axes=(-1, -2, -3)) * R
    N = S.H * T * S + lam * sp.linop.Identity(shape)
    x = sp.get_device(b).xp.zeros(shape, np.complex64)
    alg = sp.alg.ConjugateGradient(N, b, x, max_iter=iters)
    while not alg.done():
        alg.update()
    return x


def nufft_solve(coord, y, maps, iters, lam):
    """SigPy's own SENSE: A^H A by a NUFFT pair per coil and iteration."""
    A = sp.mri.linop.Sense(maps, coord=coord)
    app = sp.app.LinearLeastSquares(A, y, lamda=lam, max_iter=iters, show_pbar=False)
    return app.run()


def timed(solve, coord, y, maps, iters, lam, device):
    solve(coord, y, maps, 1, lam)  # warm-up: kernel compilation, FFT plans
    sync(device)
    t0 = time.perf_counter()
    x = solve(coord, y, maps, iters, lam)
    sync(device)
    return time.perf_counter() - t0, sp.to_device(x, sp.cpu_device)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--matrix", type=int, default=128)
    p.add_argument("--samples", type=int, default=1048576)
    p.add_argument("--coils", type=int, default=8)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--lambda", dest="lam", type=float, default=0.001)
    p.add_argument("--device", type=int, default=0)
    a = p.parse_args()
    rng = np.random.default_rng(1)
    coord_h = radial_coords(a.matrix, a.samples)
    maps_h = smooth_maps(a.coils, a.matrix)
    device = sp.Device(a.device)
    with device:
        coord = sp.to_device(coord_h, device)
        times = {}
        for coils in (1, a.coils):
            maps = sp.to_device(maps_h[:coils], device)
            shape = (coils,) + coord_h.shape[:-1]
            y = sp.to_device((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64), device)
            x = {}
            for name, solve in (("toeplitz", toeplitz_solve), ("nufft", nufft_solve)):
                t, x[name] = timed(solve, coord, y, maps, a.iters, a.lam, device)
                times[(name, coils)] = t
                print("sigpy %s on %s: %d^3, %d samples, %d coil(s), %d iterations: %.3f s" %
                      (name, device, a.matrix, coord_h.shape[0] * coord_h.shape[1], coils, a.iters, t), flush=True)
            # The two ways solve one problem: their images agree up to the NUFFTs' accuracy.
            diff = np.linalg.norm(x["toeplitz"] - x["nufft"]) / np.linalg.norm(x["nufft"])
            print("sigpy, %d coil(s): toeplitz against nufft image, relative difference %.2e" % (coils, diff))
        for name in ("toeplitz", "nufft"):
            print("sigpy %s: %d coils / 1 coil = %.2fx" % (name, a.coils, times[(name, a.coils)] / times[(name, 1)]))


if __name__ == "__main__":
    main()
