#!/usr/bin/env python3
"""Independent kernel totals for export's DuckDB test.

For each Kineto-style trace given (JSON or .json.gz), counts the complete
("ph": "X") events of category "kernel" per name and sums their durations
in integer nanoseconds, parsing the profiler's decimal microseconds exactly
(Decimal, not float). Traces with no such events (JAX/Perfetto dialects)
are left out. Writes JSON {"path as given": {"kernel name": [count,
total_ns]}} to stdout (run it from the repository root); the test compares it with a DuckDB query over the
exported kernels table.

    python3 export/duckdbtest/testdata/kernel_totals.py fixtures/*.json.gz \
        fixtures/recorded/*.json.gz fixtures/capture/*.json.gz \
        fixtures/runs/*/*.json.gz > export/duckdbtest/testdata/kernel_totals.json
"""
import gzip
import json
import sys
from decimal import Decimal


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def totals(path):
    out = {}
    for e in load(path).get("traceEvents", []):
        if e.get("ph") != "X" or e.get("cat") != "kernel":
            continue
        ns = int(Decimal(e.get("dur", 0)) * 1000)
        c = out.setdefault(e["name"], [0, 0])
        c[0] += 1
        c[1] += ns
    return out


def main():
    result = {}
    for path in sys.argv[1:]:
        t = totals(path)
        if t:
            result[path] = t
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
