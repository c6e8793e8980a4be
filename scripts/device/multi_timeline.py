#!/usr/bin/env python3
"""Where a run's longest stage goes on each GPU (scripts/device/timeline.cpp's CSV).

    multi_timeline.py TRACE.csv [--show 80] [--stage K]

The longest interval between two StageClock marks (cudaEventRecord calls) is
taken as the stage to read (SENSE CG in an 8-coil SENSE run), or with --stage
the K-th (from 0) of those listed first (5 ms or more: 0 is the coil maps). For it, per
device: the time some kernel, copy or set ran (their union), kernel time by
name, peer copies; the host's runtime calls by total time; then the first
--show GPU records of the stage's second half, in start order, so one
iteration's pattern across the devices can be read (device, start in us from
the window's start, duration in us, name).
"""
import argparse
import collections
import re

import timeline  # scripts/device/timeline.py: the CSV reader


def load(path):
    """timeline.load's records, each GPU record with its device (the " @dN" of its name)."""
    gpu, api, marks = timeline.load(path)
    with_device = []
    for start, end, kind, name in gpu:
        m = re.search(r" @d(\d+)$", name)
        with_device.append((start, end, kind, name[: m.start()] if m else name, int(m.group(1)) if m else 0))
    return with_device, [(s, e, name) for s, e, kind, name in api if kind == "R"], marks


def union(spans):
    total, cur = 0, None
    for s, e in sorted(spans):
        if cur and s <= cur[1]:
            cur[1] = max(cur[1], e)
        else:
            if cur:
                total += cur[1] - cur[0]
            cur = [s, e]
    return total + (cur[1] - cur[0] if cur else 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--show", type=int, default=80)
    ap.add_argument("--stage", type=int, help="read the K-th stage of 5 ms or more instead of the longest")
    a = ap.parse_args()
    gpu, api, marks = load(a.trace)
    if len(marks) < 2:
        print("fewer than two marks: no stage")
        return
    # Every stage of 5 ms or more, in order: each device's busy time in it and
    # the host's costliest runtime calls.
    print("stages (ms): length, then each device's busy time; the costliest runtime calls")
    listed = [(t0, t1) for t0, t1 in zip(marks, marks[1:]) if t1 - t0 >= 5e6]
    for t0, t1 in listed:
        busy = collections.defaultdict(list)
        for g in gpu:
            if g[0] >= t0 and g[1] <= t1:
                busy[g[4]].append((g[0], g[1]))
        calls = collections.Counter()
        for s0, e0, name in api:
            if s0 >= t0 and e0 <= t1:
                calls[name.split("_v")[0]] += e0 - s0
        top = ", ".join(f"{n} {ns / 1e6:.1f}" for n, ns in calls.most_common(4))
        devs = " ".join(f"d{d} {union(v) / 1e6:.1f}" for d, v in sorted(busy.items()))
        print(f"  {(t1 - t0) / 1e6:8.1f}  {devs}  | {top}")
    if a.stage is not None and a.stage < len(listed):
        w0, w1 = listed[a.stage]
        print(f"stage {a.stage}: {(w1 - w0) / 1e6:.3f} ms")
    else:
        w0, w1 = max(zip(marks, marks[1:]), key=lambda p: p[1] - p[0])
        print(f"longest stage: {(w1 - w0) / 1e6:.3f} ms")
    inside = [g for g in gpu if g[0] >= w0 and g[1] <= w1]
    for dev in sorted({g[4] for g in inside}):
        mine = [g for g in inside if g[4] == dev]
        busy = union([(g[0], g[1]) for g in mine])
        by = collections.Counter()
        for s, e, kind, name, _ in mine:
            by[name.split("(")[0][:50] if kind == "K" else name.split(" ")[0]] += e - s
        print(f"device {dev}: busy {busy / 1e6:.3f} ms of {(w1 - w0) / 1e6:.3f}, {len(mine)} records")
        for name, ns in by.most_common(8):
            print(f"    {ns / 1e6:8.3f} ms  {name}")
    calls = collections.Counter()
    for s, e, name in api:
        if s >= w0 and e <= w1:
            calls[name] += e - s
    print("host runtime calls (summed over threads):")
    for name, ns in calls.most_common(8):
        print(f"    {ns / 1e6:8.3f} ms  {name}")
    mid = (w0 + w1) // 2
    # The longest stretch after the middle with no device busy, and the
    # host's runtime calls inside it (what the devices waited for).
    late = sorted((g[0], g[1]) for g in inside if g[0] >= mid)
    gap, end = (0, 0), None
    for s, e in late:
        if end is not None and s - end > gap[1] - gap[0]:
            gap = (end, s)
        end = e if end is None else max(end, e)
    if gap[1] > gap[0]:
        print(f"longest idle stretch after the middle: {(gap[1] - gap[0]) / 1e3:.1f} us; runtime calls in it:")
        calls = [(s, e, name) for s, e, name in api if e > gap[0] and s < gap[1]]
        for s, e, name in calls[:40]:
            print(f"    {(s - gap[0]) / 1e3:8.1f} us  {(e - s) / 1e3:8.1f} us  {name}")
    print(f"records from the stage's middle (us after {(mid - w0) / 1e3:.0f} us):")
    for s, e, kind, name, dev in [g for g in inside if g[0] >= mid][: a.show]:
        print(f"  d{dev} {(s - mid) / 1e3:9.1f} {(e - s) / 1e3:8.1f}  {kind} {name.split('(')[0][:60]}")


if __name__ == "__main__":
    main()
