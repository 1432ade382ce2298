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
  have none;
- a send/recv kernel (kind send_recv by the above) carries the sends and
  recvs recorded before it: each record_param_comms op whose "Collective
  name" is send or recv belongs to the first such kernel of the rank
  launched at or after the op's ts (torch.distributed.pipelining batches
  a send and a recv into one kernel, launched inside an nccl:coalesced
  range with no arguments). A kernel with such ops has arguments; its
  bytes are the larger of what its sends and what its recvs move (each
  op's max nelems times its dtype's size).

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

    def op_bytes(args):
        elem = ELEM.get(str(args.get("dtype", "")).lower(), 0)
        return max(int(args.get("In msg nelems", 0)), int(args.get("Out msg nelems", 0))) * elem

    kernels = []
    for e in events:
        if e.get("cat") != "kernel" or e["name"][:4].lower() not in ("nccl", "rccl"):
            continue
        la = launches.get(e.get("args", {}).get("correlation"))
        args = enclosing(la) if la is not None else None
        kind = kind_of(args.get("Collective name") if args else None, e["name"])
        kernels.append(dict(event=e, launch=la, args=args, kind=kind, sent=0, received=0, p2p=0))
    # sends and recvs: each to the first send/recv kernel launched at or after it
    p2p = sorted((Decimal(e["ts"]), e["args"]) for e in events if e.get("name") == "record_param_comms"
                 and str(e.get("args", {}).get("Collective name", "")) in ("send", "recv"))
    cands = sorted((k for k in kernels if k["kind"] == "send_recv" and k["launch"] is not None),
                   key=lambda k: Decimal(k["launch"]["ts"]))
    i = 0
    for ts, args in p2p:
        while i < len(cands) and Decimal(cands[i]["launch"]["ts"]) < ts:
            i += 1
        if i == len(cands):
            break
        k = cands[i]
        k["p2p"] += 1
        k["sent" if args["Collective name"] == "send" else "received"] += op_bytes(args)
    out = {"world_size": info.get("world_size"), "kernels": 0, "duration_ns": 0, "with_args": 0, "bytes": 0, "kinds": {}}
    for k in kernels:
        out["kernels"] += 1
        out["duration_ns"] += ns(k["event"].get("dur", 0))
        if k["p2p"]:
            out["with_args"] += 1
            out["bytes"] += max(k["sent"], k["received"])
        elif k["args"] is not None:
            out["with_args"] += 1
            out["bytes"] += op_bytes(k["args"])
        out["kinds"][k["kind"]] = out["kinds"].get(k["kind"], 0) + 1
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
