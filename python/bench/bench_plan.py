"""Times fhdrecon.Plan from Python (docs/python.md, "Speed").

CPU (default): types 1 and 2 against finufft 2.5.1 in the same run, same
points, same modes, eps 1e-6, complex64, each the median of --reps after one
untimed run; prints both and the ratio (ours / finufft; < 1 is faster).
    python bench_plan.py --n 64 --m 192000 --threads 2

GPU (--gpu): type 1 on CuPy arrays (uniform random points in [-pi, pi)),
timed with CUDA events around execute() alone, against `fhdrecon bench-nufft`
on the same size (its type 1 row: median over the same kind of points, device
events); the goal is within 5% of it.
    python bench_plan.py --gpu --n 128 --m 1048576 --exe build-gpu/fhdrecon
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np


def median_time(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def cpu(args):
    import finufft

    import fhdrecon

    rng = np.random.default_rng(1)
    n_modes = (args.n,) * 3
    pts = [rng.uniform(-np.pi, np.pi, args.m).astype(np.float32) for _ in range(3)]
    c = (rng.standard_normal(args.m) + 1j * rng.standard_normal(args.m)).astype(np.complex64)
    f = (rng.standard_normal(n_modes) + 1j * rng.standard_normal(n_modes)).astype(np.complex64)
    print(f"CPU: {args.n}^3 modes, {args.m} points, eps {args.eps}, {args.threads} threads, median of {args.reps}")
    for t, data in ((1, c), (2, f)):
        ours = fhdrecon.Plan(t, n_modes, eps=args.eps)
        ours.setpts(*pts)
        ref = finufft.Plan(t, n_modes, eps=args.eps, dtype="complex64", nthreads=args.threads)
        ref.setpts(*pts)
        a, b = ours.execute(data), ref.execute(data)
        diff = float(np.linalg.norm(a - b) / np.linalg.norm(b))
        to = median_time(lambda: ours.execute(data), args.reps)
        tr = median_time(lambda: ref.execute(data), args.reps)
        print(f"type {t}: fhdrecon {to * 1e3:.1f} ms, finufft 2.5.1 {tr * 1e3:.1f} ms, ratio {to / tr:.2f} "
              f"(relative difference {diff:.1e})")


def gpu(args):
    import cupy

    import fhdrecon

    rng = np.random.default_rng(1)
    n_modes = (args.n,) * 3
    pts = [cupy.asarray(rng.uniform(-np.pi, np.pi, args.m).astype(np.float32)) for _ in range(3)]
    c = cupy.asarray((rng.standard_normal(args.m) + 1j * rng.standard_normal(args.m)).astype(np.complex64))
    plan = fhdrecon.Plan(1, n_modes, eps=args.eps)
    plan.setpts(*pts)
    out = cupy.empty(n_modes, dtype=cupy.complex64)
    plan.execute(c, out=out)
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(args.reps):
        start.record()
        plan.execute(c, out=out)
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    ours = float(np.median(times))
    with tempfile.TemporaryDirectory() as d:
        js = os.path.join(d, "b.json")
        subprocess.run([args.exe, "bench-nufft", "--matrix", str(args.n), "--samples", str(args.m), "--tols",
                        str(args.eps), "--no-q", "--reps", str(args.reps), "--json", js], check=True,
                       stdout=subprocess.DEVNULL)
        rows = json.load(open(js))["rows"]
    cli = next(r["ms_median"] for r in rows if r["op"] == "type1" and r["variant"] == "default" and r["sigma"] == 2)
    print(f"GPU type 1, {args.n}^3 modes, {args.m} points, eps {args.eps}: Python + CuPy {ours:.2f} ms, "
          f"fhdrecon bench-nufft {cli:.2f} ms, ratio {ours / cli:.3f} (goal: within 5%, <= 1.05)")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpu", action="store_true")
    p.add_argument("--n", type=int, default=64)
    p.add_argument("--m", type=int, default=192000)
    p.add_argument("--eps", type=float, default=1e-6)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--exe", default="build/fhdrecon")
    args = p.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # before fhdrecon's OpenMP starts
    gpu(args) if args.gpu else cpu(args)


if __name__ == "__main__":
    main()
