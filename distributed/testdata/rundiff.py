#!/usr/bin/env python3
"""Expected figures of `tracelens diff RUN_A RUN_B` (distributed.CompareRuns
and the described rank's GPU busy), computed from the rank traces' JSON
with the standard library (independent of tracelens). Usage:

    python3 rundiff.py RUN_DIR... > rundiff.json

Per run directory, per rank, per ProfilerStep# (steps by their host
annotation; the first step left out, as diff does), with expect.py's
collective matching (per process group, position by position):
- a collective counts in the step its kernel starts in on that rank;
- wall_us: the step annotation's duration;
- late_us: at the collectives the rank arrived at last (latest start > 50 us
  after the earliest), its start minus the median of the others' starts;
- peer_wait_us: its wait (latest start - own start, at most its kernel)
  less the time its compute kernels (any non-NCCL kernel) covered then;
- transfer_us: the shortest duration of the collective across ranks;
- exposed_transfer_us: max(kernel time not covered by compute - wait, 0);
- exposed_comm_us, comm_kernel_us: the rank's NCCL kernels (matched or
  not) starting in the step: time not covered by compute, and duration.
- gpu_busy_less_peer_wait_us: the union of the rank's GPU activities
  (kernels, memcpy, memset) within the step's host window, less its peer-wait
  intervals (from each matched kernel's start for its wait, at most the
  kernel) not covered by its compute kernels - the rank's GPU work with
  the spinning left out.
Each figure: the median over the compared steps; "all" pools every rank's
steps. Times in microseconds.
"""
import json, os, statistics, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from expect import load, union, covered, kind, rank_of  # noqa: E402

METRICS = ['wall_us', 'late_us', 'peer_wait_us', 'transfer_us', 'exposed_transfer_us', 'exposed_comm_us', 'comm_kernel_us',
           'gpu_busy_less_peer_wait_us']


def read(d):
    ranks = {}
    for f in sorted(os.listdir(d)):
        if not (f.endswith('.json') or f.endswith('.json.gz')):
            continue
        j = load(os.path.join(d, f))
        ev = j['traceEvents']
        gpu = [e for e in ev if e.get('ph') == 'X' and e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset')]
        kernels = [e for e in gpu if e['cat'] == 'kernel']
        comm = sorted((e for e in kernels if e['name'][:4].lower() in ('nccl', 'rccl')), key=lambda e: e['ts'])
        u = union([(e['ts'], e['ts'] + e['dur']) for e in kernels if e['name'][:4].lower() not in ('nccl', 'rccl')])
        rpc = {e['args']['External id']: e['args'] for e in ev if e.get('name') == 'record_param_comms' and 'External id' in e.get('args', {})}
        calls = []
        for e in comm:
            a = e['args'] if 'Collective name' in e['args'] else rpc.get(e['args'].get('External id'), {})
            calls.append(dict(start=e['ts'], end=e['ts'] + e['dur'], dur=e['dur'], exposed=e['dur'] - covered(u, e['ts'], e['ts'] + e['dur']),
                              kind=kind(e['name'], a), group=a.get('Process Group Name')))
        steps = sorted((e['ts'], e['ts'] + e['dur']) for e in ev if e.get('cat') == 'user_annotation' and e['name'].startswith('ProfilerStep#'))
        ranks[rank_of(f, j)] = dict(calls=calls, steps=steps, compute=u, gpu=[(e['ts'], e['ts'] + e['dur']) for e in gpu], spin=[])
    return ranks


def minus(a, b):
    """The parts of the disjoint sorted intervals a outside the union b."""
    out = []
    for s, e in a:
        cur = s
        for x, y in b:
            if y <= cur or x >= e:
                continue
            if x > cur:
                out.append((cur, x))
            cur = max(cur, y)
        if cur < e:
            out.append((cur, e))
    return out


def step_of(steps, t):
    for i, (s, e) in enumerate(steps):
        if s <= t < e:
            return i
    return -1


def run(d):
    ranks = read(d)
    rs = sorted(ranks)
    fig = {r: [dict.fromkeys(METRICS, 0.0) for _ in ranks[r]['steps']] for r in rs}
    for r in rs:
        for c in ranks[r]['calls']:
            st = step_of(ranks[r]['steps'], c['start'])
            if st >= 0:
                fig[r][st]['comm_kernel_us'] += c['dur']
                fig[r][st]['exposed_comm_us'] += c['exposed']
    groups = sorted({c['group'] for r in rs for c in ranks[r]['calls'] if c['group'] is not None})
    for g in groups:
        seqs = {r: [c for c in ranks[r]['calls'] if c['group'] == g] for r in rs}
        for i in range(len(seqs[rs[0]])):
            cs = {r: seqs[r][i] for r in rs}
            latest = max(c['start'] for c in cs.values())
            earliest = min(c['start'] for c in cs.values())
            transfer = min(c['dur'] for c in cs.values())
            last = max(rs, key=lambda r: cs[r]['start'])
            for r in rs:
                c = cs[r]
                w = latest - c['start']
                st = step_of(ranks[r]['steps'], c['start'])
                spin = min(w, c['dur'])
                if spin > 0:
                    ranks[r]['spin'].append((c['start'], c['start'] + spin))
                if st < 0:
                    continue
                f = fig[r][st]
                if spin > 0:
                    f['peer_wait_us'] += spin - covered(ranks[r]['compute'], c['start'], c['start'] + spin)
                f['transfer_us'] += transfer
                f['exposed_transfer_us'] += max(c['exposed'] - w, 0)
                if r == last and latest - earliest > 50:
                    f['late_us'] += latest - statistics.median(cs[q]['start'] for q in rs if q != r)
    for r in rs:
        spin = minus(union(ranks[r]['spin']), ranks[r]['compute'])
        for i, (s, e) in enumerate(ranks[r]['steps']):
            busy = union([(max(a, s), min(b, e)) for a, b in ranks[r]['gpu'] if a < e and b > s])
            fig[r][i]['wall_us'] = e - s
            fig[r][i]['gpu_busy_less_peer_wait_us'] = sum(b - a - covered(spin, a, b) for a, b in busy)
    out = {}
    for m in METRICS:
        out[m] = {str(r): statistics.median(x[m] for x in fig[r][1:]) for r in rs}
        out[m]['all'] = statistics.median(x[m] for r in rs for x in fig[r][1:])
    return out


if __name__ == '__main__':
    json.dump({os.path.basename(d.rstrip('/')): run(d) for d in sys.argv[1:]}, sys.stdout, indent=1, sort_keys=True)
    print()
