#!/usr/bin/env python3
"""Issue 25's GPU goals against cuFINUFFT measured in the same run.

    nufft_peer_table.py CUFINUFFT.tsv DIST:BENCH.json [DIST:BENCH.json ...]

CUFINUFFT.tsv: the peers' cufinufft_bench rows (type, dist, N, M, tol,
plan_ms, setpts_ms, exec_ms, rel_l2). Each BENCH.json: `fhdrecon bench-nufft
--json` for one size and point distribution (DIST: uniform or radial). For
each (type, dist, N, tol) present in both: execute beside cuFINUFFT's (goal:
at least 1.5x faster), plan + set-points beside cuFINUFFT's (goal: no
slower), and both relative errors (goal: ours equal or better). Our plan makes
its fine grid and FFT plan at the first execute, so the first call's total
(plan + set-points + first execute) is printed beside cuFINUFFT's plan +
set-points + execute as well.
"""
import csv
import json
import sys


def peer_rows(path):
    out = {}
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            key = (int(r["type"]), r["dist"], int(r["N"]), float(r["tol"]))
            out[key] = r  # the last run of a configuration counts
    return out


def our_rows(spec):
    dist, path = spec.split(":", 1)
    with open(path) as f:
        j = json.load(f)
    n = j["problem"]["matrix"]
    for r in j["rows"]:
        if r.get("variant") == "default" and r["op"] in ("type1", "type2") and "error" not in r:
            yield (int(r["op"][-1]), dist, n, float(r["tol"])), r, r["points"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    peers = peer_rows(sys.argv[1])
    print(f"{'case':<34} {'ours ms':>8} {'peer ms':>8} {'ratio':>6} {'goal':<6} "
          f"{'plan+setpts':>11} {'peer':>6} {'goal':<6} {'our err':>8} {'peer err':>8} {'first call':>10} {'peer':>8}")
    for spec in sys.argv[2:]:
        for key, r, m in our_rows(spec):
            p = peers.get(key)
            case = f"type {key[0]} {key[1]} {key[2]}^3 / {m} tol {key[3]:g}"
            if p is None:
                print(f"{case:<34} {r['ms_median']:8.2f}  (no cuFINUFFT row)")
                continue
            ours, theirs = r["ms_median"], float(p["exec_ms"])
            ratio = theirs / ours
            plan = r["plan_ms"] + r["setpts_ms"]
            peer_plan = float(p["plan_ms"]) + float(p["setpts_ms"])
            print(f"{case:<34} {ours:8.2f} {theirs:8.2f} {ratio:5.2f}x {'met' if ratio >= 1.5 else 'MISSED':<6} "
                  f"{plan:11.2f} {peer_plan:6.2f} {'met' if plan <= peer_plan else 'MISSED':<6} "
                  f"{r['relerr']:8.1e} {float(p['rel_l2']):8.1e} {r['total_ms']:10.2f} {peer_plan + theirs:8.2f}")


if __name__ == "__main__":
    main()
