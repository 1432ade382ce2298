#!/usr/bin/env python3
"""Expected cross-rank figures for the distributed package's tests,
computed straight from the rank traces' JSON with the standard library
(independent of tracelens). Usage:

    python3 expect.py RUN_DIR... > expected.json

(a short human summary per run goes to stderr).

Method, per run directory (one *.json[.gz] trace per rank):
- rank: distributedInfo.rank (else rankN in the file name).
- communication kernels: cat "kernel" events whose name starts with
  nccl/rccl (case-insensitive); compute kernels: every other kernel.
- exposed: per communication kernel, its duration minus the time covered
  by the union of compute kernel intervals (any stream) of that rank.
- launch of a kernel: the ts of the cuda_runtime or cuda_driver event with
  the kernel's args.correlation (NCCL launches with cuLaunchKernelEx, a
  cuda_driver event).
- collective arguments: on the kernel event, else on the record_param_comms
  cpu_op with the kernel's External id. Point-to-point kernels (below) take
  theirs from their send/recv ops instead. A process group is identified by
  (Process Group Name, its ranks); its ranks: the "Process Group Ranks" list
  when it parses, else Global rank start + Global rank stride x i for i <
  Group size. Kernels without arguments (launched before the profiler
  started) are counted in comm_us and without_args but not matched.
- point-to-point ops: cpu_op record_param_comms events whose "Collective
  name" is "send" or "recv". Peer: "Dst Rank" (send) or "Src Rank" (recv),
  a rank of the op's group, mapped to a global rank through the op's
  "Process Group Ranks" list when it parses, else Global rank start +
  Global rank stride x local. Bytes of an op (and of a collective kernel):
  max(In msg nelems, Out msg nelems) x dtype size (DTYPE_BYTES).
- SendRecv kernels: communication kernels whose name contains "SendRecv"
  and whose own arguments are absent or name send/recv (an all_to_allv
  kernel is a SendRecv kernel with its own all-to-all arguments: it stays a
  group collective). Each op belongs to the first SendRecv kernel of its
  rank whose launch ts >= the op's ts (kernels with no launch event get no
  ops; the script asserts every op gets one). Such a kernel's group,
  description and kind (send_recv) come from its ops, its bytes are the sum
  of its ops' bytes; it is a p2p kernel when it has >= 1 op with a known
  peer. SendRecv kernels with no op have no arguments (without_args).
- matching of group collectives (every kernel but the SendRecv ones): per
  process group, each member rank's kernels sorted by start are paired
  position by position (the script asserts the members have the same
  number per group and that kind and message size agree at every position;
  all-to-all sizes may differ).
- point-to-point pairing by peer: for each ordered pair of ranks (a, b),
  the n-th send op on a with peer b is paired with the n-th recv op on b
  with peer a (ops in ts order); the script asserts the counts agree and
  the paired ops' bytes agree. Each pair links the send op's kernel (on a)
  and the recv op's kernel (on b). A p2p collective is one connected
  component of kernels under these links (2 kernels in every run here,
  batched 1F1B kernels included: both ops of a batched kernel have the
  same peer). p2p kernels with no link: unmatched_p2p (pipeline rows).
- collectives: matched group collectives + p2p components; p2p_components:
  the number of p2p components (runs with p2p kernels only).
- per group collective: arrival = kernel start, wait(r) = latest arrival -
  own arrival (wait_us sums it), transfer = shortest duration across its
  ranks; the last rank is the one with the latest arrival when it is > 50
  us after the earliest (last, caused_wait_us = the sum of every member's
  wait).
- per p2p kernel k: wait(k) = max over the kernels directly linked to k of
  (their start - k's start), at least 0 (wait_us sums it, unclipped); its
  wait interval is [start, start + min(wait, dur)]. Per p2p component:
  transfer = shortest kernel duration in it (added once per kernel of it
  to that kernel's rank); when its latest start is > 50 us after its
  earliest, the rank of the kernel with the latest start is "last" and its
  caused_wait_us gets the sum of the component's kernels' waits.
- late per step of rank r (late_per_step_us): over the group collectives
  it arrived at last (by > 50 us) (never send/recv: a pipeline's wait for
  its neighbour is its bubble), late_by = its arrival minus the median of
  the other members' arrivals, at most the longest wait another member's
  kernel spent (min(wait, duration)); the sum of late_by, capped at L = the
  length of the union over those same collectives of every other member's
  wait interval [its start, its start + min(latest - its start, its
  duration)] (raw ts: one host clock), divided by the largest number of
  ProfilerSteps of a rank. Without the cap, collectives that overlap in
  time (FSDP all-gathers on one group beside tensor-parallel all-reduces
  on another) count one wait several times. late_uncapped_per_step_us:
  the same without the cap (for information).
- straggler: the rank with the largest (capped) late per step; it is one
  when that is >= 10% of the median (over ranks) of the median step time
  and >= 500 us, and its late time is >= 50% of all ranks' late time or
  its own wait_us is at most 10% of its (capped) late time over the run
  (it waits for no one: the others' lateness cascades from it).
- peer wait of rank r (peer_wait_us): the union of its wait intervals
  (per matched group collective and per p2p kernel, from its kernel's
  start for min(wait, duration)) less the time covered by its compute
  kernels. (Waits that overlap in time count once.)
- gain bound of the straggler s (gain_bound_per_step_us): over the group
  collectives s arrived at last (by > 50 us), each other rank's peer wait
  in them, summed per rank and divided by the number of steps as late per
  step; the median over all the other ranks of the run; and at most every
  other rank's host slack: the run's period (the largest median
  ProfilerStep duration of a rank) less the median over its steps of the
  step's duration less the union of its sync calls (SYNC_CALLS, cat
  cuda_runtime/cuda_driver) and of its launch calls (a name containing
  "Launch") longer than 200 us inside it (ranks without API events: no
  bound).
- clock offset of rank r: rank 0: 0. Then, pass after pass until none is
  added, each rank without an offset (ascending) that shares collectives
  (group collectives and p2p components, members in rank order) with
  ranks that have one takes one sample per such collective: its end minus
  the end of the lowest-ranked member that has an offset, plus that
  offset; the offset is the median of the samples, the residual their
  median absolute deviation (with every collective over all ranks this is
  the median over collectives of end(r) - end(rank 0), and its MAD).
  Ranks never reached: 0, 0.
- GPU busy without spinning (gpu_busy_us): the union of the rank's GPU
  activity (cat kernel, gpu_memcpy, gpu_memset; dur > 0) less its spin
  (gpu_spin_us): the union of its wait intervals (group collectives and
  p2p kernels) less the time other GPU activity (compute kernels, copies,
  sets) covers. Shares are of the rank's GPU window (first GPU activity's
  start to last one's end).
- step_late (per profiled step of the first rank, in order): per step, the
  late time of each rank as for late per step (late_by summed over the
  group collectives it reached last whose launch on the collective's
  lowest member rank - else its kernel start - falls in that rank's step
  of that index, capped at the union of the other members' wait intervals
  in those collectives); the rank whose time is largest and at least
  max(10% of the median step, 500 us), with that time; null when none.
- kinds: all_reduce, all_gather, reduce_scatter, all_to_all (any "alltoall"
  in the name: message sizes may differ between ranks, uneven splits),
  send_recv ("send"/"recv"), else other.
- pipeline (rows for the ranks with p2p kernels), per step (steps: the
  largest number of ProfilerSteps of a rank): compute_per_step_us = union
  of compute kernels; p2p_kernel_per_step_us = sum of its p2p kernels'
  durations; p2p_bytes_per_step = sum of the bytes of its p2p kernels' ops
  with a known peer, // steps; bubble_per_step_us = sum over its p2p
  kernels of the peer wait; p2p_kernels: their number; unmatched_p2p: those
  with no linked kernel.
- all_to_all, per rank per step: calls, bytes (as for collectives), kernel
  time; bytes_over_mean: the rank's bytes over the ranks' mean;
  others_wait_per_step_us: over the all-to-alls the rank reached last (by
  > 50 us), each other rank's exposed wait (as peer wait), summed per rank;
  the median over the other ranks.
- groups, per Process Group Description (e.g. default_pg, mesh_tp, mesh_dp;
  every instance of it together; only descriptions with kernels):
  collectives (matched group collectives + p2p components), kinds (sorted),
  comm_us (sum of the durations of every kernel with that description, all
  ranks, matched or not), exposed_us (the same for exposed), bytes: per
  group collective the largest of its members' bytes, per p2p component
  the largest of its kernels' one-way bytes (what a kernel sends, or what
  it receives, over the ops it carries: NCCL's convention, the larger of
  in and out); summed.
Times are in microseconds (floats, as in the JSON).
"""
import bisect, gzip, json, os, re, sys, statistics


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


# API calls that block the host until the GPU catches up
SYNC_CALLS = {'cudaDeviceSynchronize', 'cudaStreamSynchronize', 'cudaEventSynchronize', 'cuCtxSynchronize',
              'cuStreamSynchronize', 'cuEventSynchronize', 'cudaMemcpy', 'cudaMemcpy2D', 'cuMemcpyDtoH',
              'cuMemcpyDtoH_v2', 'cuMemcpyHtoD', 'cuMemcpyHtoD_v2', 'cuMemcpy'}

DTYPE_BYTES = {'float': 4, 'float32': 4, 'int': 4, 'double': 8, 'float64': 8, 'long': 8, 'int64': 8,
               'half': 2, 'float16': 2, 'bfloat16': 2, 'byte': 1, 'char': 1, 'bool': 1}


def nbytes(a):
    return max(a.get('In msg nelems') or 0, a.get('Out msg nelems') or 0) * DTYPE_BYTES.get(str(a.get('dtype', '')).lower(), 0)


def group_ranks(a, world_ranks):
    """The global ranks of the op's process group, in group order."""
    try:
        rl = json.loads(a.get('Process Group Ranks') or '')
        if isinstance(rl, list) and rl and all(isinstance(x, int) for x in rl):
            return rl
    except ValueError:
        pass
    if 'Global rank start' in a and a.get('Group size'):
        return [a['Global rank start'] + a.get('Global rank stride', 1) * i for i in range(a['Group size'])]
    return list(world_ranks)


def to_global(a, local):
    try:
        rl = json.loads(a.get('Process Group Ranks') or '')
        if isinstance(rl, list) and 0 <= local < len(rl):
            return rl[local]
    except ValueError:
        pass
    if 'Global rank start' in a:
        return a['Global rank start'] + a.get('Global rank stride', 1) * local
    return None


def rank_of(path, j):
    d = j.get('distributedInfo') or {}
    if 'rank' in d:
        return d['rank']
    return int(re.findall(r'rank[_-]?(\d+)', path, re.I)[-1])


def is_comm(e):
    return e['name'][:4].lower() in ('nccl', 'rccl')


def run(d):
    ranks = {}
    for f in sorted(os.listdir(d)):
        if not (f.endswith('.json') or f.endswith('.json.gz')):
            continue
        j = load(os.path.join(d, f))
        ev = j['traceEvents']
        kernels = [e for e in ev if e.get('cat') == 'kernel' and e.get('ph') == 'X']
        comm = sorted((e for e in kernels if is_comm(e)), key=lambda e: e['ts'])
        u = union([(e['ts'], e['ts'] + e['dur']) for e in kernels if not is_comm(e)])
        gpu = [e for e in ev if e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset') and e.get('ph') == 'X' and e['dur'] > 0]
        busy = union([(e['ts'], e['ts'] + e['dur']) for e in gpu])
        other = union([(e['ts'], e['ts'] + e['dur']) for e in gpu if not (e['cat'] == 'kernel' and is_comm(e))])
        window = (min(e['ts'] for e in gpu), max(e['ts'] + e['dur'] for e in gpu))
        # record_param_comms args by External id, for kernels without args
        rpc = {e['args']['External id']: e['args'] for e in ev if e.get('name') == 'record_param_comms' and 'External id' in e.get('args', {})}
        launch = {e['args']['correlation']: e['ts'] for e in ev
                  if e.get('cat') in ('cuda_runtime', 'cuda_driver') and 'correlation' in e.get('args', {})}
        r = rank_of(f, j)
        world = (j.get('distributedInfo') or {}).get('world_size')
        # point-to-point ops (send/recv record_param_comms), in ts order
        ops = []
        for e in sorted((e for e in ev if e.get('cat') == 'cpu_op' and e.get('name') == 'record_param_comms'
                         and e.get('args', {}).get('Collective name') in ('send', 'recv')), key=lambda e: e['ts']):
            a = e['args']
            local = a.get('Dst Rank') if a['Collective name'] == 'send' else a.get('Src Rank')
            peer = to_global(a, local) if isinstance(local, int) else None
            ops.append(dict(ts=e['ts'], dir=a['Collective name'], peer=peer, bytes=nbytes(a), args=a, kernel=None))
        calls = []
        for e in comm:
            own = e['args'] if 'Collective name' in e['args'] else rpc.get(e['args'].get('External id'), {})
            c = dict(start=e['ts'], end=e['ts'] + e['dur'], dur=e['dur'],
                     exposed=e['dur'] - covered(u, e['ts'], e['ts'] + e['dur']),
                     launch=launch.get(e['args'].get('correlation'), e['ts']),
                     has_launch=e['args'].get('correlation') in launch,
                     sendrecv='SendRecv' in e['name'] and (not own or kind(e['name'], own) == 'send_recv'),
                     own=own, ext=e['args'].get('External id'), ops=[], p2p=False, links=set())
            if c['sendrecv']:
                a = {}  # group/kind/bytes come from the ops (below)
            else:
                a = own
            c.update(kind=kind(e['name'], a), nelems=a.get('In msg nelems'), out=a.get('Out msg nelems'),
                     group=(a.get('Process Group Name'), tuple(group_ranks(a, range(world or 0)))) if a.get('Process Group Name') is not None else None,
                     desc=a.get('Process Group Description'), bytes=nbytes(a) if a else 0)
            calls.append(c)
        # each op belongs to the first SendRecv kernel launched at or after it
        cands = sorted((c for c in calls if c['sendrecv'] and c['has_launch']), key=lambda c: c['launch'])
        lts = [c['launch'] for c in cands]
        orphans = 0
        for o in ops:
            i = bisect.bisect_left(lts, o['ts'])
            if i == len(cands):
                orphans += 1
                continue
            o['kernel'] = cands[i]
            cands[i]['ops'].append(o)
        for c in cands:
            if not c['ops']:
                continue
            a = c['ops'][0]['args']
            c.update(kind='send_recv', group=(a.get('Process Group Name'), tuple(group_ranks(a, range(world or 0)))),
                     desc=a.get('Process Group Description'), bytes=sum(o['bytes'] for o in c['ops']),
                     nelems=None, out=None, p2p=any(o['peer'] is not None for o in c['ops']))
            assert len({(o['args'].get('Process Group Name')) for o in c['ops']}) == 1, 'ops of several groups in one kernel'
            if c['own'] and c['ext'] is not None:  # kernel args of its own (older traces): one of its ops
                assert any(o['args'].get('External id') == c['ext'] for o in c['ops']), 'kernel args disagree with ops'
        steps = sorted((e['ts'], e['dur']) for e in ev if e.get('cat') == 'user_annotation' and e['name'].startswith('ProfilerStep#'))
        api = [e for e in ev if e.get('cat') in ('cuda_runtime', 'cuda_driver') and e.get('ph') == 'X']
        # syncs, synchronous copies, and launches over 200 us (waiting for
        # room in the GPU's launch queue)
        blocked = union([(e['ts'], e['ts'] + e['dur']) for e in api if e['dur'] > 0 and
                         (e['name'] in SYNC_CALLS or ('Launch' in e['name'] and e['dur'] > 200))])
        # the host's own work per step: the step range less its sync calls
        host_own = [d - covered(blocked, ts, ts + d) for ts, d in steps] if api else None
        ranks[r] = dict(calls=calls, steps=steps, world=world, compute=u, ops=ops, orphans=orphans, host_own=host_own,
                        busy=sum(b - a for a, b in busy), other=other, window=window[1] - window[0])
    rs = sorted(ranks)
    for r in rs:
        for i, c in enumerate(ranks[r]['calls']):
            c['rank'], c['idx'] = r, i
    # ---- group collectives (not point-to-point): per process group instance, position by position
    groups = sorted({c['group'] for r in rs for c in ranks[r]['calls'] if c['group'] is not None and not c['sendrecv']},
                    key=lambda g: (g[0], g[1]))
    matched = []  # one dict rank -> call per collective, over the group's ranks
    for g in groups:
        members = [r for r in rs if r in g[1]] or rs
        seqs = {r: [c for c in ranks[r]['calls'] if c['group'] == g and not c['sendrecv']] for r in members}
        n = len(seqs[members[0]])
        for r in members:
            assert len(seqs[r]) == n, ('different numbers of collectives in group', g)
        matched += [{r: seqs[r][i] for r in members} for i in range(n)]
    # ---- point-to-point: pair the n-th send a->b with the n-th recv on b from a
    problems = []
    links = []  # (send kernel, recv kernel, bytes)
    for a in rs:
        for b in rs:
            if a == b:
                continue
            sends = [o for o in ranks[a]['ops'] if o['dir'] == 'send' and o['peer'] == b]
            recvs = [o for o in ranks[b]['ops'] if o['dir'] == 'recv' and o['peer'] == a]
            if len(sends) != len(recvs):
                problems.append('%d sends %d->%d, %d recvs' % (len(sends), a, b, len(recvs)))
            for s, v in zip(sends, recvs):
                if s['bytes'] != v['bytes']:
                    problems.append('bytes differ %d->%d: %d vs %d' % (a, b, s['bytes'], v['bytes']))
                if s['kernel'] is not None and v['kernel'] is not None and s['kernel']['p2p'] and v['kernel']['p2p']:
                    s['kernel']['links'].add((b, v['kernel']['idx']))
                    v['kernel']['links'].add((a, s['kernel']['idx']))
                    links.append((s['kernel'], v['kernel'], s['bytes']))
    for r in rs:
        if ranks[r]['orphans']:
            problems.append('rank %d: %d send/recv ops after the last SendRecv launch' % (r, ranks[r]['orphans']))
    assert not problems, problems
    kern = lambda node: ranks[node[0]]['calls'][node[1]]
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent.setdefault(parent[x], parent[x])
            x = parent[x]
        return x
    for s, v, _ in links:
        parent[find((s['rank'], s['idx']))] = find((v['rank'], v['idx']))
    comps = {}
    for node in sorted(parent):
        comps.setdefault(find(node), []).append(node)
    components = sorted((sorted(ns) for ns in comps.values()), key=lambda ns: min(kern(n)['start'] for n in ns))
    # a component's message size in NCCL's convention: the largest that
    # any of its kernels sends or receives (over the ops it carries)
    comp_bytes = {}
    for ns in components:
        one_way = []
        for n in ns:
            ops = [o for o in kern(n)['ops'] if o['peer'] is not None]
            one_way.append(max(sum(o['bytes'] for o in ops if o['dir'] == 'send'), sum(o['bytes'] for o in ops if o['dir'] != 'send')))
        comp_bytes[find(ns[0])] = max(one_way)
    p2p_kernels = {r: [c for c in ranks[r]['calls'] if c['p2p']] for r in rs}
    for r in rs:
        for c in p2p_kernels[r]:
            c['wait'] = max([kern(n)['start'] - c['start'] for n in c['links']] + [0.0])

    out = {'ranks': {}, 'collectives': len(matched) + len(components)}
    if components or any(p2p_kernels[r] for r in rs):
        out['p2p_components'] = len(components)
    per = {r: dict(comm_us=0.0, exposed_us=0.0, wait_us=0.0, transfer_us=0.0, last=0, caused_wait_us=0.0, late=0.0,
                   peer_wait_us=0.0) for r in rs}
    waits = {r: [] for r in rs}  # wait intervals per rank
    bubble = {r: 0.0 for r in rs}
    late_iv = {r: [] for r in rs}  # others' wait intervals at the collectives r reached last
    step_late = {}  # step index -> {rank: late}
    step_iv = {}  # step index -> {rank: intervals}
    a2a_caused = {r: {q: 0.0 for q in rs} for r in rs}  # [late rank][waiting rank]: exposed wait in all-to-alls
    gain = {r: {q: 0.0 for q in rs} for r in rs}  # gain[late rank][waiting rank]
    samples = {}  # (a, b), a < b -> [end(b) - end(a)]
    gdesc = {}  # process group description -> row
    for cs in matched:
        members = sorted(cs)
        k0 = cs[members[0]]
        for r in members:
            if k0['kind'] == 'all_to_all':  # uneven splits: each rank its own sizes
                assert cs[r]['kind'] == k0['kind'], r
            else:
                assert (cs[r]['kind'], cs[r]['nelems'], cs[r]['out']) == (k0['kind'], k0['nelems'], k0['out']), r
        latest = max(c['start'] for c in cs.values())
        earliest = min(c['start'] for c in cs.values())
        transfer = min(c['dur'] for c in cs.values())
        last = max(members, key=lambda r: cs[r]['start'])
        iv = []
        for r in members:
            p = per[r]
            c = cs[r]
            w = min(latest - c['start'], c['dur'])
            pw = w - covered(ranks[r]['compute'], c['start'], c['start'] + w) if w > 0 else 0.0
            p['peer_wait_us'] += pw
            if w > 0:
                waits[r].append((c['start'], c['start'] + w))
                if r != last:
                    iv.append((c['start'], c['start'] + w))
            if c['kind'] == 'all_to_all' and latest - earliest > 50 and r != last:
                a2a_caused[last][r] += pw
            if latest - earliest > 50 and r != last:
                gain[last][r] += pw
            p['wait_us'] += latest - cs[r]['start']
            p['transfer_us'] += transfer
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                samples.setdefault((a, b), []).append(cs[b]['end'] - cs[a]['end'])
        if latest - earliest > 50:
            # at most what another rank's kernel really waited (a send that
            # completes into the peer's buffers makes no one wait)
            waited = max(min(latest - cs[r]['start'], cs[r]['dur']) for r in members if r != last)
            late_by = min(latest - statistics.median(cs[r]['start'] for r in members if r != last), waited)
            per[last]['late'] += late_by
            late_iv[last] += iv
            at = k0['launch']
            for si, (ts, dur) in enumerate(ranks[members[0]]['steps']):
                if ts <= at < ts + dur:
                    step_late.setdefault(si, {}).setdefault(last, 0.0)
                    step_late[si][last] += late_by
                    step_iv.setdefault(si, {}).setdefault(last, []).extend(iv)
            per[last]['last'] += 1
            per[last]['caused_wait_us'] += sum(latest - c['start'] for c in cs.values())
        gr = gdesc.setdefault(k0['desc'], dict(collectives=0, kinds=set(), bytes=0))
        gr['collectives'] += 1
        gr['kinds'].add(k0['kind'])
        gr['bytes'] += max(c['bytes'] for c in cs.values())
    # point-to-point kernels: each waits for the latest start among the kernels linked to it
    for r in rs:
        for c in p2p_kernels[r]:
            w = min(c['wait'], c['dur'])
            pw = w - covered(ranks[r]['compute'], c['start'], c['start'] + w) if w > 0 else 0.0
            per[r]['peer_wait_us'] += pw
            bubble[r] += pw
            if w > 0:
                waits[r].append((c['start'], c['start'] + w))
            per[r]['wait_us'] += c['wait']
    for ns in components:
        ks = [kern(n) for n in ns]
        transfer = min(k['dur'] for k in ks)
        for k in ks:
            per[k['rank']]['transfer_us'] += transfer
        latest = max(k['start'] for k in ks)
        earliest = min(k['start'] for k in ks)
        if latest - earliest > 50:
            lk = max(ks, key=lambda k: (k['start'], -k['rank']))
            per[lk['rank']]['last'] += 1
            per[lk['rank']]['caused_wait_us'] += sum(k['wait'] for k in ks)
        descs = {k['desc'] for k in ks}
        assert len(descs) == 1, descs
        gr = gdesc.setdefault(ks[0]['desc'], dict(collectives=0, kinds=set(), bytes=0))
        gr['collectives'] += 1
        gr['kinds'].add('send_recv')
        gr['bytes'] += comp_bytes[find(ns[0])]
    p2p_only = not matched
    if p2p_only:  # one sample per pair of linked kernels (a batched pair of kernels is linked twice)
        for ka, kb in sorted({tuple(sorted(((s['rank'], s['idx']), (v['rank'], v['idx'])))) for s, v, _ in links}):
            a, b = kern(ka), kern(kb)
            samples.setdefault((a['rank'], b['rank']), []).append(b['end'] - a['end'])
    # clock offsets: rank 0 is 0; then, pass after pass until none is added,
    # each rank without an offset (ascending) that shares collectives with
    # ranks that have one: per collective (group collectives and p2p
    # components alike, members in rank order), its end minus the end of
    # the lowest-ranked member with an offset, plus that offset; the median
    # of those samples, and their median absolute deviation
    colls = [[(r, cs[r]['end']) for r in sorted(cs)] for cs in matched]
    colls += [[(kern(n)['rank'], kern(n)['end']) for n in ns] for ns in components]
    offs = {rs[0]: (0.0, 0.0)}
    progress = True
    while progress:
        progress = False
        for r in rs[1:]:
            if r in offs:
                continue
            deltas = []
            for members in colls:
                mine = [e for q, e in members if q == r]
                if not mine:
                    continue
                for q, e in members:
                    if q != r and q in offs:
                        deltas.append(mine[-1] - e + offs[q][0])
                        break
            if deltas:
                m = statistics.median(deltas)
                offs[r] = (m, statistics.median(abs(x - m) for x in deltas))
                progress = True
    for r in rs:
        p = per[r]
        p['comm_us'] = sum(c['dur'] for c in ranks[r]['calls'])
        p['exposed_us'] = sum(c['exposed'] for c in ranks[r]['calls'])
        p['comm_kernels'] = len(ranks[r]['calls'])
        p['without_args'] = sum(1 for c in ranks[r]['calls'] if c['group'] is None)
        p['steps'] = len(ranks[r]['steps'])
        p['step_median_us'] = statistics.median(d for _, d in ranks[r]['steps']) if ranks[r]['steps'] else 0
        p['clock_offset_us'], p['clock_residual_us'] = offs.get(r, (0.0, 0.0))
        out['ranks'][str(r)] = p
        for c in ranks[r]['calls']:
            if c['group'] is not None:
                gr = gdesc.setdefault(c['desc'], dict(collectives=0, kinds=set(), bytes=0))
                gr['comm_us'] = gr.get('comm_us', 0.0) + c['dur']
                gr['exposed_us'] = gr.get('exposed_us', 0.0) + c['exposed']
    out['groups'] = {str(k): dict(collectives=v['collectives'], kinds=sorted(v['kinds']), bytes=v['bytes'],
                                  comm_us=v.get('comm_us', 0.0), exposed_us=v.get('exposed_us', 0.0))
                     for k, v in gdesc.items()}
    for r in rs:
        p, rk = per[r], ranks[r]
        # peer wait: the union of the rank's wait intervals (a tensor-parallel
        # all-reduce and a data-parallel all-gather can wait at the same
        # time: the GPU waits once) less its compute
        p['peer_wait_us'] = sum(b - a - covered(rk['compute'], a, b) for a, b in union(waits[r]))
        spin = sum(b - a - covered(rk['other'], a, b) for a, b in union(waits[r]))
        p['gpu_spin_us'] = spin
        p['gpu_busy_us'] = rk['busy'] - spin
        p['gpu_busy_share'] = p['gpu_busy_us'] / rk['window'] if rk['window'] else 0
        p['gpu_spin_share'] = spin / rk['window'] if rk['window'] else 0
    nsteps = max(max(len(ranks[r]['steps']) for r in rs), 1)
    kinds = {c['kind'] for r in rs for c in ranks[r]['calls'] if c['group'] is not None}
    if any(p2p_kernels[r] for r in rs):
        out['pipeline'] = {str(r): dict(
            compute_per_step_us=sum(b - a for a, b in ranks[r]['compute']) / nsteps,
            p2p_kernel_per_step_us=sum(c['dur'] for c in p2p_kernels[r]) / nsteps,
            p2p_bytes_per_step=sum(o['bytes'] for c in p2p_kernels[r] for o in c['ops'] if o['peer'] is not None) // nsteps,
            bubble_per_step_us=bubble[r] / nsteps,
            p2p_kernels=len(p2p_kernels[r]),
            unmatched_p2p=sum(1 for c in p2p_kernels[r] if not c['links'])) for r in rs if p2p_kernels[r]}
    if 'all_to_all' in kinds:
        a2a = {r: [c for c in ranks[r]['calls'] if c['kind'] == 'all_to_all' and c['group'] is not None] for r in rs}
        b = {r: sum(c['bytes'] for c in a2a[r]) // nsteps for r in rs}
        mean = sum(b.values()) / len(rs)
        out['all_to_all'] = {str(r): dict(calls=len(a2a[r]), bytes_per_step=b[r], bytes_over_mean=b[r] / mean if mean else 0,
                                          kernel_per_step_us=sum(c['dur'] for c in a2a[r]) / nsteps,
                                          others_wait_per_step_us=statistics.median(a2a_caused[r][q] for q in rs if q != r) / nsteps)
                            for r in rs}
    for r in rs:
        # capped by the time the others actually waited (their wait intervals' union)
        late = per[r].pop('late')
        cap = sum(b - a for a, b in union(late_iv[r]))
        per[r]['late_uncapped_per_step_us'] = late / nsteps
        per[r]['late_per_step_us'] = min(late, cap) / nsteps
    s = max(rs, key=lambda r: per[r]['late_per_step_us'])
    step = statistics.median(per[r]['step_median_us'] for r in rs)
    all_late = sum(per[r]['late_per_step_us'] for r in rs)
    # a rank that is late yet waits itself at most a tenth of its late time
    # is the root of the others' lateness (it cascades through a 2-D mesh)
    root = per[s]['wait_us'] <= 0.1 * per[s]['late_per_step_us'] * nsteps
    is_straggler = (per[s]['late_per_step_us'] >= max(0.1 * step, 500) and
                    all_late > 0 and (per[s]['late_per_step_us'] / all_late >= 0.5 or root))
    out['straggler'] = s if is_straggler else None
    if is_straggler:
        bound = statistics.median(gain[s][r] for r in rs if r != s) / nsteps
        # the ranks move in lockstep: the step after the fix is at least
        # each other rank's own host work
        period = max(statistics.median(d for _, d in ranks[r]['steps']) for r in rs)
        slacks = [max(period - statistics.median(ranks[r]['host_own']), 0.0) for r in rs if r != s and ranks[r]['host_own']]
        out['gain_bound_per_step_us'] = min([bound] + slacks)
    out['step_median_us'] = step
    threshold = max(0.1 * step, 500)
    out['step_late'] = []
    for si in range(len(ranks[rs[0]]['steps'])):
        m = {r: min(v, sum(b - a for a, b in union(step_iv[si][r]))) for r, v in step_late.get(si, {}).items()}
        best = max(sorted(m), key=lambda r: m[r], default=None)
        out['step_late'].append([best, m[best]] if best is not None and m[best] >= threshold else None)
    return out


def summary(name, o):
    w = sys.stderr.write
    st = o['straggler']
    w('%s: %d collectives%s, step %.1f ms, straggler %s\n' % (
        name, o['collectives'], (' (%d p2p)' % o['p2p_components']) if 'p2p_components' in o else '', o['step_median_us'] / 1e3,
        ('rank %d, late %.2f ms/step' % (st, o['ranks'][str(st)]['late_per_step_us'] / 1e3)) if st is not None else 'none'))
    w('  late/step ms: %s\n' % ' '.join('%s:%.2f(%.2f)' % (r, p['late_per_step_us'] / 1e3, p['late_uncapped_per_step_us'] / 1e3)
                                         for r, p in sorted(o['ranks'].items())))
    for r, p in sorted(o.get('pipeline', {}).items()):
        w('  stage %s: compute %.2f ms, p2p %.2f ms, %d B, bubble %.2f ms per step; %d p2p kernels, %d unmatched\n' % (
            r, p['compute_per_step_us'] / 1e3, p['p2p_kernel_per_step_us'] / 1e3, p['p2p_bytes_per_step'],
            p['bubble_per_step_us'] / 1e3, p['p2p_kernels'], p['unmatched_p2p']))
    for r, p in sorted(o.get('all_to_all', {}).items()):
        w('  a2a rank %s: %d calls, %d B/step (%.2fx mean), %.2f ms kernel, others wait %.2f ms per step\n' % (
            r, p['calls'], p['bytes_per_step'], p['bytes_over_mean'], p['kernel_per_step_us'] / 1e3, p['others_wait_per_step_us'] / 1e3))
    for g, p in sorted(o['groups'].items()):
        w('  group %s: %d collectives %s, %d B, comm %.2f ms, exposed %.2f ms\n' % (
            g, p['collectives'], ','.join(p['kinds']), p['bytes'], p['comm_us'] / 1e3, p['exposed_us'] / 1e3))


if __name__ == '__main__':
    res = {os.path.basename(d.rstrip('/')): run(d) for d in sys.argv[1:]}
    for k in sorted(res):
        summary(k, res[k])
    json.dump(res, sys.stdout, indent=1, sort_keys=True)
    print()
