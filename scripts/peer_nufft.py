#!/usr/bin/env python3
"""fhdrecon's CPU NUFFT against FINUFFT (PyPI) on the same points, in the same run.

    python3 scripts/peer_nufft.py [--fhdrecon build/fhdrecon] [--matrix 64]
        [--samples 192000] [--points uniform|radial] [--tol 1e-6] [--threads 2]
        [--reps 5] [--rounds 3] [--transforms 8] [--no-q] [--gpu]

Issue 25's CPU goal: on the 2-core machine, 64^3 / 192,000 and 128^3 /
1,048,576 points, tol 1e-6, 2 threads, uniform and radial points, type 1 and
type 2 each at least as fast as FINUFFT 2.5.1, counting plan + set points +
execute. Each round runs `fhdrecon bench-nufft --device cpu` (which writes its
points), then times FINUFFT on those points the same way: a fresh plan, setpts
and the first execute, apart and summed, median over --reps; the rounds
alternate the two so that a busy machine slows both alike. Prints each round's
ratio (FINUFFT's time / fhdrecon's) and the median over the rounds beside the
goal, and both sides' relative error against a float64 direct sum on a subset
(fhdrecon checks its own; this script checks FINUFFT's with numpy).

Radial points: --points radial takes 2N samples per spoke and samples / 2N
spokes (192,000 = 1500 x 128 at 64^3; 1,048,576 = 4096 x 256 at 128^3).
--transforms N: also N transforms batched (FINUFFT's n_trans) against N single
calls. Q: fhdrecon's Q (type 1 of ones onto the doubled grid) against
FINUFFT's type 1 onto 2N modes. --gpu: also time cuFINUFFT where the cufinufft
and cupy modules import (plan, setpts, execute with the device synchronized).

Needs numpy and finufft (pip install numpy finufft==2.5.1). fhdrecon and
FINUFFT get --threads threads (OMP_NUM_THREADS and nthreads) and the same
OpenMP wait policy: fhdrecon's CLI runs with OMP_WAIT_POLICY=passive unless
the user set one (docs/cpu-backend.md), so this script sets the same for the
libgomp FINUFFT loads, before it loads, unless OMP_WAIT_POLICY is set.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Before finufft's libgomp loads: it reads the policy once (see the docstring).
if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    os.environ["OMP_WAIT_POLICY"] = "passive"

import numpy as np  # noqa: E402

try:
    import finufft
except ImportError:  # a clear line instead of a traceback
    sys.exit("peer_nufft.py: needs finufft (pip install finufft==2.5.1)")


def median(v):
    return statistics.median(v)


def run_fhdrecon(a, workdir, rnd):
    """One bench-nufft run: its JSON rows and the points it wrote."""
    pts = os.path.join(workdir, "points.f32")
    out = os.path.join(workdir, f"bench{rnd}.json")
    cmd = [a.fhdrecon, "--quiet", "bench-nufft", "--device", "cpu", "--matrix", str(a.matrix),
           "--points", a.points, "--tols", str(a.tol), "--reps", str(a.reps), "--check", str(a.check),
           "--json", out, "--points-out", pts]
    if a.points == "radial":
        cmd += ["--readout", str(2 * a.matrix), "--spokes", str(a.samples // (2 * a.matrix))]
    else:
        cmd += ["--samples", str(a.samples)]
    if a.transforms > 1:
        cmd += ["--transforms", str(a.transforms)]
    if a.no_q:
        cmd += ["--no-q"]
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    with open(out) as f:
        rows = json.load(f)["rows"]
    k = np.fromfile(pts, dtype=np.float32)
    return rows, k.reshape(3, -1)


class Finufft:
    """FINUFFT's transforms on fhdrecon's points, in fhdrecon's conventions:
    type 1 f_n = sum c_m exp(+i 2 pi k_m . x_n), x_n = (i - N/2)/N, is FINUFFT's
    type 1 (isign +1) at x = 2 pi k / N with modes -N/2 .. N/2 - 1; type 2 the
    same with isign -1. Q: 2N modes, the same x."""

    def __init__(self, k, n, tol, threads, reps, seed=1):
        self.x = [np.ascontiguousarray(2 * np.pi * k[a] / n, dtype=np.float32) for a in range(3)]
        self.n, self.m, self.tol, self.threads, self.reps = n, k.shape[1], tol, threads, reps
        rng = np.random.default_rng(seed)
        self.rng = rng

    def values(self, shape):
        return (self.rng.standard_normal(shape) + 1j * self.rng.standard_normal(shape)).astype(np.complex64)

    def time(self, kind, ntrans=1, single_calls=False):
        n = 2 * self.n if kind == "q" else self.n
        t = 2 if kind == "type2" else 1
        shape = (ntrans, n, n, n) if t == 2 else (ntrans, self.m)
        data = np.ones(shape, np.complex64) if kind == "q" else self.values(shape)
        if ntrans == 1:
            data = data[0]
        plan_t, set_t, exec_t, total = [], [], [], []
        out = None
        for _ in range(self.reps):
            p_sum = s_sum = e_sum = 0.0
            calls = ntrans if single_calls else 1
            for c in range(calls):
                t0 = time.perf_counter()
                plan = finufft.Plan(t, (n, n, n), 1 if single_calls else ntrans, self.tol,
                                    isign=-1 if t == 2 else 1, dtype="complex64", nthreads=self.threads)
                t1 = time.perf_counter()
                plan.setpts(*self.x)
                t2 = time.perf_counter()
                res = plan.execute(data[c] if single_calls else data)
                t3 = time.perf_counter()
                p_sum, s_sum, e_sum = p_sum + t1 - t0, s_sum + t2 - t1, e_sum + t3 - t2
                if c == 0:
                    out = res
            plan_t.append(1e3 * p_sum)
            set_t.append(1e3 * s_sum)
            exec_t.append(1e3 * e_sum)
            total.append(1e3 * (p_sum + s_sum + e_sum))
        first = data if ntrans == 1 else data[0]
        got = out if (ntrans == 1 or single_calls) else out[0]
        return {"plan_ms": median(plan_t), "setpts_ms": median(set_t), "ms_median": median(exec_t),
                "total_ms": median(total), "relerr": self.error(t, n, first, got)}

    def error(self, t, n, data, out, count=100):
        """Relative l2 error on `count` random outputs against float64 sums."""
        rng = np.random.default_rng(7)
        xs = [x.astype(np.float64) for x in self.x]
        modes = np.arange(n) - n // 2
        if t == 1:
            idx = rng.integers(0, n, size=(count, 3))
            ref = np.empty(count, np.complex128)
            for j, (a, b, c) in enumerate(idx):
                phase = modes[a] * xs[0] + modes[b] * xs[1] + modes[c] * xs[2]
                ref[j] = np.sum(data.astype(np.complex128) * np.exp(1j * phase))
            got = out[idx[:, 0], idx[:, 1], idx[:, 2]]
        else:
            idx = rng.integers(0, self.m, size=count)
            f = data.astype(np.complex128)
            ref = np.empty(count, np.complex128)
            for j, m in enumerate(idx):
                e = [np.exp(-1j * modes * xs[a][m]) for a in range(3)]
                ref[j] = np.einsum("a,b,c,abc->", e[0], e[1], e[2], f)
            got = out[idx]
        return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def cufinufft_times(k, n, tol, reps):
    """cuFINUFFT type 1 and 2 (plan, setpts, execute; device synchronized), or None."""
    try:
        import cufinufft
        import cupy as cp
    except ImportError:
        return None
    x = [cp.asarray(2 * np.pi * k[a] / n, dtype=cp.float32) for a in range(3)]
    rows = {}
    for t in (1, 2):
        data = cp.ones((k.shape[1],) if t == 1 else (n, n, n), dtype=cp.complex64)
        res = []
        for _ in range(reps + 1):  # the first warms up the CUDA context
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            p = cufinufft.Plan(t, (n, n, n), 1, tol, isign=-1 if t == 2 else 1, dtype="complex64")
            cp.cuda.Device().synchronize()
            t1 = time.perf_counter()
            p.setpts(*x)
            cp.cuda.Device().synchronize()
            t2 = time.perf_counter()
            p.execute(data)
            cp.cuda.Device().synchronize()
            t3 = time.perf_counter()
            res.append((t1 - t0, t2 - t1, t3 - t2))
        res = res[1:]
        rows[f"type{t}"] = {k2: 1e3 * median([r[i] for r in res]) for i, k2 in enumerate(["plan_ms", "setpts_ms", "ms"])}
    return rows


def fmt_times(r):
    return f"{r['total_ms']:8.1f} ({r['plan_ms']:.1f} / {r['setpts_ms']:.1f} / {r['ms_median']:.1f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fhdrecon", default="build/fhdrecon")
    ap.add_argument("--matrix", type=int, default=64)
    ap.add_argument("--samples", type=int, default=192000)
    ap.add_argument("--points", choices=["uniform", "radial"], default="uniform")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--check", type=int, default=100)
    ap.add_argument("--transforms", type=int, default=1)
    ap.add_argument("--no-q", action="store_true")
    ap.add_argument("--gpu", action="store_true", help="also time cuFINUFFT (cufinufft + cupy)")
    a = ap.parse_args()

    ratios = {}
    with tempfile.TemporaryDirectory() as wd:
        for rnd in range(a.rounds):
            rows, k = run_fhdrecon(a, wd, rnd)
            peer = Finufft(k, a.matrix, a.tol, a.threads, a.reps)
            print(f"round {rnd + 1}: {k.shape[1]} {a.points} points, {a.matrix}^3 modes, tol {a.tol:g}, "
                  f"{a.threads} threads; total ms (plan / setpts / exec)")
            print(f"  {'op':<9} {'variant':<16} {'fhdrecon':>30} {'err':>8}   {'FINUFFT 2.5.1':>30} {'err':>8}  ratio")
            for r in rows:
                if "error" in r:
                    print(f"  {r['op']:<9} {r['variant']:<16} failed: {r['error']}")
                    continue
                kind = r["op"].split()[0]
                ntrans = r.get("transforms", 1)
                f = peer.time(kind, ntrans, single_calls=ntrans > 1 and r["variant"] != "batched")
                ratio = f["total_ms"] / r["total_ms"]
                ratios.setdefault((r["op"], r["variant"]), []).append(ratio)
                print(f"  {r['op']:<9} {r['variant']:<16} {fmt_times(r):>30} {r['relerr']:8.1e}   "
                      f"{fmt_times(f):>30} {f['relerr']:8.1e}  {ratio:5.2f}x", flush=True)
            if a.gpu and rnd == 0:
                g = cufinufft_times(k, a.matrix, a.tol, a.reps)
                print("  cuFINUFFT: " + ("not importable (cufinufft and cupy)" if g is None else json.dumps(g)))
    print(f"median over {a.rounds} rounds (FINUFFT's plan + setpts + execute / fhdrecon's):")
    for (op, variant), v in ratios.items():
        goal = ""
        if op in ("type1", "type2") and variant == "default":
            goal = f"goal >= 1.00x (at least as fast as FINUFFT): {'met' if median(v) >= 1.0 else 'MISSED'}"
        print(f"  {op:<9} {variant:<16} {median(v):5.2f}x  (rounds: {', '.join(f'{x:.2f}' for x in v)})  {goal}")


if __name__ == "__main__":
    main()
