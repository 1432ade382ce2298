package analyze

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

// manySteps is a trace of n steps, each with an op, a Python frame, a
// launch and its kernel, a sync, and a range enclosing the whole loop:
// enough windows for the ledger index to split them between workers.
func manySteps(n int) *trace.Trace {
	b := tt.New()
	b.Frame("train.py(10): main", 0, tt.Us(float64(n)*100+50))
	for i := range n {
		s := tt.Us(float64(i) * 100)
		b.Step(s, s+tt.Us(100))
		b.Frame(fmt.Sprintf("model.py(%d): forward", 20+i%3), s+tt.Us(2), s+tt.Us(60))
		b.Op("aten::mm", s+tt.Us(5), s+tt.Us(40))
		b.Launch("cudaLaunchKernel", s+tt.Us(10), s+tt.Us(15)).Kernel("gemm", s+tt.Us(16), s+tt.Us(16+float64(10+i%7)))
		b.API("cudaDeviceSynchronize", s+tt.Us(60), s+tt.Us(90))
	}
	return b.Build()
}

// TestSameResultOnAnyCores checks that the analysis, which runs facts,
// analyzers and per-step work side by side, gives the same Result, byte
// for byte as JSON, on one core and on several: on recorded traces of a
// handful of steps (the ledger index splits the intervals) and on a
// trace of 300 steps (at 2 cores it splits the windows).
func TestSameResultOnAnyCores(t *testing.T) {
	traces := map[string]*trace.Trace{"300 steps": manySteps(300)}
	for _, name := range []string{"eggroll_hooks.json.gz", "recorded/sleep_mlp.json.gz", "recorded/compile_autotune_mlp.json.gz"} {
		traces[name] = load(t, name)
	}
	for name, tr := range traces {
		sameOnCores(t, name, tr, []int{1, 2, 4}, "the Result", func(r *Result) any { return r })
	}
}

// atCores calls fn at each core count of procs in turn (GOMAXPROCS),
// and restores the count it found.
func atCores(procs []int, fn func(procs int)) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, p := range procs {
		runtime.GOMAXPROCS(p)
		fn(p)
	}
}

// sameOnCores analyzes tr at each core count of procs and fails when
// what pick takes of the Result (the whole of it, its findings) differs,
// as JSON, from the first count's; it returns the first count's Result.
func sameOnCores(t *testing.T, name string, tr *trace.Trace, procs []int, what string, pick func(*Result) any) *Result {
	t.Helper()
	var first *Result
	var want []byte
	atCores(procs, func(p int) {
		r, err := Run(tr, Config{})
		if err != nil {
			t.Fatalf("%s at %d cores: %v", name, p, err)
		}
		got, err := json.Marshal(pick(r))
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			first, want = r, got
		} else if string(got) != string(want) {
			t.Errorf("%s: %s at %d cores differs from one core's", name, what, p)
		}
	})
	return first
}
