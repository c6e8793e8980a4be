#!/usr/bin/env python3
"""Issue 25's GPU NUFFT figures beside their goals, from `fhdrecon bench-nufft --json` files.

    python3 scripts/gpunufft_summary.py BENCH_128.json [BENCH_256.json ...]

For each file (one matrix size, uniform points): the batched rows (n
transforms in one call) against n single calls on one plan, execute only
(goal >= 1.5x); plan and set-points time of type 1 and type 2; type 1 and 2
execute; type 2's phases. Where the cufinufft and cupy modules import,
cuFINUFFT is timed here on uniform random points of the same count and size
(scripts/peer_nufft.py's cufinufft_times: a fresh plan, setpts, execute, the
device synchronized) and each figure is printed beside its cuFINUFFT figure
(goals: plan + setpts no slower; execute >= 1.5x faster).
"""
import json
import os
import sys
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# peer_nufft.py refuses to load without FINUFFT (the CPU peer); its cuFINUFFT
# timer needs only cufinufft and cupy.
sys.modules.setdefault("finufft", types.ModuleType("finufft"))
from peer_nufft import cufinufft_times  # noqa: E402


def rows_of(path):
    with open(path) as f:
        j = json.load(f)
    return j["problem"]["matrix"], [r for r in j["rows"] if "error" not in r], j["rows"]


def find(rows, op, variant):
    for r in rows:
        if r["op"] == op and r["variant"] == variant:
            return r
    return None


def peer(n, m, tol):
    rng = np.random.default_rng(1)
    k = rng.uniform(-0.5 * n, 0.5 * n, size=(3, m)).astype(np.float32)
    try:
        return cufinufft_times(k, n, tol, 5)
    except Exception as e:  # a failed peer is reported, not fatal
        print(f"  cuFINUFFT failed: {e}")
        return None


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        n, rows, raw = rows_of(path)
        for r in raw:
            if "error" in r:
                print(f"{n}^3 {r['op']} {r['variant']}: failed: {r['error']}")
        t1 = find(rows, "type1", "default")
        if t1 is None:
            print(f"{path}: no type 1 row")
            continue
        m, tol = t1["points"], t1["tol"]
        print(f"== {n}^3 modes, {m} uniform points, tol {tol:g}")
        for op in ("type1", "type2"):
            batch = [r for r in rows if r["op"].split()[0] == op and r.get("transforms", 1) > 1]
            b = next((r for r in batch if r["variant"] == "batched"), None)
            s = next((r for r in batch if r["variant"].endswith("single calls")), None)
            if b and s:
                x = s["ms_median"] / b["ms_median"]
                print(f"  {op} {b['transforms']} batched {b['ms_median']:.2f} ms vs {s['variant']} "
                      f"{s['ms_median']:.2f} ms: {x:.2f}x (goal >= 1.5x: {'met' if x >= 1.5 else 'MISSED'})")
        g = peer(n, m, tol)
        if g is None:
            print("  cuFINUFFT: not timed (cufinufft and cupy do not import)")
        for op in ("type1", "type2"):
            r = find(rows, op, "default")
            if r is None:
                continue
            ps = r["plan_ms"] + r["setpts_ms"]
            line = (f"  {op}: plan {r['plan_ms']:.2f} + setpts {r['setpts_ms']:.2f} = {ps:.2f} ms, first execute "
                    f"{r['total_ms'] - ps:.2f} ms, execute {r['ms_median']:.3f} ms, err {r['relerr']:.1e}")
            if g and op in g:
                p = g[op]
                pps = p["plan_ms"] + p["setpts_ms"]
                line += (f"\n    cuFINUFFT: plan {p['plan_ms']:.2f} + setpts {p['setpts_ms']:.2f} = {pps:.2f} ms "
                         f"(goal: ours no slower: {'met' if ps <= pps else 'MISSED'}), execute {p['ms']:.3f} ms "
                         f"({p['ms'] / r['ms_median']:.2f}x ours, goal >= 1.5x: "
                         f"{'met' if p['ms'] >= 1.5 * r['ms_median'] else 'MISSED'})")
            print(line)
            phases = [x for x in rows if x["op"] == op and x["variant"].startswith("phase: ")]
            if phases:
                print("    phases: " + ", ".join(f"{x['variant'][7:]} {x['ms_median']:.3f} ms" for x in phases))


if __name__ == "__main__":
    main()
