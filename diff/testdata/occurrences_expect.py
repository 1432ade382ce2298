#!/usr/bin/env python3
"""Independent figures for diff's occurrence-level comparison (python3 stdlib only).

python3 diff/testdata/occurrences_expect.py   # from the repository root -> diff/testdata/occurrences_expect.json

For each recorded pair (fixtures/recorded/pairs/*_base/new.json.gz), cut to the common profiler
schedule's 3 active steps (the first three ProfilerStep#N windows; the first is dropped as
warm-up, so 2 steps a side are compared and the per-step U test cannot reach alpha = 0.05), it
computes for every kernel name and every op name present in the compared steps of both runs:

  occurrences  a kernel's launches whose launch call (cuda_runtime/cuda_driver, matched by
               correlation id) starts inside a compared step window [start, end), as
               fixtures/recorded/expect/pairs.py attributes GPU work; an op's cpu_op calls that
               start inside a compared step and have no enclosing cpu_op of the same name on
               their thread (enclosing: same thread, start <= s and e <= end; the time the
               per-step op figure sums)
  duration     integer ns from the JSON's microseconds (ledger.ns), end = ns(ts) + ns(dur),
               in us, floored at 0.001 us, then the natural log
  estimate     Hodges-Lehmann: the median of all n_base*n_new differences log(new) - log(base)
  interval     [D(C), D(mn+1-C)] of the sorted differences, with C from the null distribution
               of the Mann-Whitney U without ties: below 50 a side exactly (the smallest c with
               P(U <= c) >= alpha/2, as R's qwilcox; counted with the textbook recurrence
               f(u; m, n) = f(u - n; m - 1, n) + f(u; m, n - 1) in exact integers), else
               C = floor(mn/2 - z(1 - alpha/2) * sqrt(mn(m+n+1)/12)) (Hollander & Wolfe's normal
               approximation); no interval (lo, hi null) when C < 1
  ratio, lo, hi  exp of the estimate and of the bounds; confidence = 1 - 2 P(U <= C-1) exactly,
               1 - alpha approximately

It does not use tracelens. diff's TestOccurrencesMatchScript compares diff's Row.Occurrences
and TotalRow.Occurrences with the JSON written here. Order statistics here come from listing
and sorting every difference (differently from diff, which bisects on values).
"""
import json, math, os, sys
from functools import lru_cache
from statistics import NormalDist

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "fixtures", "recorded", "expect"))
import ledger  # noqa: E402  (its load and ns: the JSON's microseconds as integer ns)

PAIRS = os.path.join(ROOT, "fixtures", "recorded", "pairs")
ACTIVE = 3       # the profiler schedule's active steps
ALPHA = 0.05
EXACT_LIMIT = 50


def occurrences(path):
    ev = ledger.load(path)
    steps = sorted((ledger.ns(e["ts"]), ledger.ns(e["ts"]) + ledger.ns(e.get("dur")))
                   for e in ev if e.get("cat") in ("user_annotation", "python_annotation")
                   and e.get("name", "").startswith("ProfilerStep#")
                   and e["name"][len("ProfilerStep#"):].isdigit())[:ACTIVE]
    compared = steps[1:]

    def in_compared(t):
        return any(a <= t < b for a, b in compared)

    launch = {}
    for e in ev:
        args = e.get("args") or {}
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and args.get("correlation"):
            launch[int(args["correlation"])] = ledger.ns(e["ts"])
    kernels, ops, threads = {}, {}, {}
    for e in ev:
        cat = e.get("cat")
        s = ledger.ns(e["ts"])
        d = ledger.ns(e.get("dur"))
        if cat == "kernel":
            t = launch.get(int((e.get("args") or {}).get("correlation") or 0))
            if t is not None and in_compared(t):
                kernels.setdefault(e["name"], []).append(d)
        elif cat == "cpu_op":
            threads.setdefault((e.get("pid"), e.get("tid")), []).append((s, s + d, e["name"]))
    for calls in threads.values():
        calls.sort(key=lambda c: (c[0], -c[1]))
        stack = []
        for s, end, name in calls:
            while stack and not (stack[-1][0] <= s and end <= stack[-1][1]):
                stack.pop()
            outer = not any(n == name for _, _, n in stack)
            stack.append((s, end, name))
            if outer and in_compared(s):
                ops.setdefault(name, []).append(end - s)
    return kernels, ops


@lru_cache(maxsize=None)
def u_counts(m, n):
    """Counts of U = 0..mn over the C(m+n, m) orderings, by f(u;m,n) = f(u-n;m-1,n) + f(u;m,n-1)."""
    if m == 0 or n == 0:
        return (1,)
    a, b = u_counts(m - 1, n), u_counts(m, n - 1)
    out = [0] * (m * n + 1)
    for u, c in enumerate(a):
        out[u + n] += c
    for u, c in enumerate(b):
        out[u] += c
    return tuple(out)


def order_rank(m, n):
    """C and the confidence, or (0, None) when no interval reaches 1 - ALPHA."""
    mn = m * n
    if m < EXACT_LIMIT and n < EXACT_LIMIT:
        counts = u_counts(m, n)
        total = sum(counts)
        cum, c = 0, 0
        while (cum + counts[c]) * 2 < ALPHA * total:  # P(U <= c) < alpha/2
            cum += counts[c]
            c += 1
        if c == 0:
            return 0, None
        return c, 1 - 2 * cum / total
    z = NormalDist().inv_cdf(1 - ALPHA / 2)
    c = math.floor(mn / 2 - z * math.sqrt(mn * (m + n + 1) / 12))
    return (c, 1 - ALPHA) if c >= 1 else (0, None)


def shift(base_ns, new_ns):
    lx = [math.log(max(v / 1000, 0.001)) for v in base_ns]
    ly = [math.log(max(v / 1000, 0.001)) for v in new_ns]
    m, n = len(lx), len(ly)
    c, conf = order_rank(m, n)
    diffs = sorted(y - x for y in ly for x in lx)
    mn = m * n
    est = diffs[mn // 2] if mn % 2 else (diffs[mn // 2 - 1] + diffs[mn // 2]) / 2
    out = {"n_base": m, "n_new": n, "ratio": math.exp(est), "exact": m < EXACT_LIMIT and n < EXACT_LIMIT,
           "lo": None, "hi": None, "confidence": 0}
    if c > 0:  # else too few for any interval at 1 - ALPHA: the estimate alone
        out.update(lo=math.exp(diffs[c - 1]), hi=math.exp(diffs[mn - c]), confidence=conf)
    return out


MAX_PAIRS = 4_000_000  # rows with more differences than this are left out (listing them is slow here)


def pair(name):
    bk, bo = occurrences(os.path.join(PAIRS, name + "_base.json.gz"))
    nk, no = occurrences(os.path.join(PAIRS, name + "_new.json.gz"))
    out = {"kernels": {}, "ops": {}}
    for kind, b, n in (("kernels", bk, nk), ("ops", bo, no)):
        for k in sorted(set(b) & set(n)):
            if len(b[k]) * len(n[k]) > MAX_PAIRS:
                continue
            out[kind][k] = shift(b[k], n[k])
    return out


def main():
    names = sorted(f[:-len("_base.json.gz")] for f in os.listdir(PAIRS) if f.endswith("_base.json.gz"))
    res = {"active_steps": ACTIVE, "alpha": ALPHA, "pairs": {n: pair(n) for n in names}}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "occurrences_expect.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    for n, p in res["pairs"].items():
        print(n, len(p["kernels"]), "kernels", len(p["ops"]), "ops")


if __name__ == "__main__":
    main()
