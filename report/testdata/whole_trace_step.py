#!/usr/bin/env python3
"""Independent figures for TestComparisonWholeTraceStep (stdlib only).

jax_eggroll has no ProfilerStep: its "step" is the whole trace span, most of
it the profiler's own start_trace/stop_trace; eggroll_direct's median step
after the first. Their ratio is the meaningless "34.9x" the comparison used
to print.
"""
import gzip, json, statistics

def events(p):
    d = json.load(gzip.open(p))
    return d["traceEvents"] if isinstance(d, dict) else d

jax = [e for e in events("fixtures/jax_eggroll.perfetto.json.gz") if e.get("ph") == "X"]
span = max(e["ts"] + e.get("dur", 0) for e in jax) - min(e["ts"] for e in jax)
prof = sum(e["dur"] for e in jax if "start_trace" in e["name"] or "stop_trace" in e["name"])
steps = any(e["name"].startswith("ProfilerStep#") for e in jax)
pt = sorted((e["ts"], e["dur"]) for e in events("fixtures/eggroll_direct.json.gz")
            if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
med = statistics.median(d for _, d in pt[1:])
print("jax span %.1f us, profiler start/stop %.1f us, ProfilerStep: %s" % (span, prof, steps))
print("eggroll_direct median step after first %.1f us, ratio %.2f" % (med, span / med))
