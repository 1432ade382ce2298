#!/usr/bin/env python3
"""Writes the small synthetic Kineto traces the report tests use.

Each is a three-step PyTorch-style trace (ProfilerStep#N, a record_function
range, a Python frame, aten::mm + two aten::add launching one GEMM and two
elementwise kernels per step) with one thing taken away or made hostile:

  hostile_names.json  every name an attacker controls is hostile
  no_steps.json       no ProfilerStep#N ranges
  no_python.json      no python_function frames (with_stack off)
  cpu_only.json       no GPU activity and no CUDA API calls

Run from this folder: python3 gen_fixtures.py
"""
import json

HOSTILE_KERNEL = "<script>alert(1)</script>|x`y\x1b[31m"


def build(steps=True, python=True, gpu=True, names=None, nsteps=3):
    names = names or {}
    kname = names.get("kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)")
    gemm = "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
    addop = names.get("op", "aten::add")
    frame = names.get("frame", "model.py(42): forward")
    ann = names.get("ann", "block")
    dev = {"id": 0, "name": names.get("device", "NVIDIA H100 80GB HBM3"), "totalGlobalMem": 85045460992,
           "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
           "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
           "sharedMemPerMultiprocessor": 233472, "numSms": 132, "sharedMemPerBlockOptin": 232448}
    t0 = 1790857026000000.0
    ev = []
    corr, ext, pyid = 100, 1, 1
    for s in range(nsteps):
        base = t0 + s * 1000.0
        if steps:
            ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{s+1}", "pid": 10, "tid": 10, "ts": base, "dur": 900.0, "args": {"External id": ext}})
            ext += 1
        ev.append({"ph": "X", "cat": "user_annotation", "name": ann, "pid": 10, "tid": 10, "ts": base + 10, "dur": 700.0, "args": {"External id": ext}})
        ext += 1
        if python:
            ev.append({"ph": "X", "cat": "python_function", "name": frame, "pid": 10, "tid": 10, "ts": base + 20, "dur": 600.0, "args": {"Python id": pyid, "Python parent id": 0}})
            pyid += 1
        launches = [("aten::mm", gemm, 150.0, [[1024, 784], [784, 2048]]),
                    (addop, kname, 12.0, [[1024, 2048], [1024, 2048]]),
                    (addop, kname, 12.0, [[1024, 2048], [1024, 2048]])]
        for j, (op, kn, kdur, dims) in enumerate(launches):
            ots = base + 30 + j * 200
            ev.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 10, "tid": 10, "ts": ots, "dur": 60.0,
                       "args": {"External id": ext, "Input Dims": dims, "Input type": ["float", "float"], "Sequence number": ext}})
            if gpu:
                ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": ots + 10, "dur": 8.0,
                           "args": {"External id": ext, "correlation": corr, "cbid": 211}})
                ev.append({"ph": "X", "cat": "kernel", "name": kn, "pid": 0, "tid": 7, "ts": ots + 25, "dur": kdur,
                           "args": {"External id": ext, "correlation": corr, "device": 0, "stream": 7, "grid": [128, 1, 1], "block": [256, 1, 1],
                                    "registers per thread": 32, "shared memory": 0, "blocks per SM": 0.97, "warps per SM": 7.8, "est. achieved occupancy %": 12}})
                ev.append({"ph": "s", "id": corr, "pid": 10, "tid": 10, "ts": ots + 10, "cat": "ac2g", "name": "ac2g"})
                ev.append({"ph": "f", "id": corr, "pid": 0, "tid": 7, "ts": ots + 25, "cat": "ac2g", "name": "ac2g", "bp": "e"})
            corr += 1
            ext += 1
    out = {"schemaVersion": 1, "deviceProperties": [dev] if gpu else [],
           "trace_id": "0123456789ABCDEF", "displayTimeUnit": "ms", "baseTimeNanoseconds": 1790857026000000000,
           "traceEvents": ev, "traceName": names.get("traceName", "synthetic.json")}
    if gpu:
        out.update({"cupti_version": 130001, "cuda_runtime_version": 13000, "cuda_driver_version": 13000})
    return out


def write(name, obj):
    with open(name, "w") as f:
        json.dump(obj, f, separators=(",", ":"))
        f.write("\n")


write("hostile_names.json", build(names={
    "kernel": HOSTILE_KERNEL,
    "op": "aten::`add`|**bold**\n# heading <img src=x onerror=alert(1)>",
    "frame": "evil.py(7): [click](https://evil.example) \u202e<b>",
    "ann": "www.evil.example & <iframe>",
    "device": "GPU<b>|*x*",
    "traceName": "`pwn`\n<script>"}))
write("no_steps.json", build(steps=False))
write("no_python.json", build(python=False))
write("cpu_only.json", build(gpu=False))
