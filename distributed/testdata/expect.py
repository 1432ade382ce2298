#!/usr/bin/env python3
"""Expected cross-rank figures for the distributed package's tests,
computed straight from the rank traces' JSON with the standard library
(independent of tracelens). Usage:

    python3 expect.py RUN_DIR... > expected.json

Method, per run directory (one *.json[.gz] trace per rank):
- rank: distributedInfo.rank (else rankN in the file name).
- communication kernels: cat "kernel" events whose name starts with
  nccl/rccl (case-insensitive); compute kernels: every other kernel.
- exposed: per communication kernel, its duration minus the time covered
  by the union of compute kernel intervals (any stream) of that rank.
- collective arguments: on the kernel event, else on the record_param_comms
  cpu_op with the kernel's External id. Kernels without arguments (launched
  before the profiler started) are counted in comm_us but not matched.
- matching: per process group (Process Group Name), each rank's kernels
  sorted by start are paired position by position (the script asserts the
  ranks have the same number per group and that kind and message size agree
  at every position).
- per collective: arrival = kernel start, wait(r) = latest arrival - own
  arrival, transfer = shortest duration across ranks; the last rank is the
  one with the latest arrival when it is > 50 us after the earliest.
- late per step of rank r: over the collectives other than send/recv (a
  pipeline's wait for its neighbour is its bubble) it arrived at last (by
  > 50 us), its arrival minus the median of the other ranks' arrivals, at
  most the longest wait another rank's kernel spent (min(wait, duration)),
  summed and divided by the largest number of ProfilerSteps of a rank.
- straggler: the rank with the largest late per step; it is one when that
  is >= 10% of the median (over ranks) of the median step time and
  >= 500 us, and its late time is >= 50% of all ranks' late time.
- peer wait of rank r (peer_wait_us): per matched collective, the interval
  from its kernel's start for its wait (at most the kernel), less the time
  covered by its compute kernels; summed.
- gain bound of the straggler s (gain_bound_per_step_us): over the
  collectives s arrived at last (by > 50 us), each other rank's peer wait
  in them, summed per rank and divided by the number of steps as late per
  step; the median over the other ranks.
- clock offset of rank r: median over collectives of end(r) - end(rank 0);
  residual: median absolute deviation of those differences.
- GPU busy without spinning (gpu_busy_us): the union of the rank's GPU
  activity (cat kernel, gpu_memcpy, gpu_memset; dur > 0) less its spin
  (gpu_spin_us): the union of its wait intervals (per matched collective,
  from its kernel's start for min(wait, duration)) less the time other GPU
  activity (compute kernels, copies, sets) covers. Shares are of the rank's
  GPU window (first GPU activity's start to last one's end).
- step_late (per profiled step of the first rank, in order): the rank
  whose late time (as for late per step, summed over the collectives it
  reached last whose launch on the first rank - the cuda_runtime/driver
  event with the kernel's correlation, else the kernel - falls in the
  step) is largest and at least max(10% of the median step, 500 us), with
  that time; null when none.
- kinds: all_reduce, all_gather, reduce_scatter, all_to_all (any "alltoall"
  in the name: message sizes may differ between ranks, uneven splits),
  send_recv ("send"/"recv"), else other.
- pipeline (runs with send/recv), per rank per step (steps: the largest
  number of ProfilerSteps of a rank): compute = union of compute kernels,
  p2p = send/recv kernel time, bytes = max(In, Out msg nelems) x dtype size,
  bubble = per matched send/recv, the wait interval less the compute
  covering it.
- all_to_all, per rank per step: calls, bytes (as for pipeline), kernel
  time; bytes_over_mean: the rank's bytes over the ranks' mean;
  others_wait_per_step_us: over the all-to-alls the rank reached last (by
  > 50 us), each other rank's exposed wait (as peer wait), summed per rank;
  the median over the other ranks.
Times are in microseconds (floats, as in the JSON).
"""
import gzip, json, os, re, sys, statistics


def load(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        return json.load(f)


def union(iv):
    out = []
    for s, e in sorted(iv):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def covered(u, s, e):
    return sum(max(0.0, min(e, b) - max(s, a)) for a, b in u if a < e and b > s)


def kind(name, args):
    k = (args.get('Collective name') or name).lower().replace('_', '')
    for w, n in (('allreduce', 'all_reduce'), ('allgather', 'all_gather'), ('reducescatter', 'reduce_scatter'),
                 ('alltoall', 'all_to_all'), ('send', 'send_recv'), ('recv', 'send_recv')):
        if w in k:
            return n
    return 'other'


DTYPE_BYTES = {'float': 4, 'float32': 4, 'int': 4, 'double': 8, 'float64': 8, 'long': 8, 'int64': 8,
               'half': 2, 'float16': 2, 'bfloat16': 2, 'byte': 1, 'char': 1, 'bool': 1}


def rank_of(path, j):
    d = j.get('distributedInfo') or {}
    if 'rank' in d:
        return d['rank']
    return int(re.findall(r'rank[_-]?(\d+)', path, re.I)[-1])


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
        gpu = [e for e in ev if e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset') and e.get('ph') == 'X' and e['dur'] > 0]
        busy = union([(e['ts'], e['ts'] + e['dur']) for e in gpu])
        other = union([(e['ts'], e['ts'] + e['dur']) for e in gpu if not (e['cat'] == 'kernel' and e['name'][:4].lower() in ('nccl', 'rccl'))])
        window = (min(e['ts'] for e in gpu), max(e['ts'] + e['dur'] for e in gpu))
        # record_param_comms args by External id, for kernels without args
        rpc = {e['args']['External id']: e['args'] for e in ev if e.get('name') == 'record_param_comms' and 'External id' in e.get('args', {})}
        launch = {e['args']['correlation']: e['ts'] for e in ev
                  if e.get('cat') in ('cuda_runtime', 'cuda_driver') and 'correlation' in e.get('args', {})}
        calls = []
        for e in comm:
            a = e['args'] if 'Collective name' in e['args'] else rpc.get(e['args'].get('External id'), {})
            calls.append(dict(start=e['ts'], end=e['ts'] + e['dur'], dur=e['dur'],
                              exposed=e['dur'] - covered(u, e['ts'], e['ts'] + e['dur']),
                              kind=kind(e['name'], a), nelems=a.get('In msg nelems'), out=a.get('Out msg nelems'),
                              group=a.get('Process Group Name'), launch=launch.get(e['args'].get('correlation'), e['ts']),
                              bytes=max(a.get('In msg nelems') or 0, a.get('Out msg nelems') or 0) * DTYPE_BYTES.get(str(a.get('dtype', '')).lower(), 0)))
        steps = sorted((e['ts'], e['dur']) for e in ev if e.get('cat') == 'user_annotation' and e['name'].startswith('ProfilerStep#'))
        r = rank_of(f, j)
        ranks[r] = dict(calls=calls, steps=steps, world=(j.get('distributedInfo') or {}).get('world_size'), compute=u,
                        busy=sum(b - a for a, b in busy), other=other, window=window[1] - window[0])
    rs = sorted(ranks)
    groups = sorted({c['group'] for r in rs for c in ranks[r]['calls'] if c['group'] is not None})
    matched = []  # one dict rank -> call per collective
    for g in groups:
        seqs = {r: [c for c in ranks[r]['calls'] if c['group'] == g] for r in rs}
        n = len(seqs[rs[0]])
        for r in rs:
            assert len(seqs[r]) == n, ('different numbers of collectives in group', g)
        matched += [{r: seqs[r][i] for r in rs} for i in range(n)]
    out = {'ranks': {}, 'collectives': len(matched)}
    per = {r: dict(comm_us=0.0, exposed_us=0.0, wait_us=0.0, transfer_us=0.0, last=0, caused_wait_us=0.0, late=0.0, ends=[],
                   peer_wait_us=0.0) for r in rs}
    waits = {r: [] for r in rs}  # wait intervals per rank
    bubble = {r: 0.0 for r in rs}
    step_late = {}  # step index -> {rank: late}
    a2a_caused = {r: {q: 0.0 for q in rs} for r in rs}  # [late rank][waiting rank]: exposed wait in all-to-alls
    gain = {r: {q: 0.0 for q in rs} for r in rs}  # gain[late rank][waiting rank]
    for cs in matched:
        k0 = cs[rs[0]]
        for r in rs:
            if k0['kind'] == 'all_to_all':  # uneven splits: each rank its own sizes
                assert cs[r]['kind'] == k0['kind'], r
            else:
                assert (cs[r]['kind'], cs[r]['nelems'], cs[r]['out']) == (k0['kind'], k0['nelems'], k0['out']), r
        latest = max(c['start'] for c in cs.values())
        earliest = min(c['start'] for c in cs.values())
        transfer = min(c['dur'] for c in cs.values())
        last = max(rs, key=lambda r: cs[r]['start'])
        for r in rs:
            p = per[r]
            c = cs[r]
            w = min(latest - c['start'], c['dur'])
            pw = w - covered(ranks[r]['compute'], c['start'], c['start'] + w) if w > 0 else 0.0
            p['peer_wait_us'] += pw
            if w > 0:
                waits[r].append((c['start'], c['start'] + w))
            if c['kind'] == 'send_recv':
                bubble[r] += pw
            if c['kind'] == 'all_to_all' and latest - earliest > 50 and r != last:
                a2a_caused[last][r] += pw
            if latest - earliest > 50 and r != last and k0['kind'] != 'send_recv':
                gain[last][r] += pw
            p['wait_us'] += latest - cs[r]['start']
            p['transfer_us'] += transfer
            p['ends'].append(cs[r]['end'] - cs[rs[0]]['end'])
        if latest - earliest > 50 and k0['kind'] != 'send_recv':
            # at most what another rank's kernel really waited (a send that
            # completes into the peer's buffers makes no one wait)
            waited = max(min(latest - cs[r]['start'], cs[r]['dur']) for r in rs if r != last)
            late_by = min(latest - statistics.median(cs[r]['start'] for r in rs if r != last), waited)
            per[last]['late'] += late_by
            at = cs[rs[0]]['launch']
            for si, (ts, dur) in enumerate(ranks[rs[0]]['steps']):
                if ts <= at < ts + dur:
                    step_late.setdefault(si, {}).setdefault(last, 0.0)
                    step_late[si][last] += late_by
        if latest - earliest > 50:
            per[last]['last'] += 1
            per[last]['caused_wait_us'] += sum(latest - c['start'] for c in cs.values())
    for r in rs:
        p = per[r]
        p['comm_us'] = sum(c['dur'] for c in ranks[r]['calls'])
        p['exposed_us'] = sum(c['exposed'] for c in ranks[r]['calls'])
        p['comm_kernels'] = len(ranks[r]['calls'])
        p['without_args'] = sum(1 for c in ranks[r]['calls'] if c['group'] is None)
        p['steps'] = len(ranks[r]['steps'])
        p['step_median_us'] = statistics.median(d for _, d in ranks[r]['steps']) if ranks[r]['steps'] else 0
        ends = p.pop('ends')
        m = statistics.median(ends)
        p['clock_offset_us'] = m
        p['clock_residual_us'] = statistics.median(abs(x - m) for x in ends)
        out['ranks'][str(r)] = p
    for r in rs:
        p, rk = per[r], ranks[r]
        spin = sum(b - a - covered(rk['other'], a, b) for a, b in union(waits[r]))
        p['gpu_spin_us'] = spin
        p['gpu_busy_us'] = rk['busy'] - spin
        p['gpu_busy_share'] = p['gpu_busy_us'] / rk['window'] if rk['window'] else 0
        p['gpu_spin_share'] = spin / rk['window'] if rk['window'] else 0
    nsteps = max(max(len(ranks[r]['steps']) for r in rs), 1)
    kinds = {c['kind'] for r in rs for c in ranks[r]['calls'] if c['group'] is not None}
    if 'send_recv' in kinds:
        out['pipeline'] = {str(r): dict(
            compute_per_step_us=sum(b - a for a, b in ranks[r]['compute']) / nsteps,
            p2p_kernel_per_step_us=sum(c['dur'] for c in ranks[r]['calls'] if c['kind'] == 'send_recv' and c['group'] is not None) / nsteps,
            p2p_bytes_per_step=sum(c['bytes'] for c in ranks[r]['calls'] if c['kind'] == 'send_recv' and c['group'] is not None) // nsteps,
            bubble_per_step_us=bubble[r] / nsteps) for r in rs}
    if 'all_to_all' in kinds:
        a2a = {r: [c for c in ranks[r]['calls'] if c['kind'] == 'all_to_all' and c['group'] is not None] for r in rs}
        b = {r: sum(c['bytes'] for c in a2a[r]) // nsteps for r in rs}
        mean = sum(b.values()) / len(rs)
        out['all_to_all'] = {str(r): dict(calls=len(a2a[r]), bytes_per_step=b[r], bytes_over_mean=b[r] / mean if mean else 0,
                                          kernel_per_step_us=sum(c['dur'] for c in a2a[r]) / nsteps,
                                          others_wait_per_step_us=statistics.median(a2a_caused[r][q] for q in rs if q != r) / nsteps)
                            for r in rs}
    for r in rs:
        per[r]['late_per_step_us'] = per[r].pop('late') / nsteps
    s = max(rs, key=lambda r: per[r]['late_per_step_us'])
    step = statistics.median(per[r]['step_median_us'] for r in rs)
    all_late = sum(per[r]['late_per_step_us'] for r in rs)
    is_straggler = (per[s]['late_per_step_us'] >= max(0.1 * step, 500) and
                    all_late > 0 and per[s]['late_per_step_us'] / all_late >= 0.5)
    out['straggler'] = s if is_straggler else None
    if is_straggler:
        out['gain_bound_per_step_us'] = statistics.median(gain[s][r] for r in rs if r != s) / nsteps
    out['step_median_us'] = step
    threshold = max(0.1 * step, 500)
    out['step_late'] = []
    for si in range(len(ranks[rs[0]]['steps'])):
        m = step_late.get(si, {})
        best = max(sorted(m), key=lambda r: m[r], default=None)
        out['step_late'].append([best, m[best]] if best is not None and m[best] >= threshold else None)
    return out


if __name__ == '__main__':
    json.dump({os.path.basename(d.rstrip('/')): run(d) for d in sys.argv[1:]}, sys.stdout, indent=1, sort_keys=True)
    print()
