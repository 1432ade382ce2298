package ingest

// The mapping of each nsys table into the model.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

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

// apiName strips nsys's API version suffix ("cudaLaunchKernel_v7000",
// "cuGetProcAddress_v2") so names match what torch.profiler records.
func apiName(s string) string {
	i := strings.LastIndex(s, "_v")
	if i <= 0 || i+2 == len(s) {
		return s
	}
	for _, c := range s[i+2:] {
		if c < '0' || c > '9' {
			return s
		}
	}
	return s[:i]
}

var runtimeCols = []string{"start", "end", "globalTid", "nameId", "correlationId"}

// runtime reads CUDA runtime and driver API calls.
func (nr *nsysReader) runtime() error {
	c, ok := nr.open(tabRuntime, runtimeCols[:4], runtimeCols[4:], "API calls cannot be linked to the GPU work they launched")
	if !ok {
		return nil
	}
	// API names by StringIds id: the ids are small, so a slice, grown
	// as needed (a map lookup per row was a tenth of reading RUNTIME).
	var names []string
	var known []bool
	v := make([]int64, len(runtimeCols))
	return nr.scan(c, func(r *sqlfile.Row) error {
		if !nr.ints(c, r, v, 4) {
			return nil
		}
		if v[1] < v[0] {
			nr.m.skipAt(tabRuntime+" row that ends before it starts", r.Offset)
			return nil
		}
		var name string
		if id := v[3]; id >= 0 && id < 1<<20 {
			if id >= int64(len(names)) {
				names = append(names, make([]string, int(id)+1-len(names))...)
				known = append(known, make([]bool, int(id)+1-len(known))...)
			}
			if !known[id] {
				names[id], known[id] = apiName(nr.str(id)), true
			}
			name = names[id]
		} else {
			name = apiName(nr.str(id))
		}
		nr.t.APICalls = append(nr.t.APICalls, trace.APICall{
			Span:   trace.Span{Name: name, Start: trace.Time(v[0]), End: trace.Time(v[1])},
			Thread: nr.thread(v[2]), Correlation: v[4],
			Driver: strings.HasPrefix(name, "cu") && !strings.HasPrefix(name, "cuda"),
			Op:     trace.None, Frame: trace.None, FirstGPU: trace.None,
		})
		return nil
	})
}

var kernelCols = []string{"start", "end", "deviceId", "streamId", "demangledName",
	"correlationId", "globalPid", "shortName", "registersPerThread",
	"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
	"staticSharedMemory", "dynamicSharedMemory"}

// kernels reads CUPTI_ACTIVITY_KIND_KERNEL; names are StringIds ids
// (the demangled name, else the short one).
func (nr *nsysReader) kernels() error {
	c, ok := nr.open(tabKernel, kernelCols[:5], kernelCols[5:], "the kernels' launch configuration or launch link is unknown")
	if !ok {
		return nil
	}
	v := make([]int64, len(kernelCols))
	return nr.scan(c, func(r *sqlfile.Row) error {
		if !nr.ints(c, r, v, 5) {
			return nil
		}
		if v[1] < v[0] {
			nr.m.skipAt(tabKernel+" row that ends before it starts", r.Offset)
			return nil
		}
		name := nr.str(v[4])
		if name == "" {
			name = nr.str(v[7])
		}
		g := nr.gpu(trace.Kernel, name, v[:4], v[5], v[6])
		g.Registers = int32(v[8])
		g.Grid = [3]int32{int32(v[9]), int32(v[10]), int32(v[11])}
		g.Block = [3]int32{int32(v[12]), int32(v[13]), int32(v[14])}
		g.SharedMem = int32(v[15] + v[16])
		nr.t.GPU = append(nr.t.GPU, g)
		return nil
	})
}

// gpu makes a GPU activity from start, end, deviceId, streamId.
func (nr *nsysReader) gpu(kind trace.GPUKind, name string, v []int64, corr, gpid int64) trace.GPUActivity {
	nr.used[int32(v[2])] = true
	return trace.GPUActivity{
		Span: trace.Span{Name: name, Start: trace.Time(v[0]), End: trace.Time(v[1])},
		Kind: kind, Device: int32(v[2]), Stream: int32(v[3]),
		// The correlation id counts per process: the pid waits in
		// ExternalID (which nsys has no use for) until link, which keys
		// launches by both and clears it.
		Correlation: corr, ExternalID: gpid >> 24 & 0xFFFFFF, Launch: trace.None, Occupancy: -1,
	}
}

// copyKinds maps CUPTI's memcpy kinds (the values nsys stores in copyKind
// in every schema version) to the model's directions.
var copyKinds = map[int64]trace.CopyKind{
	1: trace.HtoD, 2: trace.DtoH, 3: trace.HtoD, 4: trace.DtoH, 5: trace.DtoD, 6: trace.DtoD, 7: trace.DtoD,
	8: trace.DtoD, 9: trace.HtoH, 10: trace.PtoP, 11: trace.HtoD, 12: trace.DtoH, 13: trace.DtoD,
}

// memKinds maps nsys's memory kinds (ENUM_CUDA_MEM_KIND: 0 Pageable,
// 1 Pinned, 2 Device, 3 Array, 4 Managed, 5 Device Static, 6 Managed
// Static, 7 Unknown; the same values in exports without ENUM tables).
var memKinds = map[int64]trace.MemKind{
	0: trace.Pageable, 1: trace.Pinned, 2: trace.Device, 3: trace.Array, 4: trace.Managed, 5: trace.Device, 6: trace.Managed,
}

var memcpyCols = []string{"start", "end", "deviceId", "streamId", "bytes", "copyKind",
	"correlationId", "globalPid", "srcKind", "dstKind"}

// memcpys reads CUPTI_ACTIVITY_KIND_MEMCPY, named as torch.profiler names
// copies ("Memcpy HtoD (Pageable -> Device)").
func (nr *nsysReader) memcpys() error {
	c, ok := nr.open(tabMemcpy, memcpyCols[:6], memcpyCols[6:], "copies cannot be linked to their API call or their memory kinds are unknown")
	if !ok {
		return nil
	}
	v := make([]int64, len(memcpyCols))
	names := map[[3]uint8]string{}
	return nr.scan(c, func(r *sqlfile.Row) error {
		if !nr.ints(c, r, v, 6) {
			return nil
		}
		if v[1] < v[0] {
			nr.m.skipAt(tabMemcpy+" row that ends before it starts", r.Offset)
			return nil
		}
		kind := copyKinds[v[5]]
		src, dst := trace.MemUnknown, trace.MemUnknown
		if c.order[8] >= 0 && r.Type(c.order[8]) != sqlfile.Null {
			src = memKinds[v[8]]
		}
		if c.order[9] >= 0 && r.Type(c.order[9]) != sqlfile.Null {
			dst = memKinds[v[9]]
		}
		key := [3]uint8{uint8(kind), uint8(src), uint8(dst)}
		name, ok := names[key]
		if !ok {
			name = fmt.Sprintf("Memcpy %s (%s -> %s)", kind, src, dst)
			names[key] = name
		}
		g := nr.gpu(trace.Memcpy, name, v[:4], v[6], v[7])
		g.Copy, g.Src, g.Dst, g.Bytes = kind, src, dst, v[4]
		nr.t.GPU = append(nr.t.GPU, g)
		return nil
	})
}

var memsetNames = func() (n [trace.Managed + 1]string) {
	for k := range n {
		n[k] = fmt.Sprintf("Memset (%s)", trace.MemKind(k))
	}
	return n
}()

var memsetCols = []string{"start", "end", "deviceId", "streamId", "bytes", "correlationId", "globalPid", "memKind"}

// memsets reads CUPTI_ACTIVITY_KIND_MEMSET.
func (nr *nsysReader) memsets() error {
	c, ok := nr.open(tabMemset, memsetCols[:5], memsetCols[5:], "memsets cannot be linked to their API call")
	if !ok {
		return nil
	}
	v := make([]int64, len(memsetCols))
	return nr.scan(c, func(r *sqlfile.Row) error {
		if !nr.ints(c, r, v, 5) {
			return nil
		}
		if v[1] < v[0] {
			nr.m.skipAt(tabMemset+" row that ends before it starts", r.Offset)
			return nil
		}
		dst := trace.MemUnknown
		if c.order[7] >= 0 && r.Type(c.order[7]) != sqlfile.Null {
			dst = memKinds[v[7]]
		}
		g := nr.gpu(trace.Memset, memsetNames[dst], v[:4], v[5], v[6])
		g.Dst, g.Bytes = dst, v[4]
		nr.t.GPU = append(nr.t.GPU, g)
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
	byPid := map[int64]*corrIndex{}
	var x *corrIndex
	lastPid := int64(-1)
	for i := range t.APICalls {
		a := &t.APICalls[i]
		if a.Correlation == 0 {
			continue
		}
		if pid := pids[a.Thread]; pid != lastPid {
			if x = byPid[pid]; x == nil {
				x = &corrIndex{}
				byPid[pid] = x
			}
			lastPid = pid
		}
		x.ids = append(x.ids, a.Correlation)
		x.calls = append(x.calls, trace.Index(i))
	}
	for _, x := range byPid {
		x.build()
	}
	lastPid, x = -1, nil
	for i := range t.GPU {
		g := &t.GPU[i]
		if g.ExternalID != lastPid {
			lastPid, x = g.ExternalID, byPid[g.ExternalID]
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
}

// corrIndex finds one process's API call by correlation id. CUPTI counts
// the ids up from 1, so they are dense and a slice over their range
// serves (a map of 750 k ids took a third of reading a 68 MB export);
// sparse ids fall back to a map. The last call with an id wins.
type corrIndex struct {
	ids   []int64
	calls []trace.Index
	base  int64
	dense []trace.Index
	byID  map[int64]trace.Index
}

func (x *corrIndex) build() {
	lo, hi := x.ids[0], x.ids[0]
	for _, id := range x.ids {
		lo, hi = min(lo, id), max(hi, id)
	}
	if span := uint64(hi - lo); span < uint64(4*len(x.ids)+1024) {
		x.base = lo
		x.dense = make([]trace.Index, span+1)
		for i := range x.dense {
			x.dense[i] = trace.None
		}
		for k, id := range x.ids {
			x.dense[id-lo] = x.calls[k]
		}
	} else {
		x.byID = make(map[int64]trace.Index, len(x.ids))
		for k, id := range x.ids {
			x.byID[id] = x.calls[k]
		}
	}
	x.ids, x.calls = nil, nil
}

func (x *corrIndex) get(id int64) (trace.Index, bool) {
	if x.dense != nil {
		if d := uint64(id - x.base); id >= x.base && d < uint64(len(x.dense)) && x.dense[d] != trace.None {
			return x.dense[d], true
		}
		return trace.None, false
	}
	a, ok := x.byID[id]
	return a, ok
}

// sortGPU puts GPU activity in the model's order (device, stream, start,
// longest first) by sorting indexes and moving each record once: the
// kernel, copy and memset tables come one after another, and a stable
// sort of the 150-byte records in place moved each one many times.
func (nr *nsysReader) sortGPU() {
	g := nr.t.GPU
	perm := make([]int32, len(g))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int {
		x, y := &g[a], &g[b]
		if c := cmp.Compare(x.Device, y.Device); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Stream, y.Stream); c != 0 {
			return c
		}
		return bySpan(x.Span, y.Span)
	})
	sorted := make([]trace.GPUActivity, len(g))
	for i, p := range perm {
		sorted[i] = g[p]
	}
	nr.t.GPU = sorted
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
