package analyze

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/ingest"
)

// ledgerExpected is fixtures/recorded/expect/ledger.json: per trace, each
// ProfilerStep step's window length and ledger lines as ledger.py computes
// them from the JSON.
type ledgerExpected map[string]struct {
	Steps []struct {
		Name   string             `json:"name"`
		WallUs float64            `json:"wall_us"`
		Ledger map[string]float64 `json:"ledger"`
	} `json:"steps"`
}

// ledgerTol is how far a ledger figure may be from the script's: 0.5 µs or
// 0.1 % of the step's wall, whichever is larger (the script rounds to
// 0.001 µs; both work in integer nanoseconds).
func ledgerTol(wall float64) float64 { return max(0.5, 1e-3*wall) }

// TestLedgerMatchesPython: every step's wall and every ledger line of the
// recorded traces with ProfilerStep ranges (torch.compile traces aside)
// match fixtures/recorded/expect/ledger.py, an independent implementation
// of the ledger's definition over the trace JSON.
func TestLedgerMatchesPython(t *testing.T) {
	var want ledgerExpected
	readExpected(t, "ledger.json", &want)
	if len(want) < 15 {
		t.Fatalf("ledger.json holds %d traces: the test proves little", len(want))
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	compared, worst, worstAt := 0, 0.0, "every line equal"
	for _, name := range names {
		r := run(t, name)
		byNumber := map[int]*Step{}
		for i := range r.Steps {
			byNumber[r.Steps[i].Number] = &r.Steps[i]
		}
		if len(r.Steps) != len(want[name].Steps) {
			t.Errorf("%s: %d steps, script has %d", name, len(r.Steps), len(want[name].Steps))
		}
		for _, ws := range want[name].Steps {
			n, err := strconv.Atoi(strings.TrimPrefix(ws.Name, "ProfilerStep#"))
			if err != nil {
				t.Fatalf("%s: step name %q", name, ws.Name)
			}
			st := byNumber[n]
			if st == nil {
				t.Errorf("%s: no %s", name, ws.Name)
				continue
			}
			tol := ledgerTol(ws.WallUs)
			if d := math.Abs(st.WallUs - ws.WallUs); d > tol {
				t.Errorf("%s %s: wall %.3f µs, script %.3f", name, ws.Name, st.WallUs, ws.WallUs)
			}
			got := map[string]float64{}
			var sum float64
			for _, e := range st.Ledger {
				got[e.Line] = e.Us
				sum += e.Us
			}
			if math.Abs(sum-st.WallUs) > 1e-6*max(st.WallUs, 1) {
				t.Errorf("%s %s: ledger adds up to %.3f µs, wall %.3f", name, ws.Name, sum, st.WallUs)
			}
			for _, line := range LedgerLines() {
				w, ok := ws.Ledger[line]
				if !ok {
					t.Errorf("%s %s: script has no line %s", name, ws.Name, line)
					continue
				}
				d := math.Abs(got[line] - w)
				if d > worst {
					worst, worstAt = d, fmt.Sprintf("%s %s %s", name, ws.Name, line)
				}
				if d > tol {
					t.Errorf("%s %s: %s %.3f µs, script %.3f", name, ws.Name, line, got[line], w)
				}
			}
			compared++
		}
	}
	t.Logf("%d steps of %d traces compared; largest line difference %.4f µs (%s)", compared, len(names), worst, worstAt)
}

// ledgerTrace builds a trace from Kineto complete events (host events on
// pid 1, kernels on device 0) and returns each step's wall and ledger
// lines by step number, checking that the lines add up to the wall.
func ledgerTrace(t *testing.T, events ...string) map[int]map[string]float64 {
	t.Helper()
	doc := `{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","computeMajor":9,"computeMinor":0,"numSms":132}],"traceEvents":[` +
		strings.Join(events, ",\n") + `]}`
	tr, err := ingest.Read(strings.NewReader(doc), "ledger", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(tr, Config{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]map[string]float64{}
	for _, s := range r.Steps {
		m := map[string]float64{"wall": s.WallUs}
		var sum float64
		for _, e := range s.Ledger {
			m[e.Line] = e.Us
			sum += e.Us
		}
		if math.Abs(sum-s.WallUs) > 1e-9 {
			t.Errorf("step %d: ledger adds up to %.6f µs, wall %.6f", s.Number, sum, s.WallUs)
		}
		out[s.Number] = m
	}
	return out
}

// Event builders for ledgerTrace (times in µs).
func evStep(n int, ts, dur float64) string {
	return fmt.Sprintf(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%g,"dur":%g}`, n, ts, dur)
}

func evHost(cat, name string, ts, dur float64) string {
	return fmt.Sprintf(`{"ph":"X","cat":%q,"name":%q,"pid":1,"tid":1,"ts":%g,"dur":%g}`, cat, name, ts, dur)
}

func evAPI(name string, ts, dur float64, corr int) string {
	return fmt.Sprintf(`{"ph":"X","cat":"cuda_runtime","name":%q,"pid":1,"tid":1,"ts":%g,"dur":%g,"args":{"correlation":%d}}`, name, ts, dur, corr)
}

func evKernel(ts, dur float64, corr, stream int) string {
	return fmt.Sprintf(`{"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int)","pid":0,"tid":%d,"ts":%g,"dur":%g,"args":{"correlation":%d,"stream":%d,"device":0}}`,
		stream, ts, dur, corr, stream)
}

// checkLines compares the named lines of a step's ledger (every other
// line must be zero).
func checkLines(t *testing.T, what string, got map[string]float64, want map[string]float64) {
	t.Helper()
	for _, line := range append(LedgerLines(), "wall") {
		if math.Abs(got[line]-want[line]) > 1e-6 {
			t.Errorf("%s: %s %.3f µs, want %.3f (ledger %v)", what, line, got[line], want[line], got)
		}
	}
}

// TestLedgerPreviousStepsKernelIsOtherSteps: the previous step's kernel
// still running when this step's window opens is other_steps_gpu, not this
// step's compute (its launch, in the previous step, says whose it is), and
// the launch call hidden under it costs nothing.
func TestLedgerPreviousStepsKernelIsOtherSteps(t *testing.T) {
	got := ledgerTrace(t,
		evStep(1, 1000, 100), evStep(2, 1100, 100),
		// Step 1's kernel runs 1090-1180: its window slides to 1080-1180.
		evAPI("cudaLaunchKernel", 1005, 5, 1), evKernel(1090, 90, 1, 7),
		// Step 2 launches at 1110; its kernel queues behind step 1's.
		evHost("cpu_op", "aten::add", 1108, 10), evAPI("cudaLaunchKernel", 1110, 5, 2), evKernel(1185, 10, 2, 7),
	)
	checkLines(t, "step 1", got[1], map[string]float64{"wall": 100, LineIdle: 10, LineGPUCompute: 90})
	checkLines(t, "step 2", got[2], map[string]float64{"wall": 100, LineOtherSteps: 80, LineIdle: 10, LineGPUCompute: 10})
}

// TestLedgerOtherWorkSpanningSteps: GPU work launched outside every step
// that runs across two steps is other_steps_gpu in both: clipping it to
// the first step's window must not lose the part in the second's.
func TestLedgerOtherWorkSpanningSteps(t *testing.T) {
	got := ledgerTrace(t,
		evStep(1, 1000, 100), evStep(2, 1100, 100),
		// Launched before step 1 (outside every step), running 995-1150.
		evAPI("cudaLaunchKernel", 990, 4, 1), evKernel(995, 155, 1, 8),
		evAPI("cudaLaunchKernel", 1005, 5, 2), evKernel(1010, 10, 2, 7),
		evAPI("cudaLaunchKernel", 1110, 5, 3), evKernel(1160, 10, 3, 7),
	)
	checkLines(t, "step 1", got[1], map[string]float64{"wall": 100, LineOtherSteps: 90, LineGPUCompute: 10})
	checkLines(t, "step 2", got[2], map[string]float64{"wall": 100, LineOtherSteps: 50, LineIdle: 40, LineGPUCompute: 10})
}

// TestLedgerKernelWithoutLaunchIsQueuedBeforeProfile: in a trace that
// records launches, a kernel without one was queued before the profiler
// started: queued_before_profile, not the step's compute.
func TestLedgerKernelWithoutLaunchIsQueuedBeforeProfile(t *testing.T) {
	got := ledgerTrace(t,
		evStep(1, 1000, 100),
		evKernel(1000, 30, 99, 7), // correlation 99: no launch call in the trace
		evAPI("cudaLaunchKernel", 1040, 5, 1), evKernel(1050, 30, 1, 7),
	)
	checkLines(t, "step 1", got[1], map[string]float64{"wall": 100, LineBeforeProfile: 30, LineIdle: 35, LineLaunch: 5, LineGPUCompute: 30})
}

// TestLedgerSyncDuringIdleIsHostSync: a sync call is host_sync while the
// GPU is idle (over the op around it), and nothing while the GPU runs the
// step's kernel.
func TestLedgerSyncDuringIdleIsHostSync(t *testing.T) {
	got := ledgerTrace(t,
		evStep(1, 1000, 100),
		evHost("cpu_op", "aten::add", 1002, 8), evAPI("cudaLaunchKernel", 1005, 5, 1), evKernel(1010, 30, 1, 7),
		evHost("cpu_op", "aten::_local_scalar_dense", 1011, 39), evAPI("cudaStreamSynchronize", 1012, 33, 2),
	)
	checkLines(t, "step 1", got[1], map[string]float64{"wall": 100, LineIdle: 52, LineFramework: 3 + 5, LineLaunch: 5,
		LineGPUCompute: 30, LineHostSync: 5})
}

// TestLedgerEnclosingHostWorkIsNotFramework: Python functions, ops and
// ranges around the whole step (main(), the training loop, a function
// that starts or ends with the step) do not turn its idle time into
// framework_host; only host work inside it does.
func TestLedgerEnclosingHostWorkIsNotFramework(t *testing.T) {
	for _, enc := range []struct {
		what    string
		ts, dur float64
	}{
		{"strictly around", 500, 1500},
		{"same start", 1000, 200},
		{"same end", 900, 200},
		{"same interval", 1000, 100},
	} {
		for _, cat := range []string{"python_function", "cpu_op", "user_annotation"} {
			got := ledgerTrace(t,
				evStep(1, 1000, 100),
				evHost(cat, "train.py(10): main", enc.ts, enc.dur),
				evHost("python_function", "train.py(20): forward", 1020, 40),
			)
			checkLines(t, enc.what+" "+cat, got[1], map[string]float64{"wall": 100, LineFramework: 40, LineIdle: 60})
		}
	}
}

// TestLedgerLinesAddUpToTheWall: on random traces (kernels of every step
// queued late and overlapping across streams, kernels and copies without
// launches, syncs, host work overlapping and enclosing steps), every
// step's lines are non-negative and add up to its wall.
func TestLedgerLinesAddUpToTheWall(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	for trial := 0; trial < 20; trial++ {
		steps := ledgerTrace(t, randomLedgerTrace(rng)...) // checks the sum
		if len(steps) != 4 {
			t.Fatalf("trial %d: %d steps", trial, len(steps))
		}
		for n, m := range steps {
			for line, us := range m {
				if us < 0 {
					t.Errorf("trial %d step %d: %s %.3f µs", trial, n, line, us)
				}
			}
		}
	}
}

// randomLedgerTrace returns the events of a random 4-step trace for
// TestLedgerLinesAddUpToTheWall.
func randomLedgerTrace(rng *rand.Rand) []string {
	hostNames := []string{"train.py(10): main", "train.py(20): forward", "loader.py(5): next_batch", "<built-in method item>",
		"torch/profiler/profiler.py(700): step", "aten::add", "aten::pin_memory", "[pytorch|profiler|execution_trace|part]",
		"data_fetch", "Optimizer.step#SGD.step"}
	cats := []string{"python_function", "cpu_op", "user_annotation"}
	var ev []string
	add := func(format string, a ...any) { ev = append(ev, fmt.Sprintf(format, a...)) }
	for n := 0; n < 4; n++ {
		add(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%.3f,"dur":100}`, n+1, 1000+100*float64(n))
	}
	for i := 0; i < 40; i++ {
		ts, dur := 900+rng.Float64()*600, rng.Float64()*rng.Float64()*300
		corr := 100 + i
		if rng.IntN(4) > 0 {
			add(`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%.3f,"dur":%.3f,"args":{"correlation":%d}}`,
				ts, rng.Float64()*5, corr)
			ts += rng.Float64() * 150
		} else {
			corr += 1000 // no launch call: queued before profiling, or a copy placed by its start
		}
		cat := "kernel"
		if rng.IntN(5) == 0 {
			cat = "gpu_memcpy"
		}
		add(`{"ph":"X","cat":%q,"name":"k","pid":0,"tid":%d,"ts":%.3f,"dur":%.3f,"args":{"correlation":%d,"stream":%d,"device":0}}`,
			cat, 7+rng.IntN(2), ts, dur, corr, 7+rng.IntN(2))
	}
	for i := 0; i < 30; i++ {
		ts, dur := 800+rng.Float64()*800, rng.Float64()*rng.Float64()*500
		if rng.IntN(3) == 0 {
			add(`{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":%d,"ts":%.3f,"dur":%.3f,"args":{"correlation":%d}}`,
				1+rng.IntN(2), ts, dur, 5000+i)
			continue
		}
		add(`{"ph":"X","cat":%q,"name":%q,"pid":1,"tid":%d,"ts":%.3f,"dur":%.3f}`, cats[rng.IntN(len(cats))],
			hostNames[rng.IntN(len(hostNames))], 1+rng.IntN(2), ts, dur)
	}
	return ev
}
