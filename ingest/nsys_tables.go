package ingest

// The mapping of each nsys table into the model.

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tracelens/tracelens/ingest/internal/sqlfile"
	"github.com/tracelens/tracelens/trace"
)

// metadata reads the export's own metadata (EXPORT_META_DATA through
// nsys 2023.2, META_DATA_EXPORT after; 2021-era exports have neither) and
// the session's start time.
func (nr *nsysReader) metadata() error {
	t := nr.t
	t.Meta.Other = map[string]string{}
	name := "META_DATA_EXPORT"
	if nr.db.Table(name) == nil {
		name = "EXPORT_META_DATA"
	}
	if nr.db.Table(name) == nil {
		t.Warnings = append(t.Warnings, "no export metadata table (META_DATA_EXPORT or EXPORT_META_DATA): an export from before nsys 2022, version unknown")
	} else if c, ok := nr.open(name, []string{"name", "value"}, nil, ""); ok {
		err := nr.scan(c, func(r *sqlfile.Row) error {
			switch k := string(r.Text(c.idx["name"])); k {
			case "EXPORT_PRODUCT_VERSION":
				t.Meta.Other["nsys_version"] = string(r.Text(c.idx["value"]))
			case "EXPORT_SCHEMA_VERSION":
				t.Meta.Other["nsys_schema_version"] = string(r.Text(c.idx["value"]))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if nr.db.Table("TARGET_INFO_SESSION_START_TIME") == nil {
		return nil
	}
	c, ok := nr.open("TARGET_INFO_SESSION_START_TIME", []string{"utcEpochNs"}, nil, "")
	if !ok {
		return nil
	}
	return nr.scan(c, func(r *sqlfile.Row) error {
		if v, ok := r.Int(c.idx["utcEpochNs"]); ok {
			t.Meta.BaseTimeNanoseconds = v
		}
		return nil
	})
}

// link joins GPU activity to the API call that launched it. nsys's
// correlation ids count per process, so the key is (pid, correlation);
// gpu parked a GPU activity's pid in ExternalID, cleared here.
func (nr *nsysReader) link() {
	t := nr.t
	pids := make([]int64, len(t.Threads))
	for gtid, i := range nr.threads {
		pids[i] = gtid >> 24 & 0xFFFFFF
	}
	byPid := nr.corrIndexes(pids)
	lastPid, x := int64(-1), (*corrIndex)(nil)
	gpuPids := map[int64]bool{}
	if nr.split {
		nr.gpuPid = make([]int32, len(t.GPU))
	}
	for i := range t.GPU {
		g := &t.GPU[i]
		if g.ExternalID != lastPid {
			lastPid, x = g.ExternalID, byPid[g.ExternalID]
			gpuPids[lastPid] = true
		}
		if nr.split {
			nr.gpuPid[i] = int32(g.ExternalID)
		}
		g.ExternalID = 0
		if g.Correlation == 0 || x == nil {
			continue
		}
		a, ok := x.get(g.Correlation)
		if !ok {
			continue
		}
		g.Launch = a
		if first := t.APICalls[a].FirstGPU; first == trace.None || t.GPU[first].Start > g.Start {
			t.APICalls[a].FirstGPU = trace.Index(i)
		}
	}
	if len(gpuPids) > 1 && !nr.split {
		t.Warnings = append(t.Warnings, fmt.Sprintf("GPU work from %d processes is analyzed as one trace here; read as a run (a file whose CUDA streams belong to several processes is one), each process is a rank", len(gpuPids)))
	}
}

// corrIndexes indexes the API calls by (pid, correlation id), in two
// passes over the calls (their ranges, then the index) so that nothing
// grows but the index itself.
func (nr *nsysReader) corrIndexes(pids []int64) map[int64]*corrIndex {
	calls := nr.t.APICalls
	byPid := map[int64]*corrIndex{}
	each := func(fn func(x *corrIndex, id int64, i int)) {
		var x *corrIndex
		lastPid := int64(-1)
		for i := range calls {
			a := &calls[i]
			if a.Correlation == 0 {
				continue
			}
			if pid := pids[a.Thread]; pid != lastPid || x == nil {
				if x = byPid[pid]; x == nil {
					x = &corrIndex{lo: a.Correlation, hi: a.Correlation}
					byPid[pid] = x
				}
				lastPid = pid
			}
			fn(x, a.Correlation, i)
		}
	}
	each(func(x *corrIndex, id int64, _ int) {
		x.lo, x.hi = min(x.lo, id), max(x.hi, id)
		x.n++
	})
	for _, x := range byPid {
		x.make()
	}
	each(func(x *corrIndex, id int64, i int) { x.set(id, trace.Index(i)) })
	return byPid
}

// corrIndex finds one process's API call by correlation id. CUPTI counts
// the ids up from 1, so they are dense and a slice over their range
// serves (a map of 750 k ids took a third of reading a 68 MB export);
// sparse ids fall back to a map. The last call with an id wins.
type corrIndex struct {
	lo, hi int64 // the ids' range
	n      int   // how many calls have one
	dense  []trace.Index
	byID   map[int64]trace.Index
}

func (x *corrIndex) make() {
	if span := uint64(x.hi - x.lo); span < uint64(4*x.n+1024) {
		x.dense = make([]trace.Index, span+1)
		for i := range x.dense {
			x.dense[i] = trace.None
		}
	} else {
		x.byID = make(map[int64]trace.Index, x.n)
	}
}

func (x *corrIndex) set(id int64, call trace.Index) {
	if x.dense != nil {
		x.dense[id-x.lo] = call
	} else {
		x.byID[id] = call
	}
}

func (x *corrIndex) get(id int64) (trace.Index, bool) {
	if x.dense != nil {
		if d := uint64(id - x.lo); id >= x.lo && d < uint64(len(x.dense)) && x.dense[d] != trace.None {
			return x.dense[d], true
		}
		return trace.None, false
	}
	a, ok := x.byID[id]
	return a, ok
}

// streamKey is a GPU record's device and stream.
type streamKey struct{ dev, stream int32 }

// streamPart is one range of the GPU records as streamOrder groups them:
// its streams in the order first seen, how many records of each it holds,
// and then where its next record of each goes.
type streamPart struct {
	lo, hi int
	keys   []streamKey
	counts []int
	at     []int
}

// group gives each record of the part its stream's number in the part
// (in group) and counts them.
func (p *streamPart) group(g []trace.GPUActivity, group []int32) {
	ids := map[streamKey]int32{}
	last, lastID := streamKey{-1, -1}, int32(-1)
	for i := p.lo; i < p.hi; i++ {
		k := streamKey{g[i].Device, g[i].Stream}
		if k != last || lastID < 0 {
			id, ok := ids[k]
			if !ok {
				id = int32(len(p.keys))
				ids[k] = id
				p.keys = append(p.keys, k)
				p.counts = append(p.counts, 0)
			}
			last, lastID = k, id
		}
		group[i] = lastID
		p.counts[lastID]++
	}
}

// streamOrder returns the indexes of the GPU records grouped by device
// and stream, in that order, each group in table order (a counting sort),
// and where each group starts in them, then their end. Ranges of the
// records are grouped and placed in parallel (a map lookup per record
// was a serial pass over the 128-byte records); only the streams are
// merged on one goroutine.
func (nr *nsysReader) streamOrder() (perm []int32, bounds []int) {
	g := nr.t.GPU
	parts := make([]streamPart, max(1, min(nr.workers, len(g)/(1<<16))))
	group := make([]int32, len(g))
	calls := make([]func(), len(parts))
	for i := range parts {
		p := &parts[i]
		p.lo, p.hi = len(g)*i/len(parts), len(g)*(i+1)/len(parts)
		calls[i] = func() { p.group(g, group) }
	}
	concurrently(calls...)
	var keys []streamKey
	local := map[streamKey][]int{} // the stream's number in each part, or -1
	for i := range parts {
		for id, k := range parts[i].keys {
			if local[k] == nil {
				keys = append(keys, k)
				local[k] = slices.Repeat([]int{-1}, len(parts))
			}
			local[k][i] = id
		}
		parts[i].at = make([]int, len(parts[i].keys))
	}
	slices.SortFunc(keys, func(a, b streamKey) int {
		if c := cmp.Compare(a.dev, b.dev); c != 0 {
			return c
		}
		return cmp.Compare(a.stream, b.stream)
	})
	at := 0
	for _, k := range keys {
		bounds = append(bounds, at)
		for i, id := range local[k] {
			if id >= 0 {
				parts[i].at[id] = at
				at += parts[i].counts[id]
			}
		}
	}
	bounds = append(bounds, at)
	perm = make([]int32, len(g))
	for i := range parts {
		p := &parts[i]
		calls[i] = func() {
			for j := p.lo; j < p.hi; j++ {
				perm[p.at[group[j]]] = int32(j)
				p.at[group[j]]++
			}
		}
	}
	concurrently(calls...)
	return perm, bounds
}

// sortGPU puts GPU activity in the model's order (device, stream, start,
// longest first) by sorting indexes and then moving each record along
// its permutation cycle, in place: the kernel, copy and memset tables come
// one after another, a stable sort of the 150-byte records moved each one
// many times, and a sorted copy would double the slice at its peak.
// Streams are sorted and cycles moved in parallel (permuteParallel).
func (nr *nsysReader) sortGPU() {
	g := nr.t.GPU
	perm, bounds := nr.streamOrder()
	// Each stream's records, in table order, are then sorted by time,
	// streams in parallel; most come sorted already.
	eachParallel(len(bounds)-1, nr.workers, func(s int) {
		seg := perm[bounds[s]:bounds[s+1]]
		byTime := func(a, b int32) int { return bySpan(g[a].Span, g[b].Span) }
		if !slices.IsSortedFunc(seg, byTime) {
			slices.SortStableFunc(seg, byTime)
		}
	})
	// g[i] must become the old g[perm[i]].
	permuteParallel(g, perm, nr.workers, 128)
}

var gpuCols = []string{"id", "name", "totalMemory", "smCount", "computeMajor", "computeMinor",
	"maxWarpsPerSm", "threadsPerWarp", "maxRegistersPerSm", "maxShmemPerSm", "maxThreadsPerBlock",
	"memoryBandwidth", "clockRate"}

// devices reads TARGET_INFO_GPU: the GPUs the GPU work ran on (it lists
// every GPU of the host, integrated ones too), or all of them when no
// work ran. Memory bandwidth and clock go to Meta.Other.
func (nr *nsysReader) devices() error {
	t := nr.t
	c, ok := nr.open("TARGET_INFO_GPU", gpuCols[:2], gpuCols[2:], "")
	if !ok {
		t.Warnings = append(t.Warnings, "no GPU description (TARGET_INFO_GPU): device names, SM counts and peaks are unknown")
		return nil
	}
	var all []trace.DeviceProperties
	v := make([]int64, len(gpuCols))
	err := nr.scan(c, func(r *sqlfile.Row) error {
		for k, n := range gpuCols {
			if k == 1 {
				continue
			}
			v[k], _ = r.Int(c.idx[n])
		}
		d := trace.DeviceProperties{ID: int(v[0]), Name: string(r.Text(c.idx["name"])), TotalGlobalMem: v[2],
			NumSMs: int(v[3]), ComputeMajor: int(v[4]), ComputeMinor: int(v[5]),
			MaxThreadsPerSM: int(v[6] * v[7]), RegsPerSM: int(v[8]), SharedMemPerSM: v[9], MaxThreadsPerBlock: int(v[10])}
		if len(nr.used) == 0 || nr.used[int32(d.ID)] {
			all = append(all, d)
			if v[11] > 0 {
				t.Meta.Other[fmt.Sprintf("gpu%d_memory_bandwidth_bytes_per_s", d.ID)] = fmt.Sprint(v[11])
			}
			if v[12] > 0 {
				t.Meta.Other[fmt.Sprintf("gpu%d_clock_hz", d.ID)] = fmt.Sprint(v[12])
			}
		}
		return nil
	})
	slices.SortStableFunc(all, func(a, b trace.DeviceProperties) int { return cmp.Compare(a.ID, b.ID) })
	t.Meta.Devices = all
	return err
}
