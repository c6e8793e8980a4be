#!/usr/bin/env python3
"""The 6000 x 256 case's four stages read off GPU timelines (scripts/device/timeline.cpp).

    book_stages.py base=T1.csv[,T2.csv ...] new=T3.csv[,...]

Each tree's stages measured one way, on the device's own clock, so a tree that
timed its stages on the host clock (work still running on the GPU when the
host moved on; issue 28) is compared fairly. For `fhdrecon --phantom shepp3d
--matrix 128 --traj radial3d --spokes 6000 --iters 30 --device gpu --no-cache
--no-gridding --fhd nufft` (no field map: cmpMu is the data's upload):
  cmpMu   the 12,288,000-byte upload of the k-space data
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

IMAGE_BYTES = "16777216 B"


def stages(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.reader(f):
            if len(r) >= 4 and r[0] in "KCS":
                rows.append((int(r[1]), int(r[2]), r[0], ",".join(r[3:])))
    rows.sort()
    upload = next(r for r in rows if r[2] == "C" and r[3] == "HtoD 12288000 B")
    deapod = [r for r in rows if "deapodize_out" in r[3]]
    if len(deapod) < 2:
        raise SystemExit(f"book_stages: {path}: fewer than two deapodize_out kernels")
    q_end = deapod[1][1]
    ref = next(r for r in rows if r[0] > q_end and r[2] == "C" and r[3] == "HtoD " + IMAGE_BYTES)
    down = next(r for r in rows if r[0] > ref[1] and r[2] == "C" and r[3] == "DtoH " + IMAGE_BYTES)
    last = max(r[1] for r in rows if r[2] == "K" and ref[1] < r[1] <= down[0])
    ms = 1e-6
    return {
        "cmpMu": (upload[1] - upload[0]) * ms,
        "cmpFhD": (deapod[0][1] - upload[1]) * ms,
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
