package diff

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// requireFinding checks that analyzer id resolved between the runs, or
// skips while analyze has no such analyzer yet.
func requireResolved(t *testing.T, r *Result, id string) {
	t.Helper()
	if analyze.Lookup(id) == nil {
		t.Skipf("analyze has no %s analyzer yet", id)
	}
	for _, f := range r.Findings.Resolved {
		if f.ID == id {
			return
		}
	}
	t.Errorf("finding %s not resolved; findings: %+v", id, r.Findings)
}

func TestNaiveToCuBLAS(t *testing.T) {
	r := mustCompare(t, "fusedlinear_naive.json.gz", "fusedlinear_cublas.json.gz", Options{})
	busy := r.Metric(GPUBusy)
	if !busy.Significant || busy.Pct > -95 || busy.Pct < -97 {
		t.Errorf("GPU busy %+.1f%% (p=%.3f, significant %v), want about −96%% and significant", busy.Pct, busy.P, busy.Significant)
	}
	naive := r.Kernel("void fused_linear_relu_naive_kernel<float>(float const*, float const*, float const*, float*, long, long, long)")
	if naive == nil || naive.Status != Removed || naive.NewTotalUs != 0 || naive.BaseCount != 20 {
		t.Errorf("naive kernel row = %+v, want removed with 20 launches in the 4 compared steps", naive)
	}
	if !naive.Significant || naive.Pct != -100 {
		t.Errorf("naive kernel: %+.0f%% significant %v, want −100%% and significant", naive.Pct, naive.Significant)
	}
	for _, k := range r.Kernels {
		if strings.Contains(k.Name, "xmma_gemm") && k.Status != Added {
			t.Errorf("cuBLAS GEMM %s, want added", k.Status)
		}
	}
	if !r.CrossFramework || !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "category") }) {
		t.Errorf("no shared kernel names should point to the category table: %q", r.Notes)
	}
	requireResolved(t, r, "custom-gemm")
}

func TestHooksToDirect(t *testing.T) {
	r := mustCompare(t, "eggroll_hooks.json.gz", "eggroll_direct.json.gz", Options{})
	wall := r.Metric(StepWall)
	if !wall.Significant || wall.Pct > -25 || wall.Pct < -35 {
		t.Errorf("step wall %+.1f%% (p=%.3f), want about −30%% and significant", wall.Pct, wall.P)
	}
	if busy := r.Metric(GPUBusy); busy.Significant && math.Abs(busy.Pct) > 3 {
		t.Errorf("GPU busy %+.1f%% significant; the same kernels ran, want unchanged", busy.Pct)
	}
	if r.CrossFramework {
		t.Error("same framework and kernels flagged as cross-framework")
	}
	for _, k := range r.Kernels {
		if k.Match != ByName || k.Status == Added || k.Status == Removed {
			t.Errorf("kernel %s: match %q status %s, want every kernel paired by name", k.Name, k.Match, k.Status)
		}
	}
	if len(r.Kernels) != 16 {
		t.Errorf("%d kernel rows, want the 16 distinct kernels", len(r.Kernels))
	}
	requireResolved(t, r, "hook-overhead")
}

func TestSelfComparisonFindsNothing(t *testing.T) {
	for _, name := range []string{"eggroll_hooks.json.gz", "fusedlinear_naive.json.gz"} {
		tr := loadFixture(t, name)
		a, err := analyze.Run(tr, analyze.Config{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Compare(a, a, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range r.Summary {
			if m.Significant || m.Pct != 0 || m.P != 1 {
				t.Errorf("%s: %s %+v, want no change with p=1", name, m.Name, m.Delta)
			}
		}
		for _, k := range slices.Concat(r.Kernels, r.Categories) {
			if k.Significant || k.Status != Same {
				t.Errorf("%s: %s is %s", name, k.Name, k.Status)
			}
		}
		if f, u := r.Gate(0); len(f)+len(u) != 0 {
			t.Errorf("%s: gate at 0%% says %q %q", name, f, u)
		}
		if len(r.Findings.Resolved)+len(r.Findings.New) != 0 {
			t.Errorf("%s: findings changed: %+v", name, r.Findings)
		}
	}
}

func TestGateTripsOnRegression(t *testing.T) {
	r := mustCompare(t, "fusedlinear_cublas.json.gz", "fusedlinear_naive.json.gz", Options{})
	failures, _ := r.Gate(5)
	if len(failures) != 2 || !strings.Contains(failures[0], "step period") || !strings.Contains(failures[1], "GPU busy") {
		t.Errorf("gate failures %q, want step time and GPU busy", failures)
	}
	// The improvement direction never trips the gate.
	r = mustCompare(t, "fusedlinear_naive.json.gz", "fusedlinear_cublas.json.gz", Options{})
	if f, _ := r.Gate(5); len(f) != 0 {
		t.Errorf("speedup tripped the gate: %q", f)
	}
	// A threshold above the regression passes.
	r = mustCompare(t, "eggroll_direct.json.gz", "eggroll_hooks.json.gz", Options{})
	if f, _ := r.Gate(5); len(f) != 1 || !strings.Contains(f[0], "step period") {
		t.Errorf("hooks after direct at 5%%: %q, want step time", f)
	}
	if f, _ := r.Gate(60); len(f) != 0 {
		t.Errorf("hooks after direct at 60%%: %q, want none", f)
	}
}

func TestJAXAgainstTorchComparesByCategory(t *testing.T) {
	r := mustCompare(t, "jax_eggroll.perfetto.json.gz", "eggroll_direct.json.gz", Options{})
	if !r.CrossFramework {
		t.Fatal("JAX vs PyTorch not flagged as cross-framework")
	}
	joined := strings.Join(r.Notes, "\n")
	for _, want := range []string{"JAX", "PyTorch", "by category"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes lack %q:\n%s", want, joined)
		}
	}
	gemm := -1
	for i, c := range r.Categories {
		if c.Name == analyze.CategoryGEMM {
			gemm = i
		}
	}
	if gemm < 0 || r.Categories[gemm].Match != ByName || r.Categories[gemm].BaseTotalUs == 0 || r.Categories[gemm].NewTotalUs == 0 {
		t.Errorf("gemm category not compared on both sides: %+v", r.Categories)
	}
	// JAX's 10 calls of the jitted function are its steps: 9 after the
	// first against torch's 4.
	if r.Base.Samples != 9 || r.Base.StepsSynthetic || r.New.Samples != 4 {
		t.Errorf("sides %+v %+v, want 9 jit calls vs 4 steps", r.Base, r.New)
	}
}

// TestWholeTraceAgainstSteps: a trace with no repeated unit of work (the
// JAX trace with its jit calls told apart) has one whole-trace "step":
// nothing can be significant against it, and the notes say why.
func TestWholeTraceAgainstSteps(t *testing.T) {
	jax := loadFixture(t, "jax_eggroll.perfetto.json.gz")
	c := *jax
	c.Ops = append([]trace.Op(nil), jax.Ops...)
	for i := range c.Ops {
		if strings.HasPrefix(c.Ops[i].Name, "PjitFunction(") {
			c.Ops[i].Name = fmt.Sprintf("%s#%d", c.Ops[i].Name, i)
		}
	}
	r, err := CompareTraces(&c, loadFixture(t, "eggroll_direct.json.gz"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "no ProfilerStep#N") {
		t.Errorf("notes lack the whole-trace step: %q", r.Notes)
	}
	for _, row := range slices.Concat(r.Kernels, r.Categories) {
		if row.Significant {
			t.Errorf("%s significant with one whole-trace sample", row.Name)
		}
	}
	if r.Base.Samples != 1 || !r.Base.StepsSynthetic || r.New.Samples != 4 {
		t.Errorf("sides %+v %+v, want 1 synthetic sample vs 4", r.Base, r.New)
	}
	if _, u := r.Gate(5); len(u) != 0 {
		t.Errorf("whole trace vs torch steps: untested warnings %q", u)
	}
	if f, u := func() ([]string, []string) {
		r, err := CompareTraces(loadFixture(t, "eggroll_direct.json.gz"), &c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Gate(5)
	}(); len(u) != 2 || len(f) != 2 {
		t.Errorf("whole JAX trace vs a torch step: want 2 failures judged on medians, got %q (untested %q)", f, u)
	}
}

func TestKeepWarmup(t *testing.T) {
	r := mustCompare(t, "eggroll_hooks.json.gz", "eggroll_direct.json.gz", Options{KeepWarmup: true})
	wall := r.Metric(StepWall)
	if r.Base.Samples != 5 || len(wall.Base.Values) != 5 || !near(wall.P, 2.0/252, 1e-9) {
		t.Errorf("with warm-up: %d samples, p=%v; want 5+5 and p=2/252", r.Base.Samples, wall.P)
	}
	if _, err := CompareTraces(loadFixture(t, "eggroll_hooks.json.gz"), loadFixture(t, "eggroll_hooks.json.gz"), Options{Alpha: 1.5}); err == nil {
		t.Error("α = 1.5 accepted")
	}
	if _, err := Compare(nil, nil, Options{}); err == nil {
		t.Error("empty runs accepted")
	}
}

// synthetic builds a trace with five 1 ms steps, each running one launch of
// every kernel in names for the given duration.
func synthetic(t *testing.T, source string, kernels map[string]trace.Duration) *analyze.Result {
	t.Helper()
	return syntheticSteps(t, source, 5, 1_000_000, kernels)
}

// TestGateWithFewSteps: three steps a side (two compared after warm-up)
// cannot reach significance, yet a regression of the medians beyond the
// threshold trips the gate and says it could not be tested; one within
// the threshold does not.
func TestGateWithFewSteps(t *testing.T) {
	k := map[string]trace.Duration{"gemm": 100_000}
	base := syntheticSteps(t, "base", 3, 1_000_000, k)
	worse := syntheticSteps(t, "new", 3, 5_170_000, k) // +417 %
	r, err := Compare(base, worse, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, u := r.Gate(10)
	if len(f) != 1 || len(u) != 1 || !strings.Contains(f[0], "step period regressed more than 10% by the medians; significance could not be tested") {
		t.Errorf("+417%% over 2 steps: failures %q untested %q, want the step time judged on medians", f, u)
	}
	if m := r.Metric(StepWall); m.Significant || math.Abs(m.Pct-417) > 0.5 {
		t.Errorf("step wall %+.1f%% significant %v, want +417%% untested", m.Pct, m.Significant)
	}
	same := syntheticSteps(t, "new", 3, 1_050_000, k) // +5 %
	if r, err = Compare(base, same, Options{}); err != nil {
		t.Fatal(err)
	}
	if f, _ := r.Gate(10); len(f) != 0 {
		t.Errorf("+5%% under a 10%% threshold trips the gate: %q", f)
	}
}

// syntheticSteps builds a trace with n steps of the given length, each
// running one launch of every kernel in names for the given duration.
func syntheticSteps(t *testing.T, source string, n int, step trace.Duration, kernels map[string]trace.Duration) *analyze.Result {
	t.Helper()
	tr := &trace.Trace{Source: source}
	names := make([]string, 0, len(kernels))
	for n := range kernels {
		names = append(names, n)
	}
	slices.Sort(names)
	for s := 0; s < n; s++ {
		start := trace.Time(s) * trace.Time(step)
		tr.Steps = append(tr.Steps, trace.Step{Span: trace.Span{Name: "ProfilerStep#" + string(rune('0'+s)), Start: start, End: start + trace.Time(step)}, Number: s})
		at := start + 10_000
		for _, n := range names {
			d := kernels[n] + trace.Duration(s*100) // a little noise
			tr.GPU = append(tr.GPU, trace.GPUActivity{Span: trace.Span{Name: n, Start: at, End: at + trace.Time(d)}, Kind: trace.Kernel, Stream: 7, Launch: trace.None, Occupancy: -1})
			at += trace.Time(d) + 1000
		}
	}
	a, err := analyze.Run(tr, analyze.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestNormalizedMatching(t *testing.T) {
	base := synthetic(t, "base", map[string]trace.Duration{
		"triton_poi_fused_add_mul_0": 20_000,
		"triton_red_fused_sum_1":     10_000,
		"kept_kernel":                5_000,
		"old_only_kernel":            7_000,
	})
	next := synthetic(t, "new", map[string]trace.Duration{
		"triton_poi_fused_add_mul_3": 10_000,
		"triton_red_fused_sum_1":     10_000,
		"kept_kernel":                5_000,
		"new_only_kernel":            3_000,
	})
	r, err := Compare(base, next, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		status Status
		match  Match
	}{
		"triton_poi_fused_add_mul": {Changed, ByNormalized},
		"triton_red_fused_sum_1":   {Same, ByName},
		"kept_kernel":              {Same, ByName},
		"old_only_kernel":          {Removed, Unmatched},
		"new_only_kernel":          {Added, Unmatched},
	}
	if len(r.Kernels) != len(want) {
		t.Errorf("%d rows, want %d: %+v", len(r.Kernels), len(want), r.Kernels)
	}
	for _, k := range r.Kernels {
		w, ok := want[k.Name]
		if !ok || k.Status != w.status || k.Match != w.match {
			t.Errorf("row %q: %s by %q, want %+v", k.Name, k.Status, k.Match, w)
		}
	}
	renamed := r.Kernel("triton_poi_fused_add_mul_0")
	if renamed == nil || !slices.Equal(renamed.NewNames, []string{"triton_poi_fused_add_mul_3"}) || !near(renamed.Pct, -49.5, 0.5) {
		t.Errorf("renamed row %+v, want −50%% with both names", renamed)
	}
	if r.CrossFramework {
		t.Error("runs sharing kernels flagged as cross-framework")
	}
	// The kernels table leads with the heaviest kernel.
	if r.Kernels[0].Name != "triton_poi_fused_add_mul" {
		t.Errorf("first row %q, want the heaviest kernel", r.Kernels[0].Name)
	}
}

func TestNormalizedMatchingMergesGroups(t *testing.T) {
	base := synthetic(t, "base", map[string]trace.Duration{"loop_add_fusion_1": 4_000, "loop_add_fusion_2": 6_000, "gemm_fusion_dot_general_3": 20_000})
	next := synthetic(t, "new", map[string]trace.Duration{"loop_add_fusion_7": 10_000, "gemm_fusion_dot_general_3": 20_000})
	r, err := Compare(base, next, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kernels) != 2 {
		t.Fatalf("%d rows, want 2: %+v", len(r.Kernels), r.Kernels)
	}
	add := r.Kernel("loop_add_fusion")
	if add == nil || add.Match != ByNormalized || !slices.Equal(add.BaseNames, []string{"loop_add_fusion_1", "loop_add_fusion_2"}) ||
		add.BaseCount != 8 || add.NewCount != 4 || add.Significant || math.Abs(add.Pct) > 3 {
		t.Errorf("merged row %+v, want both base fusions against the new one, about unchanged", add)
	}
}
