package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// traceBuilder builds a small torch.profiler trace event by event (times in µs).
type traceBuilder struct {
	ev   []string
	corr int
}

func (s *traceBuilder) add(format string, a ...any) { s.ev = append(s.ev, fmt.Sprintf(format, a...)) }

// rng adds a record_function range on host thread tid.
func (s *traceBuilder) rng(name string, tid int, ts, dur float64) {
	s.add(`{"ph":"X","cat":"user_annotation","name":%q,"pid":1,"tid":%d,"ts":%.3f,"dur":%.3f}`, name, tid, ts, dur)
}

// op adds a cpu_op on thread 1.
func (s *traceBuilder) op(name string, ts, dur float64, args string) {
	if args == "" {
		args = "{}"
	}
	s.add(`{"ph":"X","cat":"cpu_op","name":%q,"pid":1,"tid":1,"ts":%.3f,"dur":%.3f,"args":%s}`, name, ts, dur, args)
}

// launch adds a launch call of 5 µs on thread tid at ts and the kernels it
// launched ({start, dur, stream} each; several for a graph launch).
func (s *traceBuilder) launch(tid int, ts float64, call, kernel string, ks ...[3]float64) {
	s.corr++
	s.add(`{"ph":"X","cat":"cuda_runtime","name":%q,"pid":1,"tid":%d,"ts":%.3f,"dur":5,"args":{"correlation":%d}}`, call, tid, ts, s.corr)
	for _, k := range ks {
		s.add(`{"ph":"X","cat":"kernel","name":%q,"pid":0,"tid":%d,"ts":%.3f,"dur":%.3f,"args":{"correlation":%d,"stream":%d,"device":0}}`,
			kernel, int(k[2]), k[0], k[1], s.corr, int(k[2]))
	}
}

func (s *traceBuilder) trace(t *testing.T) *trace.Trace {
	t.Helper()
	doc := `{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","computeMajor":9,"computeMinor":0,"numSms":132}],"traceEvents":[` +
		strings.Join(s.ev, ",\n") + `]}`
	tr, err := ingest.Read(strings.NewReader(doc), "synth", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// annotation returns the span and thread of the host range called name.
func annotation(t *testing.T, tr *trace.Trace, name string) (trace.Index, trace.Span) {
	t.Helper()
	for _, a := range tr.Annotations {
		if a.Name == name && !a.GPU {
			return a.Thread, a.Span
		}
	}
	t.Fatalf("no range %q", name)
	return 0, trace.Span{}
}

const gemmName = "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_cublas"

// TestOwnershipByLaunch: a range owns the work its launches put on the GPU,
// however long after it closes that work runs; a previous range's kernel
// running in its window is not its own and is its queue at entry; a graph
// launch owns every kernel of its correlation; another thread's launches
// in its window are not its own.
func TestOwnershipByLaunch(t *testing.T) {
	var s traceBuilder
	s.rng("A", 1, 1000, 100)
	s.launch(1, 1010, "cudaLaunchKernel", gemmName, [3]float64{1500, 2000, 7}) // runs 1500-3500, long after A
	s.launch(2, 1020, "cudaLaunchKernel", gemmName, [3]float64{1030, 10, 8})   // thread 2: not A's
	s.rng("B", 1, 2000, 100)
	s.launch(1, 2010, "cudaLaunchKernel", gemmName, [3]float64{3500, 100, 7}) // waits behind A's GEMM
	s.rng("G", 1, 4000, 100)
	s.launch(1, 4010, "cudaGraphLaunch", "triton_poi_fused_add_0", [3]float64{4200, 50, 7}, [3]float64{4220, 50, 9}, [3]float64{4300, 20, 7})
	tr := s.trace(t)
	own := newOwnership(tr, newHostTable(tr))
	busy := newBusy(tr)

	th, a := annotation(t, tr, "A")
	if o := own.Of(th, a); o.Activities != 1 || o.GPUTime != 2000_000 || o.Extent != (trace.Span{Start: 1500_000, End: 3500_000}) || o.QueueAtEntry != 0 ||
		o.Wall != 100_000 || o.LaunchAPI != 5_000 || o.Launches != 1 {
		t.Errorf("A owns %+v; want its 2 ms GEMM that runs after it closes (and not thread 2's kernel)", o)
	}
	if got := busy.busyIn(a.Start, a.End); got != 10_000 {
		t.Errorf("A's time window holds %v of GPU busy time, want thread 2's 10 µs kernel (and none of A's own GEMM): the test proves nothing", got)
	}
	th, b := annotation(t, tr, "B")
	o := own.Of(th, b)
	if o.Activities != 1 || o.GPUTime != 100_000 || o.Extent.Start != 3500_000 {
		t.Errorf("B owns %+v; want only its own 100 µs kernel", o)
	}
	if want := trace.Duration(3500_000 - 2000_000); o.QueueAtEntry != want {
		t.Errorf("B's queue at entry %v, want %v (A's GEMM still running)", o.QueueAtEntry, want)
	}
	if got := busy.busyIn(b.Start, b.End); got != 100_000 {
		t.Errorf("B's time window holds %v of GPU busy time (A's GEMM), want 100µs: the test proves nothing", got)
	}
	th, g := annotation(t, tr, "G")
	o = own.Of(th, g)
	if o.Activities != 3 || o.Kernels != 3 || o.GPUTime != 120_000 || o.GPUBusy != 120_000-30_000 || o.Extent != (trace.Span{Start: 4200_000, End: 4320_000}) {
		t.Errorf("graph launch range owns %+v; want its 3 kernels: 120 µs of GPU time, 90 µs busy (two overlap), 4200-4320", o)
	}
	if acts := own.Activities(th, g); len(acts) != 3 {
		t.Errorf("graph launch range's activities %v", acts)
	}
	if d, n, k := own.Totals(th, trace.Span{Start: 900_000, End: 5000_000}); n != 5 || k != 5 || d != (2000+100+120)*1000 {
		t.Errorf("thread 1 over the whole trace owns %v in %d activities (%d kernels), want 2.22 ms in 5", d, n, k)
	}
	r, err := Run(tr, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range r.Annotations {
		if want := map[string]float64{"A": 2000, "B": 100, "G": 120}[a.Name]; a.GPUUs != want || a.MedianGPUUs != want {
			t.Errorf("annotation %s: GPU %.1f µs, median %.1f µs; want %.1f (owned)", a.Name, a.GPUUs, a.MedianGPUUs, want)
		}
	}
}

// ownershipExpected is ownership.json: per trace, per range name.
type ownershipExpected map[string]struct {
	Annotations map[string]struct {
		Calls                    int       `json:"calls"`
		OwnedGPUUs               []float64 `json:"owned_gpu_us"`
		Owned                    []int     `json:"owned"`
		WallUs                   []float64 `json:"wall_us"`
		QueueAtEntryUs           []float64 `json:"queue_at_entry_us"`
		MedianOwnedGPUUs         float64   `json:"median_owned_gpu_us"`
		MedianRestOwnedGPUUs     float64   `json:"median_rest_owned_gpu_us"`
		MedianRestWallUs         float64   `json:"median_rest_wall_us"`
		MedianRestQueueAtEntryUs float64   `json:"median_rest_queue_at_entry_us"`
	} `json:"annotations"`
}

// TestOwnershipMatchesPython compares Ownership's figures for every range
// of the recorded A/B traces with ownership.py's, call by call.
func TestOwnershipMatchesPython(t *testing.T) {
	var want ownershipExpected
	readExpected(t, "ownership.json", &want)
	if len(want) < 2 {
		t.Fatalf("ownership.json holds %d traces", len(want))
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= 0.01 }
	for name, exp := range want {
		t.Run(name, func(t *testing.T) {
			tr := load(t, name)
			own := newOwnership(tr, newHostTable(tr))
			calls := map[string][]Owned{}
			for _, a := range slices.SortedFunc(slices.Values(tr.Annotations), func(a, b trace.Annotation) int { return cmp.Compare(a.Start, b.Start) }) {
				if !a.GPU && !strings.HasPrefix(a.Name, "ProfilerStep#") {
					calls[a.Name] = append(calls[a.Name], own.Of(a.Thread, a.Span))
				}
			}
			medians := map[string]float64{}
			for _, a := range run(t, name).Annotations {
				if a.Kind == AnnotationRange {
					medians[a.Name] = a.MedianGPUUs
				}
			}
			for rng, e := range exp.Annotations {
				got := calls[rng]
				if len(got) != e.Calls {
					t.Errorf("%s: %d calls, want %d", rng, len(got), e.Calls)
					continue
				}
				for i, o := range got {
					if !close(us(o.GPUTime), e.OwnedGPUUs[i]) || o.Activities != e.Owned[i] || !close(us(o.Wall), e.WallUs[i]) ||
						!close(us(o.QueueAtEntry), e.QueueAtEntryUs[i]) {
						t.Errorf("%s call %d: owned %.3f µs in %d, wall %.3f, queue %.3f; want %.3f in %d, %.3f, %.3f", rng, i,
							us(o.GPUTime), o.Activities, us(o.Wall), us(o.QueueAtEntry), e.OwnedGPUUs[i], e.Owned[i], e.WallUs[i], e.QueueAtEntryUs[i])
					}
				}
				if !close(medians[rng], e.MedianOwnedGPUUs) {
					t.Errorf("%s: annotations' median GPU %.3f µs, want %.3f", rng, medians[rng], e.MedianOwnedGPUUs)
				}
			}
		})
	}
}
