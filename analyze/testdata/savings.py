#!/usr/bin/env python3
"""Independent figures for savings_test.go (stdlib only, over the trace JSON).

pageable: for fixtures/capture/memcpy-pageable and memcpy-pinned: steps are
the ProfilerStep#N ranges; a pageable copy is a gpu_memcpy whose name says
"Pageable" with at least 64 KiB; the host is blocked in its API call (same
correlation id) and in the blocking calls (cu*/cuda*Synchronize and the
synchronous cuMemcpy*/cudaMemcpy* calls) inside the innermost cpu_op on the
same thread that encloses a copy's API call; blocked time is the union of
those intervals clipped to the step the API call is in. Expected saving per
step: (min(copy GPU time, blocked) - bytes / 64 GB/s (PCIe 5.0 x16)) /
steps. The pair's achieved saving is 1 - pinned step / pageable step
(medians of the steps after the first).

fp64: for fixtures/recorded/fp64_simulation: kernels whose names say double
(dgemm, f64f64, <double, (double), " double>"); GEMMs (name has "gemm")
save 1 - fp64/TF32 peak (H100 SXM datasheet, dense: 67 / 494.7 TFLOP/s) of
their time, the others half; per step = total / ProfilerStep count.

Run: python3 savings.py ../../fixtures > savings.json
"""
import gzip, json, os, statistics, sys

SYNC = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cuCtxSynchronize", "cuStreamSynchronize",
        "cuEventSynchronize", "cudaMemcpy", "cudaMemcpy2D", "cuMemcpyDtoH", "cuMemcpyDtoH_v2", "cuMemcpyHtoD", "cuMemcpyHtoD_v2", "cuMemcpy"}


def load(path):
    ev = json.load(gzip.open(path))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    return [e for e in ev if e.get("ph") == "X"]


def span(e):
    return float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))


def steps_of(ev):
    return sorted(span(e) for e in ev if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("ProfilerStep#"))


def union(iv):
    tot, cur = 0.0, None
    for s, e in sorted(iv):
        if cur is None or s > cur[1]:
            if cur:
                tot += cur[1] - cur[0]
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    if cur:
        tot += cur[1] - cur[0]
    return tot


def pageable(path):
    ev = load(path)
    steps = steps_of(ev)
    api = {e["args"]["correlation"]: e for e in ev if e.get("cat") in ("cuda_driver", "cuda_runtime") and "correlation" in (e.get("args") or {})}
    ops = [e for e in ev if e.get("cat") == "cpu_op"]
    calls = [e for e in ev if e.get("cat") in ("cuda_driver", "cuda_runtime")]
    t0 = min(span(e)[0] for e in ev)
    t1 = max(span(e)[1] for e in ev)
    blocked, gpu, nbytes, seen = [], 0.0, 0, set()
    for e in ev:
        a = e.get("args") or {}
        if e.get("cat") != "gpu_memcpy" or "Pageable" not in e.get("name", "") or a.get("bytes", 0) < 64 << 10:
            continue
        gpu += float(e["dur"])
        nbytes += a["bytes"]
        c = api.get(a.get("correlation"))
        if c is None:
            continue
        cs, ce = span(c)
        w = next(((s, t) for s, t in steps if s <= cs < t), (t0, t1))
        ivs = [(cs, ce)]
        encl = [o for o in ops if o.get("tid") == c.get("tid") and span(o)[0] <= cs and ce <= span(o)[1]]
        if encl:
            op = min(encl, key=lambda o: float(o.get("dur", 0)))
            key = (op["ts"], op.get("tid"), op["name"])
            if key not in seen:
                seen.add(key)
                os_, oe = span(op)
                ivs += [span(s) for s in calls if s["name"] in SYNC and s.get("tid") == op.get("tid") and os_ <= span(s)[0] and span(s)[1] <= oe]
        for s, t in ivs:
            s, t = max(s, w[0]), min(t, w[1])
            if t > s:
                blocked.append((s, t))
    b = union(blocked)
    walls = [t - s for s, t in steps]
    return {"trace_us": t1 - t0, "blocked_us": b, "copy_gpu_us": gpu, "bytes": nbytes, "steps": len(steps),
            "steady_step_us": statistics.median(walls[1:]),
            "saving_per_step_us": max(min(gpu, b) - nbytes / 64e3, 0) / max(len(steps), 1)}


def fp64(path):
    ev = load(path)
    steps = steps_of(ev)
    gemm = other = 0.0
    for e in ev:
        if e.get("cat") != "kernel":
            continue
        n = e["name"]
        lo = n.lower()
        if not ("dgemm" in lo or "f64f64" in lo or "zgemm" in lo or any(p in n for p in ("<double", "(double)", " double>"))):
            continue
        if "gemm" in lo:
            gemm += float(e["dur"])
        else:
            other += float(e["dur"])
    return {"gemm_us": gemm, "other_us": other, "steps": len(steps),
            "saving_per_step_us": (gemm * (1 - 67 / 494.7) + other * 0.5) / len(steps)}


root = sys.argv[1]
out = {
    "capture/memcpy-pageable.json.gz": pageable(os.path.join(root, "capture/memcpy-pageable.json.gz")),
    "capture/memcpy-pinned.json.gz": pageable(os.path.join(root, "capture/memcpy-pinned.json.gz")),
    "recorded/fp64_simulation.json.gz": fp64(os.path.join(root, "recorded/fp64_simulation.json.gz")),
}
for e in out.values():
    for k, v in e.items():
        if isinstance(v, float):
            e[k] = round(v, 3)
json.dump(out, sys.stdout, indent=1, sort_keys=True)
print()
