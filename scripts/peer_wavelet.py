#!/usr/bin/env python3
"""The l1-wavelet prior beside l2 and TV, and beside SigPy's L1WaveletRecon, on the same data.

    python3 scripts/peer_wavelet.py [--fhdrecon build/fhdrecon] [--phantom shepp2d] [--matrix 128]
                                    [--samples N] [--noise 0.01] [--iters 30] [--device cpu]

Synthesizes one scan with `fhdrecon synth` (our HDF5, so the phantom is known),
reconstructs it with `fhdrecon --reg l2`, `--reg tv` and `--reg wavelet` at the same
iteration count, and with SigPy 0.1.27's L1WaveletRecon (db4, its default wavelet;
FISTA through its own NUFFT) at the same iteration count over a sweep of lambdas
(its best is reported: the peer's most favourable setting). SigPy's NUFFT is
normalized by 1/sqrt(N); the data are scaled to match, so its image is in the
phantom's units. PSNR as fhdrecon computes it (peak of the phantom over the RMS of
|image| - phantom), against the phantom image fhdrecon writes. Prints a table.
"""
import argparse
import json
import math
import os
import subprocess
import tempfile
import time

import h5py
import numpy as np

# numpy 2.x removed aliases that sigpy 0.1.27 may reach (no-ops where present).
for _old, _new in (("complex", complex), ("float", float), ("int", int), ("bool", bool), ("product", np.prod)):
    if not hasattr(np, _old):
        setattr(np, _old, _new)

import sigpy as sp  # noqa: E402
import sigpy.mri.app  # noqa: E402,F401


def psnr(image, ref):
    err = np.abs(image).astype(np.float64) - ref.astype(np.float64)
    return 20 * math.log10(np.abs(ref).max() / math.sqrt(np.mean(err * err)))


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def fhdrecon(exe, scan, out, reg, iters, device):
    t0 = time.perf_counter()
    run([exe, "--quiet", "--input", scan, "--reg", reg, "--iters", str(iters), "--device", device, "--no-gridding",
         "--no-cache", "--out", out, "--save", "h5"])
    wall = time.perf_counter() - t0
    rep = json.load(open(os.path.join(out, "report.json")))
    it = next(m for m in rep["methods"] if m["name"] == "iterative")
    with h5py.File(os.path.join(out, "images.h5"), "r") as f:
        ref = np.squeeze(np.asarray(f["phantom"]))  # [z][y][x]: C order, x fastest
    return it["psnr_db"], wall, ref


def read_scan(path):
    """Samples and SigPy's view: the image shape slowest axis first, k columns to match."""
    with h5py.File(path, "r") as f:
        k = np.asarray(f["trajectory"], np.float32)
        d = np.asarray(f["kspace"])
        nx, ny, nz = (int(v) for v in f.attrs["matrix"])
    d = (d["r"] + 1j * d["i"]) if d.dtype.names else d
    dims = 3 if nz > 1 else 2
    shape = [nz, ny, nx][3 - dims:]
    return k[:, :dims][:, ::-1].copy(), d.astype(np.complex64).ravel(), shape


def sigpy_wavelet(coord, data, shape, iters, lams):
    """SigPy's L1WaveletRecon over lambdas (C order: its image is [z][y][x] as the reference)."""
    crd = coord
    y = data / math.sqrt(np.prod(shape))  # SigPy's NUFFT is normalized by 1/sqrt(N)
    out = {}
    for lam in lams:
        t0 = time.perf_counter()
        img = sp.mri.app.L1WaveletRecon(y[None, :], np.ones([1] + shape, np.complex64), lam, coord=crd,
                                        max_iter=iters, show_pbar=False).run()
        out[lam] = (np.asarray(img), time.perf_counter() - t0)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fhdrecon", default="build/fhdrecon")
    p.add_argument("--phantom", default="shepp2d")
    p.add_argument("--matrix", type=int, default=128)
    p.add_argument("--samples", type=int, default=0)
    p.add_argument("--noise", type=float, default=0.0)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--device", default="cpu")
    p.add_argument("--lambdas", default="1e-4,3e-4,1e-3,3e-3,1e-2")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scan = os.path.join(tmp, "scan.h5")
        synth = [a.fhdrecon, "--quiet", "synth", "--phantom", a.phantom, "--matrix", str(a.matrix), "--noise",
                 str(a.noise), "-o", scan]
        if a.samples:
            synth += ["--samples", str(a.samples)]
        run(synth)
        rows, ref = [], None
        for reg in ("l2", "tv", "wavelet"):
            db, wall, ref = fhdrecon(a.fhdrecon, scan, os.path.join(tmp, reg), reg, a.iters, a.device)
            rows.append((f"fhdrecon --reg {reg}", db, wall))
        coord, data, shape = read_scan(scan)
        lams = [float(v) for v in a.lambdas.split(",")]
        best = max(((psnr(img, ref), lam, t) for lam, (img, t) in sigpy_wavelet(coord, data, shape, a.iters, lams).items()))
        rows.append((f"SigPy L1WaveletRecon (best lambda {best[1]:g})", best[0], best[2]))
    print(f"{a.phantom} {a.matrix}, {len(data)} samples, noise {a.noise}, {a.iters} iterations, {a.device}")
    print(f"{'method':<44} {'PSNR (dB)':>10} {'time (s)':>9}")
    for name, db, t in rows:
        print(f"{name:<44} {db:>10.2f} {t:>9.2f}")


if __name__ == "__main__":
    main()
