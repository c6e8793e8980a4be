#!/usr/bin/env python3
"""Where a GPU run's time goes between kernels (scripts/device/timeline.cpp's CSV).

    timeline.py TRACE.csv [--gap-us 20] [--top 15]

Splits the run at its cudaEventRecord calls (StageClock's marks: the clock's
origin, then one at the end of each stage), and for each interval prints its
host time, the GPU's busy time in it, and the idle gaps longer than --gap-us
with the API calls the host was in meanwhile (time of each call that overlaps a
gap; "host code" is gap time inside no CUDA call). Then the longest gaps with
the kernels on either side. Driver calls made inside a runtime call are not
counted twice: a driver call is charged only where no runtime call covers it.
"""
import argparse
import bisect
import collections
import csv


def load(path):
    gpu, api, marks = [], [], []
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if len(row) < 4:
                continue
            kind, start, end, name = row[0], int(row[1]), int(row[2]), ",".join(row[3:])
            if kind in "KCS":
                gpu.append((start, end, kind, name))
            elif kind in "RD":
                api.append((start, end, kind, name))
                if kind == "R" and name.startswith("cudaEventRecord_"):
                    marks.append(start)
    gpu.sort()
    api.sort()
    return gpu, api, sorted(marks)


def busy_intervals(gpu):
    merged = []
    for s, e, _, _ in gpu:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return merged


def gaps_of(gpu, min_ns):
    """Idle stretches between GPU work: (start, end, kernel before, kernel after)."""
    out, last_end, last_name = [], None, None
    for s, e, _, name in gpu:
        if last_end is not None and s - last_end >= min_ns:
            out.append((last_end, s, last_name, name))
        if last_end is None or e >= last_end:
            last_end, last_name = e, name
    return out


def charge(gap, api, starts):
    """Nanoseconds of the gap inside each API call (runtime first, then driver)."""
    g0, g1 = gap
    by_name = collections.Counter()
    covered = []
    lo = max(0, bisect.bisect_left(starts, g0) - 2000)
    for kind in ("R", "D"):
        for s, e, k, name in api[lo:bisect.bisect_right(starts, g1)]:
            if k != kind or e <= g0 or s >= g1:
                continue
            a, b = max(s, g0), min(e, g1)
            if kind == "D" and any(ca <= a and b <= cb for ca, cb in covered):
                continue
            if kind == "R":
                covered.append((a, b))
            by_name[name] += b - a
    inside = union_length(covered)
    return by_name, (g1 - g0) - inside


def union_length(spans):
    total, end = 0, None
    for a, b in sorted(spans):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def short(name, n=48):
    name = name.split("(")[0]
    return name if len(name) <= n else name[: n - 3] + "..."


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--gap-us", type=float, default=20)
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    gpu, api, marks = load(a.trace)
    if not gpu:
        raise SystemExit("timeline: no GPU activity in " + a.trace)
    starts = [x[0] for x in api]
    t0 = marks[0] if marks else gpu[0][0]
    edges = [m for m in marks if m >= t0] + [max(gpu[-1][1], api[-1][1] if api else 0)]
    busy = busy_intervals(gpu)
    gaps = gaps_of(gpu, a.gap_us * 1e3)
    ms = lambda ns: ns / 1e6
    print(f"{len(gpu)} GPU activities, {len(api)} API calls, {len(marks)} event records; "
          f"gaps >= {a.gap_us:g} us; times in ms from the first mark")
    for i in range(len(edges) - 1):
        lo, hi = edges[i], edges[i + 1]
        work = sum(max(0, min(e, hi) - max(s, lo)) for s, e in busy)
        in_gaps = [(max(g0, lo), min(g1, hi)) for g0, g1, _, _ in gaps if g1 > lo and g0 < hi]
        names, host = collections.Counter(), 0
        for g in in_gaps:
            n, h = charge(g, api, starts)
            names.update(n)
            host += h
        idle = sum(g1 - g0 for g0, g1 in in_gaps)
        print(f"\n[{ms(lo - t0):8.2f} .. {ms(hi - t0):8.2f}] {ms(hi - lo):7.2f} ms: GPU busy {ms(work):7.2f}, "
              f"idle in {len(in_gaps)} gaps {ms(idle):7.2f} (host code {ms(host):.2f})")
        for name, ns in names.most_common(6):
            print(f"    {ms(ns):7.2f}  {name}")
    print(f"\nlongest gaps:")
    for g0, g1, before, after in sorted(gaps, key=lambda g: g[0] - g[1])[: a.top]:
        names, host = charge((g0, g1), api, starts)
        calls = ", ".join(f"{n} {ms(v):.2f}" for n, v in names.most_common(3))
        print(f"  {ms(g1 - g0):6.2f} at {ms(g0 - t0):8.2f}: {short(before, 28)} -> {short(after, 28)}; "
              f"host code {ms(host):.2f}; {calls}")
    totals = collections.Counter()
    for s, e, k, name in api:
        if k == "R":
            totals[name] += e - s
    print("\nruntime API, total time over the run:")
    for name, ns in totals.most_common(a.top):
        print(f"  {ms(ns):8.2f}  {name}")


if __name__ == "__main__":
    main()
