#!/usr/bin/env python3
"""Independent figures for diff's untested-change tests (python3 stdlib only).

For each trace: the ProfilerStep#N windows, and per step the GPU time of the
kernels whose name contains multi_tensor_apply_kernel (the AdamW optimizer
kernels), counted by the launch's correlation inside the step window.
Prints the per-step medians after the first step and the change in percent.
"""
import gzip, json, statistics, sys

def steps_and_kernels(path):
    ev = json.load(gzip.open(path))["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev
                   if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                   and e.get("name", "").startswith("ProfilerStep#"))
    launch_ts = {e["args"]["correlation"]: e["ts"] for e in ev
                 if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    per = [0.0] * len(steps)
    for e in ev:
        if e.get("ph") != "X" or e.get("cat") != "kernel" or "multi_tensor_apply_kernel" not in e["name"]:
            continue
        t = launch_ts.get(e["args"].get("correlation"))
        for i, (a, b) in enumerate(steps):
            if t is not None and a <= t < b:
                per[i] += e["dur"]
    return per

base = steps_and_kernels(sys.argv[1] if len(sys.argv) > 1 else "fixtures/recorded/amp_mlp_foreach.json.gz")
new = steps_and_kernels(sys.argv[2] if len(sys.argv) > 2 else "fixtures/recorded/amp_mlp_fused.json.gz")
bm, nm = statistics.median(base[1:]), statistics.median(new[1:])
print("base per step", base, "median", round(bm, 1))
print("new per step", new, "median", round(nm, 1))
print("change %", round((nm / bm - 1) * 100, 1))

# opts_gpt_plain vs opts_gpt_stack_mem: the same program under different
# profiler options. Same multiset of kernel names, GPU time within 2 %.
def kernels(path):
    ev = json.load(gzip.open(path))["traceEvents"]
    ks = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    return sorted(e["name"] for e in ks), sum(e["dur"] for e in ks)
pn, pt = kernels("fixtures/recorded/opts_gpt_plain.json.gz")
sn, st = kernels("fixtures/recorded/opts_gpt_stack_mem.json.gz")
print("opts_gpt same kernel names:", pn == sn, len(pn), "GPU time", round(pt, 1), round(st, 1),
      "change %", round((st / pt - 1) * 100, 2))
