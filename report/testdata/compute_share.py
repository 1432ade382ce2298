#!/usr/bin/env python3
"""Independent compute/communication split per step (python3 stdlib only).

For each ProfilerStep#N (user_annotation) after the first: the union of
kernel intervals that are not NCCL (compute) and of NCCL kernels alone
(communication only: NCCL running while no compute kernel runs), clipped
to the step, over the step's wall. Prints the medians.
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
    ks = [(e["ts"], e["ts"] + e["dur"], "nccl" in e["name"].lower()) for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    comp, busy = [], []
    for a, b in steps[1:]:
        c = union([[max(s, a), min(t, b)] for s, t, n in ks if not n and s < b and t > a])
        all_ = union([[max(s, a), min(t, b)] for s, t, n in ks if s < b and t > a])
        comp.append(length(c) / (b - a))
        busy.append(length(all_) / (b - a))
    return statistics.median(comp), statistics.median(busy)

for p in sys.argv[1:] or ["fixtures/runs/ddp_host_straggler/rank0.pt.trace.json.gz", "fixtures/runs/ddp_compute_straggler/rank0.pt.trace.json.gz",
                          "fixtures/runs/multirank_fsdp/rank1.pt.trace.json.gz"]:
    c, b = split(p)
    print(p, "compute share %.3f busy share %.3f" % (c, b))
