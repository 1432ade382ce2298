#!/usr/bin/env python3
"""Independent per-rank communication figures for export's DuckDB test.

For each multi-rank run directory given (rank*.pt.trace.json[.gz] files,
as fixtures/runs holds them), and each rank file in it:

- the rank is distributedInfo.rank, else the N of rankN in the file name;
- a communication kernel is a complete ("ph": "X") event of category
  "kernel" whose name starts with nccl or rccl (any case);
- its collective arguments are those of the record_param_comms cpu_op
  that encloses its launch: the cuda_runtime/cuda_driver event with the
  kernel's args.correlation, inside the op's [ts, ts+dur] on the same
  pid/tid. Kernels launched before the profiler started have no launch
  in the trace and so no arguments;
- its kind is read from the op's "Collective name" when it has one, else
  from the kernel name (allreduce, allgather, reducescatter, alltoall,
  broadcast/bcast, send/recv, barrier, reduce, else unknown: the names
  lower-cased without '_', '-', ' ');
- its bytes are max(In msg nelems, Out msg nelems) times the size of the
  op's dtype (Float 4, BFloat16/Half 2, ...); kernels without arguments
  have none.

Durations are summed in integer nanoseconds from the profiler's decimal
microseconds (Decimal, not float). Writes JSON
{"run directory": {"rank": {"world_size": n, "kernels": n,
"duration_ns": n, "with_args": n, "bytes": n, "kinds": {"kind": n}}}}
to stdout; run it from the repository root:

    python3 export/duckdbtest/testdata/collectives.py fixtures/runs/*/ \\
        > export/duckdbtest/testdata/collectives.json
"""
import gzip
import json
import os
import re
import sys
from bisect import bisect_right
from decimal import Decimal

ELEM = {"float": 4, "float32": 4, "int": 4, "int32": 4, "double": 8, "long": 8, "int64": 8,
        "half": 2, "bfloat16": 2, "float16": 2, "short": 2, "byte": 1, "char": 1, "bool": 1,
        "int8": 1, "uint8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def ns(us):
    return int(Decimal(us) * 1000)


def kind_of(*names):
    for s in names:
        k = (s or "").lower().replace("_", "").replace("-", "").replace(" ", "")
        if not k:
            continue
        for needle, kind in (("allreduce", "all_reduce"), ("allgather", "all_gather"),
                             ("reducescatter", "reduce_scatter"), ("alltoall", "all_to_all"),
                             ("broadcast", "broadcast"), ("bcast", "broadcast"),
                             ("send", "send_recv"), ("recv", "send_recv"),
                             ("barrier", "barrier"), ("reduce", "reduce")):
            if needle in k:
                return kind
    return "unknown"


def rank_file(path):
    doc = load(path)
    info = doc.get("distributedInfo") or {}
    if "rank" in info:
        rank = int(info["rank"])
    else:
        m = re.findall(r"rank[_-]?(\d+)", os.path.basename(path), re.I)
        if not m:
            raise SystemExit(f"{path}: no distributedInfo.rank and no rank in the name")
        rank = int(m[-1])
    events = [e for e in doc.get("traceEvents", []) if e.get("ph") == "X"]
    launches = {}
    comms = {}
    for e in events:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]] = e
        if e.get("name") == "record_param_comms":
            comms.setdefault((e["pid"], e["tid"]), []).append(e)
    for ops in comms.values():
        ops.sort(key=lambda e: Decimal(e["ts"]))

    def enclosing(la):
        ops = comms.get((la["pid"], la["tid"]), [])
        starts = [Decimal(o["ts"]) for o in ops]
        t = Decimal(la["ts"])
        # The innermost enclosing op starts last among those that start
        # at or before the launch.
        for i in range(bisect_right(starts, t) - 1, -1, -1):
            o = ops[i]
            if Decimal(o["ts"]) + Decimal(o.get("dur", 0)) >= t + Decimal(la.get("dur", 0)):
                return o.get("args", {})
        return None

    out = {"world_size": info.get("world_size"), "kernels": 0, "duration_ns": 0, "with_args": 0, "bytes": 0, "kinds": {}}
    for e in events:
        if e.get("cat") != "kernel" or e["name"][:4].lower() not in ("nccl", "rccl"):
            continue
        out["kernels"] += 1
        out["duration_ns"] += ns(e.get("dur", 0))
        la = launches.get(e.get("args", {}).get("correlation"))
        args = enclosing(la) if la is not None else None
        name = None
        if args is not None:
            out["with_args"] += 1
            name = args.get("Collective name")
            elem = ELEM.get(str(args.get("dtype", "")).lower(), 0)
            out["bytes"] += max(int(args.get("In msg nelems", 0)), int(args.get("Out msg nelems", 0))) * elem
        kind = kind_of(name, e["name"])
        out["kinds"][kind] = out["kinds"].get(kind, 0) + 1
    return rank, out


def main():
    result = {}
    for d in sys.argv[1:]:
        ranks = {}
        for f in sorted(os.listdir(d)):
            if f.endswith(".json") or f.endswith(".json.gz"):
                rank, out = rank_file(os.path.join(d, f))
                ranks[str(rank)] = out
        result[d.rstrip("/")] = ranks
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
