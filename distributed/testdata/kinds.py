#!/usr/bin/env python3
"""Expected pipeline (send/recv) and all-to-all figures of generated runs,
from the rank traces' JSON with the standard library (independent of
tracelens). Usage (the runs as TestGeneratedKinds writes them with
TRACELENS_KEEP_KINDS=DIR):

    python3 kinds.py DIR/pp_balanced DIR/pp_bubble DIR/a2a_balanced DIR/a2a_skewed > kinds.json

Method, per run directory (one trace per rank), as expect.py:
- communication kernels: kernels whose name starts with nccl/rccl;
  compute: the union of every other kernel's interval on the rank;
- a communication kernel's collective: "Collective name" in its own args,
  else in the record_param_comms cpu_op with its External id; send and
  recv are send/recv, all_to_all is all-to-all; kernels with neither have
  no arguments and are not matched;
- matching: per process group, each rank's kernels by start, position by
  position (the script asserts equal counts and one kind per position);
- steps: the most ProfilerStep# annotations of any rank.
Pipeline row of a rank in matched send/recv: p2p_calls; compute_per_step_us,
the total of its compute union over steps; p2p_kernel_per_step_us, its
send/recv kernels' duration over steps; p2p_bytes_per_step, the larger of
In/Out msg nelems times the dtype's size (Float: 4), summed, integer-divided
by steps; bubble_per_step_us: per matched send/recv, its wait (latest start
of the pair minus its own, at most its kernel) less the time its compute
covered then, summed over steps. All-to-all row: calls, bytes_per_step as
above, kernel_per_step_us its all-to-all kernels' duration over steps.
Times in microseconds.
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from expect import load, union, covered, rank_of  # noqa: E402

SIZES = {'float': 4, 'float32': 4, 'half': 2, 'bfloat16': 2, 'float16': 2, 'double': 8}


def kind_of(name):
    k = (name or '').lower().replace('_', '')
    if 'alltoall' in k:
        return 'all_to_all'
    if 'send' in k or 'recv' in k:
        return 'send_recv'
    return 'other' if k else None


def run(d):
    ranks = {}
    for f in sorted(os.listdir(d)):
        if not (f.endswith('.json') or f.endswith('.json.gz')):
            continue
        j = load(os.path.join(d, f))
        ev = j['traceEvents']
        kernels = [e for e in ev if e.get('cat') == 'kernel' and e.get('ph') == 'X']
        comm = sorted((e for e in kernels if e['name'][:4].lower() in ('nccl', 'rccl')), key=lambda e: e['ts'])
        u = union([(e['ts'], e['ts'] + e['dur']) for e in kernels if e['name'][:4].lower() not in ('nccl', 'rccl')])
        rpc = {e['args']['External id']: e['args'] for e in ev if e.get('name') == 'record_param_comms' and 'External id' in e.get('args', {})}
        calls = []
        for e in comm:
            a = e['args'] if 'Collective name' in e['args'] else rpc.get(e['args'].get('External id'), {})
            nbytes = max(a.get('In msg nelems', 0), a.get('Out msg nelems', 0)) * SIZES.get(str(a.get('dtype', '')).lower(), 0)
            calls.append(dict(start=e['ts'], dur=e['dur'], kind=kind_of(a.get('Collective name')), group=a.get('Process Group Name'), bytes=nbytes))
        steps = [e for e in ev if e.get('cat') == 'user_annotation' and e['name'].startswith('ProfilerStep#')]
        ranks[rank_of(f, j)] = dict(calls=calls, compute=u, steps=len(steps))
    rs = sorted(ranks)
    nsteps = max(max(ranks[r]['steps'] for r in rs), 1)
    agg = {r: {k: dict(calls=0, dur=0.0, bytes=0, bubble=0.0) for k in ('send_recv', 'all_to_all')} for r in rs}
    groups = sorted({c['group'] for r in rs for c in ranks[r]['calls'] if c['group'] is not None})
    for g in groups:
        seqs = {r: [c for c in ranks[r]['calls'] if c['group'] == g] for r in rs}
        n = len(seqs[rs[0]])
        assert all(len(seqs[r]) == n for r in rs), ('different numbers of collectives in group', g)
        for i in range(n):
            cs = {r: seqs[r][i] for r in rs}
            k = cs[rs[0]]['kind']
            assert all(c['kind'] == k for c in cs.values()), (g, i)
            if k not in ('send_recv', 'all_to_all'):
                continue
            latest = max(c['start'] for c in cs.values())
            for r, c in cs.items():
                a = agg[r][k]
                a['calls'] += 1
                a['dur'] += c['dur']
                a['bytes'] += c['bytes']
                w = min(latest - c['start'], c['dur'])
                if w > 0:
                    a['bubble'] += w - covered(ranks[r]['compute'], c['start'], c['start'] + w)
    pipeline, a2a = [], []
    for r in rs:
        p, q = agg[r]['send_recv'], agg[r]['all_to_all']
        if p['calls']:
            pipeline.append(dict(rank=r, p2p_calls=p['calls'], compute_per_step_us=sum(b - a for a, b in ranks[r]['compute']) / nsteps,
                                 p2p_kernel_per_step_us=p['dur'] / nsteps, p2p_bytes_per_step=p['bytes'] // nsteps,
                                 bubble_per_step_us=p['bubble'] / nsteps))
        if q['calls']:
            a2a.append(dict(rank=r, calls=q['calls'], bytes_per_step=q['bytes'] // nsteps, kernel_per_step_us=q['dur'] / nsteps))
    return dict(pipeline=pipeline, all_to_all=a2a, steps=nsteps)


if __name__ == '__main__':
    json.dump({os.path.basename(d.rstrip('/')): run(d) for d in sys.argv[1:]}, sys.stdout, indent=1, sort_keys=True)
    print()
