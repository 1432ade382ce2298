package ingest

// The event tables: CUDA API calls, kernels, copies and memsets, read in
// parallel parts by scanEvents.

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/ingest/internal/sqlfile"
	"github.com/tracelens/tracelens/trace"
)

var runtimeCols = []string{"start", "end", "globalTid", "nameId", "correlationId"}

// runtime reads CUDA runtime and driver API calls.
func (nr *nsysReader) runtime() error {
	e, err := nr.planRuntime()
	if err != nil || e.c == nil {
		return err
	}
	calls := make([]trace.APICall, e.rows)
	// A call's globalTid waits in ExternalID (which nsys has no use
	// for) until its thread is made, serially, in table order.
	n, _, err := scanEvents(nr, e, calls, nil, func(w *nsWorker, r *sqlfile.Row, out *trace.APICall) bool {
		v := w.v
		if !w.interval(r, 4, tabRuntime) {
			return false
		}
		name := w.apiName(v[3])
		*out = trace.APICall{
			Span:        trace.Span{Name: name, Start: trace.Time(v[0]), End: trace.Time(v[1])},
			Correlation: v[4], ExternalID: v[2],
			Driver: strings.HasPrefix(name, "cu") && !strings.HasPrefix(name, "cuda"),
			Op:     trace.None, Frame: trace.None, FirstGPU: trace.None,
		}
		return true
	})
	if err != nil {
		return err
	}
	calls = calls[:n]
	for i := range calls {
		calls[i].Thread = nr.thread(calls[i].ExternalID)
		calls[i].ExternalID = 0
	}
	nr.t.APICalls = calls
	return nil
}

// planRuntime binds and plans the CUDA API table (no columns, no rows:
// absent or unreadable, noted).
func (nr *nsysReader) planRuntime() (*eventTable, error) {
	c, _ := nr.open(tabRuntime, runtimeCols[:4], runtimeCols[4:], "API calls cannot be linked to the GPU work they launched")
	return nr.plan(c)
}

// apiName returns the API name StringIds id names, cached.
func (w *nsWorker) apiName(id int64) string {
	if id < 0 || id >= 1<<20 {
		return apiName(w.name(id, "API call"))
	}
	if id >= int64(len(w.apiNames)) {
		w.apiNames = append(w.apiNames, make([]string, int(id)+1-len(w.apiNames))...)
		w.apiKnown = append(w.apiKnown, make([]bool, int(id)+1-len(w.apiKnown))...)
	}
	if !w.apiKnown[id] {
		s, ok := w.nr.strs[id]
		if !ok {
			return w.name(id, "API call") // not cached: counted per row
		}
		w.apiNames[id], w.apiKnown[id] = apiName(s), true
	}
	return w.apiNames[id]
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

var kernelCols = []string{"start", "end", "deviceId", "streamId", "demangledName",
	"correlationId", "globalPid", "shortName", "registersPerThread",
	"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
	"staticSharedMemory", "dynamicSharedMemory"}

// gpuTables reads the GPU activity tables (kernels, copies, memsets)
// into one slice, made once at the size of the three together.
func (nr *nsysReader) gpuTables() error {
	var tabs [3]*eventTable
	opens := [3]func() *cols{nr.openKernels, nr.openMemcpys, nr.openMemsets}
	total := 0
	for i, open := range opens {
		var err error
		if tabs[i], err = nr.plan(open()); err != nil {
			return err
		}
		total += tabs[i].rows
	}
	gpu := make([]trace.GPUActivity, total)
	n := 0
	for i, each := range [3]func(w *nsWorker, r *sqlfile.Row, out *trace.GPUActivity) bool{kernelRow, memcpyRow, memsetRow} {
		if tabs[i].c == nil {
			continue
		}
		k, _, err := scanEvents(nr, tabs[i], gpu[n:], nil, each)
		if err != nil {
			return err
		}
		n += k
	}
	nr.t.GPU = gpu[:n]
	return nil
}

// openKernels binds CUPTI_ACTIVITY_KIND_KERNEL's columns (nil if absent).
func (nr *nsysReader) openKernels() *cols {
	c, _ := nr.open(tabKernel, kernelCols[:5], kernelCols[5:], "the kernels' launch configuration or launch link is unknown")
	return c
}

// kernelRow reads a kernel; names are StringIds ids (the demangled name,
// else the short one).
func kernelRow(w *nsWorker, r *sqlfile.Row, out *trace.GPUActivity) bool {
	v := w.v
	if !w.interval(r, 5, tabKernel) {
		return false
	}
	name := w.nr.str(v[4])
	if name == "" && w.c.order[7] >= 0 {
		name = w.nr.str(v[7])
	}
	if name == "" {
		name = w.name(v[4], "kernel")
	}
	*out = w.gpu(trace.Kernel, name, v[5], v[6])
	out.Registers = int32(v[8])
	out.Grid = [3]int32{int32(v[9]), int32(v[10]), int32(v[11])}
	out.Block = [3]int32{int32(v[12]), int32(v[13]), int32(v[14])}
	out.SharedMem = int32(v[15] + v[16])
	return true
}

// interval reads a row's first n integer columns (see ints) and reports
// whether they hold a usable start and end; a row that ends before it
// starts is skipped, counted under its table.
func (w *nsWorker) interval(r *sqlfile.Row, n int, table string) bool {
	if !w.ints(r, n) {
		return false
	}
	if w.v[1] < w.v[0] {
		w.skip(table+" row that ends before it starts", r.Offset)
		return false
	}
	return true
}

// gpu makes a GPU activity from the row's start, end, deviceId and
// streamId (w.v[:4]).
func (w *nsWorker) gpu(kind trace.GPUKind, name string, corr, gpid int64) trace.GPUActivity {
	v := w.v
	w.used[int32(v[2])] = true
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

// memKind reads the memory kind in column k of w's columns (unknown when
// absent or NULL).
func (w *nsWorker) memKind(r *sqlfile.Row, k int) trace.MemKind {
	if i := w.c.order[k]; i >= 0 && r.Type(i) != sqlfile.Null {
		return memKinds[w.v[k]]
	}
	return trace.MemUnknown
}

var memcpyCols = []string{"start", "end", "deviceId", "streamId", "bytes", "copyKind",
	"correlationId", "globalPid", "srcKind", "dstKind"}

// openMemcpys binds CUPTI_ACTIVITY_KIND_MEMCPY's columns (nil if absent).
func (nr *nsysReader) openMemcpys() *cols {
	c, _ := nr.open(tabMemcpy, memcpyCols[:6], memcpyCols[6:], "copies cannot be linked to their API call or their memory kinds are unknown")
	return c
}

// memcpyRow reads a copy, named as torch.profiler names copies ("Memcpy
// HtoD (Pageable -> Device)").
func memcpyRow(w *nsWorker, r *sqlfile.Row, out *trace.GPUActivity) bool {
	v := w.v
	if !w.interval(r, 6, tabMemcpy) {
		return false
	}
	kind, src, dst := copyKinds[v[5]], w.memKind(r, 8), w.memKind(r, 9)
	key := [3]uint8{uint8(kind), uint8(src), uint8(dst)}
	name, ok := w.copyNames[key]
	if !ok {
		name = fmt.Sprintf("Memcpy %s (%s -> %s)", kind, src, dst)
		w.copyNames[key] = name
	}
	*out = w.gpu(trace.Memcpy, name, v[6], v[7])
	out.Copy, out.Src, out.Dst, out.Bytes = kind, src, dst, v[4]
	return true
}

var memsetNames = func() (n [trace.Managed + 1]string) {
	for k := range n {
		n[k] = fmt.Sprintf("Memset (%s)", trace.MemKind(k))
	}
	return n
}()

var memsetCols = []string{"start", "end", "deviceId", "streamId", "bytes", "correlationId", "globalPid", "memKind"}

// openMemsets binds CUPTI_ACTIVITY_KIND_MEMSET's columns (nil if absent).
func (nr *nsysReader) openMemsets() *cols {
	c, _ := nr.open(tabMemset, memsetCols[:5], memsetCols[5:], "memsets cannot be linked to their API call")
	return c
}

// memsetRow reads a memset.
func memsetRow(w *nsWorker, r *sqlfile.Row, out *trace.GPUActivity) bool {
	v := w.v
	if !w.interval(r, 5, tabMemset) {
		return false
	}
	dst := w.memKind(r, 7)
	*out = w.gpu(trace.Memset, memsetNames[dst], v[5], v[6])
	out.Dst, out.Bytes = dst, v[4]
	return true
}
