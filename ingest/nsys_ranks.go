package ingest

// Multi-process exports (MPI ranks profiled into one report, globalPid
// differing) read as one trace per process that ran GPU work, so that
// distributed.Load takes them as the ranks of a run.

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"

	"github.com/tracelens/tracelens/ingest/internal/sqlfile"
	"github.com/tracelens/tracelens/trace"
)

// ReadProcesses reads the trace at path as ReadFile does, except that an
// Nsight Systems export holding GPU work from several processes comes
// back as one trace per process, in rank order: each trace's
// Meta.Other["rank"] is its rank and ["rank_from"] says whence (an NVTX
// range naming it, "rank 3", when every process has one; else the order
// of the process ids), ["pid"] its process id. Anything else comes back
// as one trace.
func ReadProcesses(path string, opt Options) ([]*trace.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		t, err := ReadFile(path, opt)
		return []*trace.Trace{t}, err
	}
	ts, ok, err := readFileNsys(f, st.Size(), nsysOptions{workers: opt.Workers, split: true})
	if !ok {
		t, err := ReadFile(path, opt)
		if err != nil {
			return nil, err
		}
		return []*trace.Trace{t}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, t := range ts {
		t.Source = path
	}
	return ts, nil
}

// NsysProcesses returns how many processes own the CUDA streams of the
// Nsight Systems export at path (its TARGET_INFO_CUDA_STREAM table, a
// few rows: cheap to ask of a large file), or 0 if path is not a plain
// (not gzipped) export or does not say.
func NsysProcesses(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	db, err := sqlfile.Open(f, st.Size())
	if err != nil {
		return 0
	}
	t := db.Table("TARGET_INFO_CUDA_STREAM")
	if t == nil || t.Column("processId") < 0 {
		return 0
	}
	pi := t.Column("processId")
	pids := map[int64]bool{}
	err = db.Scan(t, func(r *sqlfile.Row) error {
		if v, ok := r.Int(pi); ok {
			pids[v] = true
		}
		return nil
	})
	if err != nil {
		return 0
	}
	return len(pids)
}

// splitProcesses makes nr.parts, one trace per process that ran GPU
// work, if there are several (else it reports false and the export reads
// as one trace).
func (nr *nsysReader) splitProcesses() bool {
	set := map[int32]bool{}
	for _, p := range nr.gpuPid {
		set[p] = true
	}
	if len(set) < 2 {
		return false
	}
	pids := slices.Sorted(maps.Keys(set))
	threadPid := make([]int32, len(nr.t.Threads))
	for gtid, i := range nr.threads {
		threadPid[i] = int32(gtid >> 24 & 0xFFFFFF)
	}
	for _, pid := range pids {
		nr.parts = append(nr.parts, nr.process(pid, threadPid))
	}
	numberRanks(nr.parts)
	return true
}

// process makes the trace of one process: its threads, API calls, NVTX
// ranges and GPU work, indexes renumbered, nested and given steps.
func (nr *nsysReader) process(pid int32, threadPid []int32) *trace.Trace {
	t := nr.t
	p := &trace.Trace{Meta: t.Meta, Warnings: slices.Clone(t.Warnings), Skipped: t.Skipped, Categories: t.Categories}
	p.Meta.Other = maps.Clone(t.Meta.Other)
	p.Meta.Other["pid"] = strconv.Itoa(int(pid))
	threads := make([]trace.Index, len(t.Threads))
	for i, th := range t.Threads {
		threads[i] = trace.None
		if threadPid[i] == pid {
			threads[i] = trace.Index(len(p.Threads))
			p.Threads = append(p.Threads, th)
		}
	}
	calls := make([]trace.Index, len(t.APICalls))
	for i, a := range t.APICalls {
		calls[i] = trace.None
		if th := threads[a.Thread]; th != trace.None {
			calls[i] = trace.Index(len(p.APICalls))
			a.Thread, a.FirstGPU = th, trace.None
			p.APICalls = append(p.APICalls, a)
		}
	}
	used := map[int]bool{}
	for i, g := range t.GPU {
		if nr.gpuPid[i] != pid {
			continue
		}
		if g.Launch != trace.None {
			g.Launch = calls[g.Launch]
		}
		if a := g.Launch; a != trace.None && p.APICalls[a].FirstGPU == trace.None {
			p.APICalls[a].FirstGPU = trace.Index(len(p.GPU))
		}
		used[int(g.Device)] = true
		p.GPU = append(p.GPU, g)
	}
	for _, a := range t.Annotations {
		if th := threads[a.Thread]; th != trace.None {
			a.Thread = th
			p.Annotations = append(p.Annotations, a)
		}
	}
	p.Meta.Devices = slices.DeleteFunc(slices.Clone(t.Meta.Devices), func(d trace.DeviceProperties) bool { return !used[d.ID] })
	p.Events = len(p.GPU) + len(p.APICalls) + len(p.Annotations)
	m := newMerger(1, 0, -1)
	m.t = p
	m.nest()
	m.steps()
	return p
}

// rankMark finds a rank number in an NVTX range's text ("rank 3",
// "MPI Rank: 3", "RANK=3", "OMPI rank 3").
var rankMark = regexp.MustCompile(`(?i)(?:^|[^a-z])rank\s*[:=#_ ]?\s*(\d+)\b`)

// numberRanks gives the processes their ranks: the numbers their NVTX
// ranges name, when every process names exactly one and they differ;
// else their order (by process id).
func numberRanks(ps []*trace.Trace) {
	ranks := make([]int, len(ps))
	seen := map[int]bool{}
	marked := true
	for i, p := range ps {
		ranks[i] = -1
		for _, a := range p.Annotations {
			if m := rankMark.FindStringSubmatch(a.Name); m != nil {
				n, err := strconv.Atoi(m[1])
				if err == nil && (ranks[i] < 0 || ranks[i] == n) {
					ranks[i] = n
					continue
				}
				ranks[i] = -2 // two different numbers: no mark
				break
			}
		}
		if ranks[i] < 0 || seen[ranks[i]] {
			marked = false
		}
		seen[ranks[i]] = true
	}
	for i, p := range ps {
		rank, from := i, "process id order"
		if marked {
			rank, from = ranks[i], "NVTX range"
		}
		p.Meta.Other["rank"] = strconv.Itoa(rank)
		p.Meta.Other["rank_from"] = from
	}
	slices.SortStableFunc(ps, func(a, b *trace.Trace) int {
		x, _ := strconv.Atoi(a.Meta.Other["rank"])
		y, _ := strconv.Atoi(b.Meta.Other["rank"])
		return x - y
	})
}
