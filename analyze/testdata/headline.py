#!/usr/bin/env python3
"""Independent headline figures for TestHeadlineMatchesPython.

For each Kineto fixture: steps are the ProfilerStep#N ranges; a kernel,
memcpy or memset belongs to the step its launch call (same correlation id)
started in; the steady state is the steps after the first. Prints, per
fixture, the median steady step wall (ns), the median GPU busy time (ns:
the union of GPU intervals clipped to the step) and the median kernels per
step. Run: python3 headline.py ../../fixtures/*.json.gz > headline.json
"""
import gzip, json, sys, statistics

def ns(us):
    return round(float(us) * 1000)

out = {}
for path in sys.argv[1:]:
    ev = json.load(gzip.open(path))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in ev
                   if e.get("ph") == "X" and e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("ProfilerStep#"))
    if len(steps) < 2:
        continue
    launch = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            c = (e.get("args") or {}).get("correlation")
            if c is not None:
                launch[c] = ns(e["ts"])
    gpu = []
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            s = ns(e["ts"]); end = s + ns(e["dur"])
            at = launch.get((e.get("args") or {}).get("correlation"), s)
            gpu.append((s, end, e["cat"] == "kernel", at))
    def step_of(t):
        for i, (a, b) in enumerate(steps):
            if a <= t < b:
                return i
        return -1
    walls, busy, kernels = [], [], []
    for i, (a, b) in enumerate(steps[1:], start=1):
        walls.append(b - a)
        iv = sorted((max(s, a), min(e, b)) for s, e, _, _ in gpu if s < b and e > a)
        tot, cur = 0, None
        for s, e in iv:
            if cur is None or s > cur[1]:
                if cur: tot += cur[1] - cur[0]
                cur = [s, e]
            else:
                cur[1] = max(cur[1], e)
        if cur: tot += cur[1] - cur[0]
        busy.append(tot)
        kernels.append(sum(1 for _, _, k, at in gpu if k and step_of(at) == i))
    out[path.split("fixtures/")[-1]] = {"step_ns": statistics.median(walls), "gpu_busy_ns": statistics.median(busy),
                                        "kernels": statistics.median(kernels)}
json.dump(out, sys.stdout, indent=1, sort_keys=True)
print()
