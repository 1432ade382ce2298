#!/usr/bin/env python3
"""Independent figures for the fusion-candidate boundary tests (stdlib only).

1. For each trace: the names of the top-level framework ops (aten:: ops and
   autograd nodes, outermost on their thread) each of whose calls launches a
   GEMM or attention kernel (matched by External id from the kernel to the
   innermost cpu_op, then by time containment on the thread). A fusion chain
   must never contain a kernel of such an op (an autocast cast under
   aten::linear, a cuBLAS memset, AddmmBackward0's bias reduction).
2. For eggroll_hooks: the lowrank noise chain (randn normal_kernel and the 5
   kernels after it on its stream), the bound span - longest kernel summed
   over occurrences, per step (5 ProfilerSteps): a fusion saving above it
   cannot be true.
"""
import gzip, json, sys

GEMM = ("gemm", "nvjet", "Kernel2", "cutlass", "fmha", "flash", "xmma", "sgemm", "cublas")

def load(path):
    return json.load(gzip.open(path))["traceEvents"]

def gemm_ops(path):
    ev = load(path)
    ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    by_ext = {}
    for o in ops:
        x = o.get("args", {}).get("External id")
        if x is not None:
            by_ext.setdefault(x, []).append(o)
    gemm_ext = set()
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") == "kernel" and any(g in e["name"] for g in GEMM):
            x = e.get("args", {}).get("External id")
            if x is not None:
                gemm_ext.add(x)
    # launching op intervals per thread
    launch = {}
    for x in gemm_ext:
        for o in by_ext.get(x, []):
            launch.setdefault(o["tid"], []).append(o["ts"])
    top = {}
    by_tid = {}
    for o in ops:
        by_tid.setdefault(o["tid"], []).append(o)
    for tid, lst in by_tid.items():
        lst.sort(key=lambda o: (o["ts"], -o["dur"]))
        end = -1
        for o in lst:
            if o["ts"] >= end:  # outermost
                end = o["ts"] + o["dur"]
                name = o["name"]
                if not (name.startswith("aten::") or name.startswith("autograd::engine::evaluate_function:")):
                    continue
                has = any(o["ts"] <= t <= o["ts"] + o["dur"] for t in launch.get(tid, []))
                a = top.setdefault(name, [0, 0])
                a[0] += 1
                a[1] += has
    out = []
    for name, (n, k) in sorted(top.items()):
        if n == k:
            name = name.replace("autograd::engine::evaluate_function: ", "").replace("aten::", "")
            out.append(name)
    return out

def eggroll_bound(path):
    ev = load(path)
    steps = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
    ks = sorted((e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"), key=lambda e: e["ts"])
    bound = 0.0
    for i, k in enumerate(ks):
        if "normal_kernel" in k["name"]:
            occ = ks[i:i + 6]
            span = occ[-1]["ts"] + occ[-1]["dur"] - occ[0]["ts"]
            bound += span - max(e["dur"] for e in occ)
    return bound / len(steps), len(steps)

if __name__ == "__main__":
    for t in sys.argv[1:] or ["fixtures/recorded/amp_mlp_foreach.json.gz", "fixtures/recorded/optim_deep_narrow.json.gz",
                              "fixtures/runs/ddp_host_straggler/rank0.pt.trace.json.gz"]:
        print(t, "GEMM-bearing top-level ops:", gemm_ops(t))
    print("eggroll_hooks noise-chain bound per step (span - longest), steps:", eggroll_bound("fixtures/eggroll_hooks.json.gz"))
