#!/usr/bin/env python3
"""Expected timeline figures for tui's tests, computed from the trace JSON
alone (not from tracelens): per lane the busy time (union of intervals, ns)
of each GPU stream (kernels, memcpy, memset), of each host thread's cpu ops
and Python frames, of each thread's user ranges (user_annotation other
than ProfilerStep#N) and of each stream's GPU-side ranges
(gpu_user_annotation, steps included); and the longest part of a GPU idle interval (between two
busy intervals) inside a ProfilerStep after the first (warm-up) one: the
gap the gpu-idle finding lists first.

Run: python3 tui/testdata/timeline_expect.py > tui/testdata/timeline_expected.json
"""
import decimal
import gzip
import json
import sys
from collections import defaultdict

FIXTURES = [
    "fixtures/recorded/train_sync_pageable.json.gz",
    "fixtures/recorded/transformer_naive_attn.json.gz",
    "fixtures/eggroll_hooks.json.gz",
]


def ns(v):
    return int((decimal.Decimal(v) * 1000).to_integral_value(decimal.ROUND_HALF_EVEN))


def union(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def busy(iv):
    return sum(b - a for a, b in union(iv))


def expect(path):
    with gzip.open(path, "rt") as f:
        ev = json.load(f, parse_float=decimal.Decimal)["traceEvents"]
    gpu, ops, py, rng, grng = (defaultdict(list) for _ in range(5))
    steps = []
    for e in ev:
        if e.get("ph") != "X" or "dur" not in e:
            continue
        a = ns(e["ts"])
        iv = (a, a + ns(e["dur"]))
        cat = e.get("cat")
        key = (str(e.get("pid")), str(e.get("tid")))
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            gpu[key].append(iv)
        elif cat == "cpu_op":
            ops[key].append(iv)
        elif cat == "python_function":
            py[key].append(iv)
        elif cat == "gpu_user_annotation":
            grng[key].append(iv)
        elif cat == "user_annotation":
            if e["name"].startswith("ProfilerStep#"):
                steps.append(iv)
            else:
                rng[key].append(iv)
    # Idle intervals between consecutive busy intervals of the GPU; the
    # longest part of one inside a step is the longest gap a step shows.
    every_gpu = union([iv for l in gpu.values() for iv in l])
    steady = sorted(steps)[1:] if len(steps) > 1 else steps
    longest = None
    for (a0, b0), (a1, b1) in zip(every_gpu, every_gpu[1:]):
        for s0, s1 in steady:
            g = (max(b0, s0), min(a1, s1))
            if g[1] - g[0] >= 200_000 and (longest is None or g[1] - g[0] > longest[1] - longest[0]):
                longest = g
    sortb = lambda m: sorted(busy(v) for v in m.values())
    return {
        "gpu_busy_ns": sortb(gpu),
        "ops_busy_ns": sortb(ops),
        "python_busy_ns": sortb(py),
        "range_busy_ns": sortb(rng),
        "gpu_range_busy_ns": sortb(grng),
        "steps": len(steps),
        "longest_gap_ns": list(longest) if longest else None,
    }


json.dump({p.split("/")[-1]: expect(p) for p in FIXTURES}, sys.stdout, indent=1)
print()
