#!/usr/bin/env python3
"""Independent decoding of the CUPTI activity buffers recorded on an H100.

Reads every *.activity.json.gz here (written by `tracelens capture
--dump-activity`), decodes the records with struct at the offsets of CUDA
11.8's cupti_activity.h (CUpti_ActivityKernel8, Memcpy5, Memset4, API; the
CUDA 13 records that produced these buffers keep that prefix), and checks the
trace the same capture wrote (*.trace.json.gz): the GPU records of the API
calls inside each recorded step's window (the dump's Steps) are exactly the
trace's GPU events, with the same durations and correlation ids. Writes
expected.json, which cupti_recorded_test.go compares tracelens's decoding
with. Run: python3 expect.py
"""
import base64, glob, gzip, json, os, re, struct

KERNEL, CKERNEL, MEMCPY, MEMSET, DRIVER, RUNTIME = 3, 10, 1, 2, 4, 5


def decode(buf):
    data = base64.b64decode(buf["Data"])
    offs = buf["Records"]
    names = {int(k): v for k, v in (buf["KernelNames"] or {}).items()}
    out = []
    for i, off in enumerate(offs):
        kind = struct.unpack_from("<I", data, off)[0]
        if kind in (KERNEL, CKERNEL):
            start, end = struct.unpack_from("<QQ", data, off + 16)
            stream = struct.unpack_from("<I", data, off + 48)[0]
            corr = struct.unpack_from("<I", data, off + 92)[0]
            ptr = struct.unpack_from("<Q", data, off + 104)[0]
            out.append(dict(kind=kind, name=names[ptr], start=start, end=end, corr=corr, stream=stream, bytes=0))
        elif kind in (MEMCPY, MEMSET):
            nbytes, start, end = struct.unpack_from("<QQQ", data, off + 8)
            stream, corr = struct.unpack_from("<II", data, off + 40)
            out.append(dict(kind=kind, name="", start=start, end=end, corr=corr, stream=stream, bytes=nbytes))
        elif kind in (DRIVER, RUNTIME):
            cbid = struct.unpack_from("<I", data, off + 4)[0]
            start, end = struct.unpack_from("<QQ", data, off + 8)
            corr = struct.unpack_from("<I", data, off + 32)[0]
            dom = "driver" if kind == DRIVER else "runtime"
            name = re.sub(r"_v[0-9]{4,5}$", "", (buf["APINames"] or {}).get(f"{dom}/{cbid}", f"{dom} API cbid {cbid}"))
            out.append(dict(kind=kind, name=name, start=start, end=end, corr=corr, cbid=cbid))
    return out


def step_gpu(recs, step):
    """GPU record durations per correlation id of the API calls that start
    inside the step's window (CUPTI clock), as the capture converts them."""
    api = {r["corr"] for r in recs if r["kind"] in (DRIVER, RUNTIME) and step["From"] <= r["start"] <= step["To"]}
    out = {}
    for r in recs:
        if r["kind"] not in (DRIVER, RUNTIME) and r["corr"] in api:
            out.setdefault(str(r["corr"]), []).append(r["end"] - r["start"])
    return out


def check_trace(path, steps):
    """The device's trace holds exactly the steps' GPU records."""
    with gzip.open(path) as f:
        t = json.load(f)
    gpu = {}
    for e in t["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            gpu.setdefault(str(e["args"]["correlation"]), []).append(round(float(e["dur"]) * 1000))
    want = {}
    for s in steps:
        want.update(s)
    assert gpu == want, (path, gpu, want)
    return sum(len(v) for v in gpu.values())


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    exp = {}
    for p in sorted(glob.glob(os.path.join(here, "*.activity.json.gz"))):
        w = os.path.basename(p)[: -len(".activity.json.gz")]
        with gzip.open(p) as f:
            d = json.load(f)
        recs = [r for b in d["Buffers"] for r in decode(b)]
        steps = [step_gpu(recs, s) for s in d["Steps"]]
        n = check_trace(os.path.join(here, w + ".trace.json.gz"), steps)
        exp[w] = {"records": recs, "steps": steps}
        print(f"{w}: {len(recs)} records in {len(d['Buffers'])} buffers, {len(steps)} steps, {n} GPU records in the trace")
    with open(os.path.join(here, "expected.json"), "w") as f:
        json.dump(exp, f, indent=0, sort_keys=True)


main()
