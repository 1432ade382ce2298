package ingest

import "github.com/tracelens/tracelens/trace"

// The kernels-only read (Options.KernelsOnly): `top` needs the kernels,
// their names and the device, while most of an export's rows are CUDA
// API calls, copies and NVTX ranges (on the benchmark export, 3.2 M
// kernels beside 12.9 M API calls, 3.2 M copies and 3.3 M NVTX events).
// Those tables are still opened (so their column warnings are the same as
// a full read's) and their rows counted from the leaf pages' headers (so
// Events and Categories are too), but no row of them is decoded.

// kernels reads CUPTI_ACTIVITY_KIND_KERNEL into the model's GPU slice and
// counts the copy and memset tables.
func (nr *nsysReader) kernels() error {
	e, err := nr.plan(nr.openKernels())
	if err != nil {
		return err
	}
	var copies, sets *eventTable
	if copies, err = nr.plan(nr.openMemcpys()); err != nil {
		return err
	}
	if sets, err = nr.plan(nr.openMemsets()); err != nil {
		return err
	}
	gpu := make([]trace.GPUActivity, e.rows)
	n := 0
	if e.c != nil {
		if n, _, err = scanEvents(nr, e, gpu, nil, kernelRow); err != nil {
			return err
		}
	}
	nr.t.GPU = gpu[:n]
	nr.counted(copies)
	nr.counted(sets)
	return nil
}

// countRuntime counts the CUDA API table's rows without reading them.
func (nr *nsysReader) countRuntime() error { return nr.count(nr.planRuntime()) }

// countNVTX counts the NVTX table's rows without reading them, under the
// same conditions as nvtx reads them.
func (nr *nsysReader) countNVTX() error { return nr.count(nr.planNVTX()) }

// count adds a planned table's rows to the event figures (counted).
func (nr *nsysReader) count(e *eventTable, err error) error {
	if err != nil {
		return err
	}
	nr.counted(e)
	return nil
}

// counted adds a table that was counted, not read, to the trace's event
// figures as mergeWorkers adds one that was read.
func (nr *nsysReader) counted(e *eventTable) {
	if e.c == nil || e.rows == 0 {
		return
	}
	nr.t.Events += e.rows
	nr.t.Categories = append(nr.t.Categories, trace.CategoryCount{Category: e.c.tab.Name, Count: e.rows})
}
