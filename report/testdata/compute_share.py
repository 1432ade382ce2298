#!/usr/bin/env python3
"""Independent compute/communication split per step (python3 stdlib only).

For each ProfilerStep#N (user_annotation) after the first: the kernels the
step launched (launch call, same correlation id, started in the step; a
kernel without one belongs to no step), in the step's window (its range,
slid later when the GPU ran its work after the range ended, or the extent
of that work when longer, as analyze/testdata/headline.py): the union of
the non-NCCL ones (compute) and of all of them, clipped to the window, over
the window's length. Prints the medians.
"""
import gzip, json, statistics, sys

def union(iv):
    iv.sort()
    out = []
    for a, b in iv:
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out

def length(u):
    return sum(b - a for a, b in u)

def split(path):
    ev = json.load(gzip.open(path))["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    launch = {e["args"]["correlation"]: e["ts"] for e in ev if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in (e.get("args") or {})}
    ks = []
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            at = launch.get((e.get("args") or {}).get("correlation"))
            if at is not None:
                ks.append((e["ts"], e["ts"] + e["dur"], "nccl" in e["name"].lower(), at))
    comp, busy = [], []
    for a, b in steps[1:]:
        own = [k for k in ks if a <= k[3] < b and k[1] > k[0]]
        w0, w1 = a, b
        if own:
            first, last = min(k[0] for k in own), max(k[1] for k in own)
            if last - first > b - a:
                w0, w1 = first, last
            elif last > b:
                w0, w1 = a + (last - b), last
        c = union([[max(s, w0), min(t, w1)] for s, t, n, _ in own if not n and s < w1 and t > w0])
        all_ = union([[max(s, w0), min(t, w1)] for s, t, n, _ in own if s < w1 and t > w0])
        comp.append(length(c) / (w1 - w0))
        busy.append(length(all_) / (w1 - w0))
    return statistics.median(comp), statistics.median(busy)

for p in sys.argv[1:] or ["fixtures/runs/ddp_host_straggler/rank0.pt.trace.json.gz", "fixtures/runs/ddp_compute_straggler/rank0.pt.trace.json.gz",
                          "fixtures/runs/multirank_fsdp/rank1.pt.trace.json.gz"]:
    c, b = split(p)
    print(p, "compute share %.3f busy share %.3f" % (c, b))
