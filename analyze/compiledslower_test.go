package analyze

import (
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
	tt "github.com/tracelens/tracelens/trace/tracetest"
)

const elementwiseName = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"

// abTrace builds an A/B trace of one function: 4 eager calls in
// record_function("eager"), each a mul → add → mul chain of three 12 µs
// elementwise kernels in 90 µs of host time (the first, a cold start, in
// 2.9 ms: so the eager calls are the steps), then 4 compiled calls in
// record_function("compiled") of wallUs, each a Torch-Compiled Region
// launching one Triton kernel of kernelUs. queued puts a 400 µs GEMM,
// launched outside every range, on the GPU just before each compiled call.
func abTrace(t *testing.T, kernelUs, wallUs float64, queued bool) *trace.Trace {
	var s traceBuilder
	for i := range 4 {
		// Back to back after a long first call, as a benchmark loop runs
		// them: each eager call is a step of 100 µs.
		base := 1000.0
		if i > 0 {
			base = 4000 + float64(i-1)*100
		}
		s.rng("eager", 1, base, map[bool]float64{true: 2900, false: 90}[i == 0])
		for j, op := range []string{"aten::mul", "aten::add", "aten::mul"} {
			at := base + 2 + float64(j)*15
			s.op(op, at, 10, `{"Input Dims":[[1048576],[1048576]],"Input type":["float","float"]}`)
			s.launch(1, at+1, "cudaLaunchKernel", elementwiseName, [3]float64{at + 6, 12, 7})
		}
	}
	for i := range 4 {
		base := 13000 + float64(i)*1000
		start := base + 10
		if queued {
			s.launch(1, base-20, "cudaLaunchKernel", gemmName, [3]float64{base - 10, 410, 7})
			start = base + 401
		}
		s.rng("compiled", 1, base, wallUs)
		s.op("Torch-Compiled Region: 0/0", base+1, wallUs-2, "")
		s.launch(1, base+5, "cuLaunchKernel", "triton_poi_fused_mul_add_0", [3]float64{start, kernelUs, 7})
	}
	return s.trace(t)
}

// TestCompiledSlowerSaysWhere: compiled-slower compares the GPU time each
// call owns, then its host time, and says which differs: compiled kernels
// that take longer are "slower on the GPU" (and fusion-candidate then
// does not suggest torch.compile for the eager chain); faster kernels in a
// longer call are host overhead with a host-side fix, at most medium; and
// host overhead the GPU hides behind queued work is no finding at all.
func TestCompiledSlowerSaysWhere(t *testing.T) {
	runAB := func(kernelUs, wallUs float64, queued bool) (*Finding, *Finding) {
		r, err := Run(abTrace(t, kernelUs, wallUs, queued), Config{Enable: []string{"compiled-slower", "fusion-candidate"}})
		if err != nil {
			t.Fatal(err)
		}
		return findingOf(r, "compiled-slower"), findingOf(r, "fusion-candidate")
	}

	cs, fc := runAB(60, 90, false)
	if cs == nil || !strings.Contains(cs.Title, "1.7× slower on the GPU") || cs.SavingFrom != FromKernelTime {
		t.Fatalf("60 µs compiled kernel vs 36 µs of eager kernels: %+v", cs)
	}
	if c, e := measureUs(t, *cs, "compiled owned GPU time per call (steady median)"), measureUs(t, *cs, "eager owned GPU time per call (steady median)"); c != 60 || e != 36 {
		t.Errorf("owned GPU per call: compiled %.1f, eager %.1f; want 60, 36", c, e)
	}
	if fc == nil {
		t.Fatal("no fusion-candidate for the eager mul → add → mul chain: the test proves nothing")
	}
	if strings.Contains(fc.Fix, "wrap that function in torch.compile") || !strings.Contains(fc.Fix, "not torch.compile") || !strings.Contains(fc.Fix, "compiled-slower") {
		t.Errorf("fusion-candidate suggests compiling what compiled-slower found slower on the GPU: %s", fc.Fix)
	}

	cs, fc = runAB(10, 150, false)
	if cs == nil || strings.Contains(cs.Title, "slower on the GPU") || !strings.Contains(cs.Title, "host +60.0µs a call") {
		t.Fatalf("10 µs compiled kernel in a 150 µs call vs eager's 36 µs in 90 µs: %+v", cs)
	}
	if cs.Severity == High || !strings.Contains(cs.Fix, "reduce-overhead") || strings.Contains(cs.Fix, "keep this function eager") {
		t.Errorf("host-overhead finding: severity %s, fix %q", cs.Severity, cs.Fix)
	}
	if fc == nil || !strings.Contains(fc.Fix, "reduce-overhead") || !strings.Contains(fc.Fix, "compiled-slower") {
		t.Errorf("fusion-candidate's fix ignores the measured compiled variant: %+v", fc)
	}

	if cs, _ = runAB(10, 150, true); cs != nil {
		t.Errorf("compiled calls' extra host time runs while the GPU still has 400 µs queued: no finding, got %q", cs.Title)
	}
	if cs, _ = runAB(36, 90, false); cs != nil {
		t.Errorf("same GPU and host time: got %q", cs.Title)
	}
}

// abPairs names the compiled and eager ranges of the recorded A/B traces.
var abPairs = map[string][2]string{
	"recorded/compiled_slower_gemm.json.gz":          {"compiled", "eager"},
	"recorded/compiled_slower_pointwise.json.gz":     {"compiled", "eager"},
	"recorded/issue22/ab_compiled_gemm.json.gz":      {"compiled_mlp", "eager_mlp"},
	"recorded/issue22/ab_compiled_pointwise.json.gz": {"compiled_pointwise", "eager_pointwise"},
}

// TestCompiledSlowerVerdictFollowsOwnedTime: on the recorded A/B traces,
// compiled-slower reports "slower on the GPU" exactly when ownership.py's
// median owned GPU time per steady call is larger compiled by the
// thresholds, and its figures are that script's.
func TestCompiledSlowerVerdictFollowsOwnedTime(t *testing.T) {
	var want ownershipExpected
	readExpected(t, "ownership.json", &want)
	for name, pair := range abPairs {
		exp, ok := want[name]
		if !ok {
			t.Errorf("ownership.json has no %s (run fixtures/recorded/expect/ownership.py)", name)
			continue
		}
		c, e := exp.Annotations[pair[0]], exp.Annotations[pair[1]]
		gpuSlower := costsMore(c.MedianRestOwnedGPUUs, e.MedianRestOwnedGPUUs)
		f := findingOf(run(t, name), "compiled-slower")
		switch {
		case gpuSlower && (f == nil || !strings.Contains(f.Title, "slower on the GPU")):
			t.Errorf("%s: owned GPU %.2f vs %.2f µs a call is slower compiled; finding %v", name, c.MedianRestOwnedGPUUs, e.MedianRestOwnedGPUUs, f)
		case !gpuSlower && f != nil && strings.Contains(f.Title, "slower on the GPU"):
			t.Errorf("%s: owned GPU %.2f vs %.2f µs a call is not slower compiled; finding %q", name, c.MedianRestOwnedGPUUs, e.MedianRestOwnedGPUUs, f.Title)
		}
		// ab_compiled_gemm's compiled calls take longer on the host (366 vs
		// 158 µs) while the GPU still runs the GEMMs queued before them
		// (632 µs at entry): nothing the step shows.
		if name == "recorded/issue22/ab_compiled_gemm.json.gz" && f != nil {
			t.Errorf("%s: extra host time hidden behind queued GPU work: %q", name, f.Title)
		}
		if f == nil {
			continue
		}
		for _, m := range []struct {
			name string
			want float64
		}{{"compiled owned GPU time per call (steady median)", c.MedianRestOwnedGPUUs}, {"eager owned GPU time per call (steady median)", e.MedianRestOwnedGPUUs},
			{"compiled host time per call (steady median)", c.MedianRestWallUs}, {"eager host time per call (steady median)", e.MedianRestWallUs},
			{"compiled queue at entry (steady median)", c.MedianRestQueueAtEntryUs}} {
			if got := measureUs(t, *f, m.name); !near(got, m.want) {
				t.Errorf("%s: %s %.3f µs, ownership.py %.3f", name, m.name, got, m.want)
			}
		}
	}
}

// compiledTrace is 3 steps of 2000µs, each calling eager_fn (a 200µs
// kernel) at its start and compiled_fn (a Torch-Compiled Region running a
// compiled µs kernel) 1000µs in, both 500µs ranges whose host waits for
// their kernel.
func compiledTrace(compiled float64) *trace.Trace {
	b := tt.New()
	for s := range 3 {
		at := tt.Us(2000 * float64(s))
		b.Step(at, at+tt.Us(2000))
		b.Range("eager_fn", at, at+tt.Us(500))
		gpuBound(b, at, kernel{elementwiseName, 200})
		c := at + tt.Us(1000)
		b.Range("compiled_fn", c, c+tt.Us(500))
		b.Op("Torch-Compiled Region: 0/0", c, c+tt.Us(400))
		gpuBound(b, c, kernel{"triton_poi_fused_add_0", compiled})
	}
	return b.Build()
}

func TestCompiledSlowerBuilt(t *testing.T) {
	// Steady calls (the first left out): 300µs of owned GPU time against
	// eager's 200µs, once a step.
	f := oneFinding(t, compiledTrace(300), CompiledSlower)
	checkNear(t, "compiled GPU", measureOf(t, f, "compiled owned GPU time per call (steady median)"), 300)
	checkNear(t, "eager GPU", measureOf(t, f, "eager owned GPU time per call (steady median)"), 200)
	checkNear(t, "difference", measureOf(t, f, "owned GPU time difference per call"), 100)
	checkNear(t, "calls per step", measureOf(t, f, "compiled calls per step"), 1)
	if !strings.Contains(f.Title, "slower on the GPU") {
		t.Errorf("title %q: want the GPU verdict", f.Title)
	}
	// 210µs: 5% more, under CompiledSlowerMinRatio, and the same host time.
	noFinding(t, compiledTrace(210), CompiledSlower)
}
