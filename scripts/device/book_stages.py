#!/usr/bin/env python3
"""The 6000 x 256 case's four stages read off GPU timelines (scripts/device/timeline.cpp).

    book_stages.py base=T1.csv[,T2.csv ...] new=T3.csv[,...]

Each tree's stages measured one way, on the device's own clock, so a tree that
timed its stages on the host clock (work still running on the GPU when the
host moved on; issue 28) is compared fairly. For `fhdrecon --phantom shepp3d
--matrix 128 --traj radial3d --spokes 6000 --iters 30 --device gpu --no-cache
--no-gridding --fhd nufft` (no field map: cmpMu is the data's upload):
  cmpMu   the 12,288,000-byte upload of the k-space data (one copy, or staged chunks)
  cmpFhD  from its end to the end of the first deapodize_out (the image's type 1)
  Q       to the end of the second deapodize_out (Q's type 1 on the doubled grid)
  CG      from the end of the next 16,777,216-byte upload (the reference image
          for PSNR per iteration: scoring set-up, outside the stages in both
          trees) to the end of the last kernel before the image's download.
Prints each tree's median per stage over its runs and the ratio new/base.
"""
import csv
import statistics
import sys

DATA_BYTES = 12288000   # 1,536,000 complex samples
IMAGE_BYTES = 16777216  # 128^3 complex voxels


CHUNK = 2097152  # cuda/device/staged_upload.hpp's chunk


def upload(rows, total, after=0):
    """The first upload of `total` bytes starting after `after`: one copy, or
    back-to-back staged chunks (at most CHUNK bytes each, no other GPU work
    between). Copies of other sizes (the trajectory's three axes) break a run."""
    run, size = [], 0
    for r in rows:
        if r[0] <= after:
            continue
        n = int(r[3].split()[1]) if r[2] == "C" and r[3].startswith("HtoD ") else -1
        if n == total:
            return r[0], r[1]
        if 0 < n <= CHUNK:
            run.append(r)
            size += n
            if size == total:
                return run[0][0], run[-1][1]
        else:
            run, size = [], 0
    raise SystemExit(f"book_stages: no upload of {total} bytes")


def stages(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.reader(f):
            if len(r) >= 4 and r[0] in "KCS":
                rows.append((int(r[1]), int(r[2]), r[0], ",".join(r[3:])))
    rows.sort()
    data = upload(rows, DATA_BYTES)
    deapod = [r for r in rows if "deapodize_out" in r[3]]
    if len(deapod) < 2:
        raise SystemExit(f"book_stages: {path}: fewer than two deapodize_out kernels")
    q_end = deapod[1][1]
    ref = upload(rows, IMAGE_BYTES, q_end)
    down = next(r for r in rows if r[0] > ref[1] and r[2] == "C" and r[3] == f"DtoH {IMAGE_BYTES} B")
    last = max(r[1] for r in rows if r[2] == "K" and ref[1] < r[1] <= down[0])
    ms = 1e-6
    return {
        "cmpMu": (data[1] - data[0]) * ms,
        "cmpFhD": (deapod[0][1] - data[1]) * ms,
        "Q": (q_end - deapod[0][1]) * ms,
        "CG": (last - ref[1]) * ms,
    }


def main():
    trees = dict(arg.split("=", 1) for arg in sys.argv[1:])
    med = {}
    for tree, paths in trees.items():
        runs = [stages(p) for p in paths.split(",")]
        med[tree] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        med[tree]["total"] = sum(med[tree][k] for k in ("cmpMu", "cmpFhD", "Q", "CG"))
        print(f"{tree}: {len(runs)} runs")
    names = list(trees)
    print("stage (GPU timeline, ms, medians)  " + "  ".join(f"{n:>8}" for n in names) +
          ("  ratio" if len(names) == 2 else ""))
    for k in ("cmpMu", "cmpFhD", "Q", "CG", "total"):
        vals = [med[n][k] for n in names]
        ratio = f"  {vals[1] / vals[0]:.3f}" if len(vals) == 2 and vals[0] else ""
        print(f"  {k:<33}" + "  ".join(f"{v:8.2f}" for v in vals) + ratio)


if __name__ == "__main__":
    main()
