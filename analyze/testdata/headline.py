#!/usr/bin/env python3
"""Independent headline figures for TestHeadlineMatchesPython.

For each Kineto fixture: steps are the ProfilerStep#N ranges; a kernel,
memcpy or memset belongs to the step its launch call (same correlation id)
started in (a kernel without a launch on a device whose kernels have them
belongs to no step: it was launched before profiling started); the steady
state is the steps after the first. A step's window is its ProfilerStep
range, slid later when the GPU ran the step's work after the range ended,
or the extent of that work when longer than the range (asynchronous steps,
CUDA-graph replays). Prints, per fixture, the median steady step (ns: the
window's length), the median GPU busy time (ns: the union, per device, of
the step's own GPU intervals clipped to its window) and the median kernels
per step. It also prints the figures the faces quote about the steps: the
fastest and slowest step and their spread over the median of all steps,
the first step over the median of the others (three steps or more), and
the share of the steady step's idle GPU time (window x devices - busy)
that launch calls (runtime/driver calls that launched GPU work, or named
*LaunchKernel*, *GraphLaunch*, *LaunchCooperative*, placed by their start
in a ProfilerStep range) take: the median launch-call time over the
median idle time, at most 1; and per steady step the launch-call time per
launch (median launch-call time over median launches) and the mean kernel
(median kernel time over median kernels). Run: python3 headline.py ../../fixtures/*.json.gz ../../fixtures/recorded/*.json.gz ../../fixtures/capture/*.json.gz > headline.json
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
    calls = []
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            c = (e.get("args") or {}).get("correlation")
            if c is not None:
                launch[c] = ns(e["ts"])
            calls.append((ns(e["ts"]), ns(e["dur"]), c, str(e.get("name", ""))))
    gpu = []
    launched_dev = set()
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            s = ns(e["ts"]); end = s + ns(e["dur"])
            args = e.get("args") or {}
            at = launch.get(args.get("correlation"))
            dev = args.get("device", 0)
            if at is not None and e["cat"] == "kernel":
                launched_dev.add(dev)
            gpu.append((s, end, e["cat"] == "kernel", at, dev))
    gpu_corr = set((e.get("args") or {}).get("correlation") for e in ev
                   if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    ndev = len(set(x[4] for x in gpu)) or 1
    def step_of(t):
        for i, (a, b) in enumerate(steps):
            if a <= t < b:
                return i
        return -1
    own = [[] for _ in steps]
    for s, e, k, at, dev in gpu:
        if at is None:
            if k and dev in launched_dev:
                continue
            at = s
        i = step_of(at)
        if i >= 0 and e > s:
            own[i].append((s, e, k, dev))
    walls, busy, kernels, all_walls, idle, api, launches, kernel_ns = [], [], [], [], [], [], [], []
    for i, (a, b) in enumerate(steps):
        w0, w1 = a, b
        if own[i]:
            first = min(x[0] for x in own[i]); last = max(x[1] for x in own[i])
            if last - first > b - a:
                w0, w1 = first, last
            elif last > b:
                w0, w1 = a + (last - b), last
        all_walls.append(w1 - w0)
        if i == 0:
            continue
        walls.append(w1 - w0)
        idle_dev = ndev * (w1 - w0)
        mine = [d for t, d, c, n in calls if a <= t < b and
                ((c is not None and c in gpu_corr) or "LaunchKernel" in n or "GraphLaunch" in n or "LaunchCooperative" in n)]
        api.append(sum(mine))
        launches.append(len(mine))
        kernel_ns.append(sum(x[1] - x[0] for x in own[i] if x[2]))
        tot = 0
        for d in set(x[3] for x in own[i]):
            iv = sorted((max(s, w0), min(e, w1)) for s, e, _, dv in own[i] if dv == d and s < w1 and e > w0)
            cur = None
            for s, e in iv:
                if cur is None or s > cur[1]:
                    if cur: tot += cur[1] - cur[0]
                    cur = [s, e]
                else:
                    cur[1] = max(cur[1], e)
            if cur: tot += cur[1] - cur[0]
        busy.append(tot)
        idle.append(idle_dev - tot)
        kernels.append(sum(1 for x in own[i] if x[2]))
    med_all = statistics.median(all_walls)
    rec = {"step_ns": statistics.median(walls), "gpu_busy_ns": statistics.median(busy),
           "kernels": statistics.median(kernels), "min_wall_ns": min(all_walls), "max_wall_ns": max(all_walls),
           "wall_spread": (max(all_walls) - min(all_walls)) / med_all if med_all else 0,
           "first_step_ratio": all_walls[0] / statistics.median(all_walls[1:]) if len(all_walls) >= 3 else 0}
    mid = statistics.median(idle)
    rec["launch_api_idle_share"] = min(statistics.median(api) / mid, 1) if mid > 0 else 0
    ml, mk = statistics.median(launches), statistics.median(kernels)
    rec["launch_api_per_launch_ns"] = statistics.median(api) / ml if ml else 0
    rec["kernel_mean_ns"] = statistics.median(kernel_ns) / mk if mk else 0
    out[path.split("fixtures/")[-1]] = rec
json.dump(out, sys.stdout, indent=1, sort_keys=True)
print()
