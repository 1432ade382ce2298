package analyze

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// synthLaunch is one kernel launch of launchTrace: the kernel, the API call
// that launched it, and what encloses the call on the host, outermost
// first: Python frames (python_function), ops (cpu_op) and record_function
// ranges (user_annotation).
type synthLaunch struct {
	kernel string
	api    string // "cuLaunchKernel", "cuLaunchKernelEx", "cudaLaunchKernel"
	frames []string
	ops    []string
	ranges []string
	durUs  float64
	shared int
}

// launchTrace builds a one-thread PyTorch trace with the launches one after
// another, each twice (two ProfilerSteps), so what a trace says about a
// launch can be varied one piece at a time.
func launchTrace(t *testing.T, launches ...synthLaunch) *trace.Trace {
	t.Helper()
	var ev []string
	add := func(format string, a ...any) { ev = append(ev, fmt.Sprintf(format, a...)) }
	corr, pyID := 100, 1
	at, gpuAt := 1000.0, 1000.0
	for step := 0; step < 2; step++ {
		stepStart := at
		stepEv := len(ev)
		ev = append(ev, "")
		for _, l := range launches {
			// Nest frames, ops and ranges around the call: each level
			// opens 1 µs after and closes 1 µs before its parent.
			depth := len(l.frames) + len(l.ops) + len(l.ranges)
			start, end := at+1, at+1+float64(2*depth)+10
			lvl := 0
			parent := 0
			for _, r := range l.ranges {
				add(`{"ph":"X","cat":"user_annotation","name":%q,"pid":1,"tid":1,"ts":%.3f,"dur":%.3f}`, r, start+float64(lvl), end-start-float64(2*lvl))
				lvl++
			}
			for _, f := range l.frames {
				add(`{"ph":"X","cat":"python_function","name":%q,"pid":1,"tid":1,"ts":%.3f,"dur":%.3f,"args":{"Python id":%d,"Python parent id":%d}}`,
					f, start+float64(lvl), end-start-float64(2*lvl), pyID, parent)
				parent = pyID
				pyID++
				lvl++
			}
			for _, o := range l.ops {
				add(`{"ph":"X","cat":"cpu_op","name":%q,"pid":1,"tid":1,"ts":%.3f,"dur":%.3f}`, o, start+float64(lvl), end-start-float64(2*lvl))
				lvl++
			}
			cat := "cuda_driver"
			if strings.HasPrefix(l.api, "cuda") {
				cat = "cuda_runtime"
			}
			add(`{"ph":"X","cat":%q,"name":%q,"pid":1,"tid":1,"ts":%.3f,"dur":2,"args":{"correlation":%d}}`, cat, l.api, start+float64(lvl), corr)
			dur := max(l.durUs, 10)
			gpuAt = max(gpuAt, start+float64(lvl)+5)
			add(`{"ph":"X","cat":"kernel","name":%q,"pid":0,"tid":7,"ts":%.3f,"dur":%.3f,"args":{"correlation":%d,"stream":7,"device":0,"grid":[64,64,1],"block":[16,16,1],"registers per thread":40,"shared memory":%d}}`,
				l.kernel, gpuAt, dur, corr, l.shared)
			gpuAt += dur + 1
			corr++
			at = end + 1
		}
		at = max(at, gpuAt) + 10
		ev[stepEv] = fmt.Sprintf(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%.3f,"dur":%.3f}`, step, stepStart, at-stepStart)
		at++
	}
	doc := `{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","computeMajor":9,"computeMinor":0,"numSms":132}],"traceEvents":[` + strings.Join(ev, ",\n") + `]}`
	tr, err := ingest.Read(strings.NewReader(doc), "launches", ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Python stacks of the launches below, outermost first.
var (
	// A CuPy RawKernel call: the user's line, then CuPy's Cython __call__.
	cupyStack = []string{"bench.py(40): <module>", "bench.py(22): run_cupy", "<built-in method __call__ of cupy._core.raw.RawKernel object at 0x7f00>"}
	// A user's @triton.jit kernel: kernel[grid](...) in the user's code,
	// then Triton's JITFunction.run and its CUDA launcher.
	tritonStack = []string{"bench.py(40): <module>", "bench.py(30): run_triton", "triton/runtime/jit.py(390): <lambda>",
		"triton/runtime/jit.py(733): run", "triton/backends/nvidia/driver.py(711): __call__", "<built-in method launch of PyCapsule object at 0x7f01>"}
	// Inductor's generated module launching through its static launcher.
	inductorStack = []string{"train.py(12): <module>", "torch/_inductor/output_code.py(628): __call__",
		"/tmp/torchinductor_root/oo/coognpmv4jk4ltillld2fagssacxfxefgsfm5f3fjlycfgqchz4v.py(96): call",
		"torch/_inductor/runtime/triton_heuristics.py(1407): run", "<string>(1): launcher",
		"torch/_inductor/runtime/static_triton_launcher.py(232): run", "<built-in function _launch_kernel>"}
	// triton.testing.do_bench timing a CuPy kernel: Triton's benchmark
	// helper encloses the user's code, which launches.
	doBenchCupyStack = []string{"bench.py(40): <module>", "triton/testing.py(150): do_bench", "bench.py(50): <lambda>",
		"<built-in method __call__ of cupy._core.raw.RawKernel object at 0x7f00>"}
)

// Triton only by evidence: a bare-named kernel launched through the driver
// API is what its name says (custom) unless the Python stack, ops or ranges
// around its launch show Triton launched it (issue 22).
func TestTritonOnlyByEvidence(t *testing.T) {
	cases := []struct {
		what string
		l    synthLaunch
		want string
	}{
		{"CuPy RawKernel, stack", synthLaunch{kernel: "saxpy_kernel", api: "cuLaunchKernel", frames: cupyStack}, CategoryCustom},
		{"CuPy RawKernel GEMM, stack", synthLaunch{kernel: "naive_gemm", api: "cuLaunchKernel", frames: cupyStack}, CategoryGEMM},
		{"@triton.jit kernel, stack", synthLaunch{kernel: "saxpy_kernel", api: "cuLaunchKernel", frames: tritonStack}, CategoryTriton},
		{"@triton.jit GEMM, stack", synthLaunch{kernel: "matmul_kernel", api: "cuLaunchKernelEx", frames: tritonStack}, CategoryTriton},
		{"Inductor kernel, stack", synthLaunch{kernel: "triton_poi_fused_add_cos_mul_sin_0", api: "cuLaunchKernel", frames: inductorStack}, CategoryTriton},
		{"Inductor-named kernel, no stack", synthLaunch{kernel: "triton_poi_fused_add_cos_mul_sin_0", api: "cuLaunchKernel"}, CategoryTriton},
		{"user kernel under Inductor's launcher", synthLaunch{kernel: "saxpy_kernel", api: "cuLaunchKernel", frames: inductorStack}, CategoryTriton},
		{"CuPy inside triton.testing.do_bench", synthLaunch{kernel: "saxpy_kernel", api: "cuLaunchKernel", frames: doBenchCupyStack}, CategoryCustom},
		{"bare kernel, no stack, ops or ranges", synthLaunch{kernel: "saxpy_kernel", api: "cuLaunchKernel"}, CategoryCustom},
		{"bare kernel, no stack, range says triton", synthLaunch{kernel: "saxpy_kernel", api: "cuLaunchKernelEx", ranges: []string{"triton_fused_128_128_64"}}, CategoryTriton},
		{"bare kernel, no stack, Inductor's op", synthLaunch{kernel: "saxpy_kernel", api: "cuLaunchKernel", ops: []string{"Torch-Compiled Region: 0/0", "saxpy_kernel_0"}}, CategoryTriton},
		// The stack, when it names the user's code, outweighs a range's
		// name: a benchmark comparing CuPy with Triton.
		{"CuPy under a range named triton", synthLaunch{kernel: "saxpy_kernel", api: "cuLaunchKernel", frames: cupyStack, ranges: []string{"cupy_vs_triton"}}, CategoryCustom},
		// Triton launches through the driver API; a runtime launch is
		// not Triton's whatever encloses it.
		{"runtime launch under Triton frames", synthLaunch{kernel: "saxpy_kernel", api: "cudaLaunchKernel", frames: tritonStack}, CategoryCustom},
	}
	for _, c := range cases {
		tr := launchTrace(t, c.l)
		cz := NewCategorizer(tr)
		facts, err := KernelCategories.Fact(&Pass{Trace: tr})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for g := range tr.GPU {
			if tr.GPU[g].Name != c.l.kernel {
				continue
			}
			n++
			if tr.GPU[g].Launch == trace.None {
				t.Fatalf("%s: the kernel has no launch call: the test proves nothing", c.what)
			}
			if len(c.l.frames) > 0 && tr.LaunchFrame(trace.Index(g)) == trace.None {
				t.Fatalf("%s: the launch has no Python frame: the test proves nothing", c.what)
			}
			got := CategoryOf(tr, g)
			if got != c.want {
				t.Errorf("%s: %s is %s, want %s", c.what, c.l.kernel, got, c.want)
			}
			if m, f := cz.Of(g), facts.(*CategoryFacts).Of(g); m != got || f != got {
				t.Errorf("%s: Categorizer says %s, KernelCategories %s, CategoryOf %s", c.what, m, f, got)
			}
		}
		if n != 2 {
			t.Fatalf("%s: %d launches of %s, want 2", c.what, n, c.l.kernel)
		}
	}
}

// A naive GEMM launched through cuLaunchKernel by CuPy (issue 22's trace:
// 0 B of shared memory, most of the GPU time) is the user's own kernel:
// custom-gemm reports it. The same kernel launched by Triton's launcher is
// Triton's business and is not reported.
func TestCustomGEMMSeesRawDriverKernels(t *testing.T) {
	naive := synthLaunch{kernel: "naive_gemm", api: "cuLaunchKernel", frames: cupyStack, durUs: 5000}
	other := synthLaunch{kernel: "add_kernel", api: "cuLaunchKernel", frames: cupyStack, durUs: 50}
	r, err := Run(launchTrace(t, naive, other), Config{})
	if err != nil {
		t.Fatal(err)
	}
	f := finding(t, r, "custom-gemm")
	if f.Subject != "naive_gemm" || !strings.Contains(evidenceText(f), "bench.py(22): run_cupy") {
		t.Errorf("custom-gemm on %q, evidence %q: want naive_gemm launched from bench.py(22): run_cupy", f.Subject, evidenceText(f))
	}
	for _, k := range r.Kernels {
		if k.Category == CategoryTriton {
			t.Errorf("%s is triton in a CuPy trace", k.Name)
		}
	}
	naive.frames, other.frames = tritonStack, tritonStack
	r, err = Run(launchTrace(t, naive, other), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(ids(r), "custom-gemm") {
		t.Errorf("custom-gemm fired on a kernel Triton launched")
	}
}

// On the real traces, the only kernels called Triton whose names do not say
// so are the ones with evidence: triton_fused_matmul's user-written
// matmul_leaky_kernel (its launch lies in the benchmark's
// "triton_fused_128_128_64_8_8_3" range; the trace has no Python stacks).
// Inductor's kernels stay Triton; the C++ extension's naive GEMM of
// fusedlinear_naive and the CUDA C programs' kernels are not.
func TestTritonCategoryOnFixtures(t *testing.T) {
	names := []string{"triton_fused_matmul.json.gz", "fusedlinear_naive.json.gz", "fusedlinear_cublas.json.gz", "nanobragg_compile.json.gz", "eggroll_hooks.json.gz"}
	for _, d := range []string{"recorded", "capture"} {
		m, _ := filepath.Glob(filepath.Join("..", "fixtures", d, "*.json.gz"))
		for _, f := range m {
			names = append(names, d+"/"+filepath.Base(f))
		}
	}
	byEvidence := map[string]bool{}
	inductor := 0
	for _, n := range names {
		tr := load(t, n)
		cz := NewCategorizer(tr)
		for g := range tr.GPU {
			name := tr.GPU[g].Name
			c := cz.Of(g)
			switch {
			case strings.HasPrefix(name, "triton_"):
				if c != CategoryTriton {
					t.Errorf("%s: %s is %s, want triton", n, name, c)
				}
				if strings.HasPrefix(n, "recorded/compile") {
					inductor++
				}
			case c == CategoryTriton:
				byEvidence[n+": "+name] = true
			}
		}
	}
	want := map[string]bool{"triton_fused_matmul.json.gz: matmul_leaky_kernel": true}
	if !maps.Equal(byEvidence, want) {
		t.Errorf("kernels triton by launch evidence: %v, want %v", byEvidence, want)
	}
	if inductor == 0 {
		t.Error("no Inductor kernels in recorded/compile_*: the test proves nothing")
	}
	// fusedlinear_naive's GEMM is a C++ extension's (cudaLaunchKernel from
	// a pybind11 binding): custom, and custom-gemm reports it.
	r := run(t, "fusedlinear_naive.json.gz")
	f := finding(t, r, "custom-gemm")
	for _, k := range r.Kernels {
		if k.Name == f.Subject && k.Category != CategoryCustom {
			t.Errorf("fusedlinear_naive: %s is %s, want custom", k.ShortName, k.Category)
		}
	}
}

// The Python stacks of Inductor's launches in the recorded compiled traces
// read as Triton's (static_triton_launcher.py, triton_heuristics.py, the
// generated module), and a C++ extension's launch in fusedlinear_naive as
// the user's: what the synthetic stacks above stand for.
func TestStackEvidenceOnRecordedLaunches(t *testing.T) {
	for name, want := range map[string]int8{
		"recorded/compiled_slower_gemm.json.gz":      stackTriton,
		"recorded/compiled_slower_pointwise.json.gz": stackTriton,
		"fusedlinear_naive.json.gz":                  stackUser,
	} {
		tr := load(t, name)
		ev := newTritonEvidence(tr)
		n := 0
		for g := range tr.GPU {
			a := &tr.GPU[g]
			if a.Kind != trace.Kernel || a.Launch == trace.None || LibraryKernel(a.Name) || strings.HasPrefix(a.Name, "void at::") {
				continue
			}
			f := tr.LaunchFrame(trace.Index(g))
			if f == trace.None {
				continue
			}
			n++
			if got := ev.stack(f); got != want {
				t.Errorf("%s: %s's launch stack says %d, want %d (innermost frame %s)", name, a.Name, got, want, tr.Frames[f].Name)
			}
		}
		if n == 0 {
			t.Errorf("%s: no launch with a Python stack: the test proves nothing", name)
		}
	}
}

// issue22Fixtures are the CuPy traces of issue 22, recorded by
// fixtures/recorded/capture_issue22.py (rawkernel): RawKernel/RawModule
// kernels launched through cuLaunchKernel on torch's stream, each in a
// record_function range, next to a torch.matmul of the same shape.
var issue22Fixtures = []string{"recorded/issue22/rawkernel_cupy_gemm.json.gz", "recorded/issue22/rawkernel_cupy_mixed.json.gz"}

// issue22Expect is the part of fixtures/recorded/expect/issue22.json
// (issue22.py: straight from the trace JSON, without tracelens) these
// tests read, per trace file name.
type issue22Expect struct {
	Kernels map[string]struct {
		Count        int       `json:"count"`
		TotalUs      float64   `json:"total_us"`
		LaunchAPI    []string  `json:"launch_api"`
		SharedMemory []float64 `json:"shared_memory"`
		Triton       bool      `json:"triton"`
		CuPy         bool      `json:"cupy"`
	} `json:"kernels"`
	CuPy struct {
		AnyTriton      bool     `json:"any_triton"`
		KernelUs       float64  `json:"kernel_us"`
		Kernels        int      `json:"kernels"`
		Names          []string `json:"names"`
		ShareOfKernels float64  `json:"share_of_kernel_us"`
	} `json:"cupy"`
}

// The recorded CuPy kernels (issue 22) are the user's: launched through
// cuLaunchKernel, none is Triton; the RawKernel/RawModule ones are custom
// or what their names say (naive_sgemm and tiled_sgemm are gemm-like, not
// cuBLAS's); custom-gemm reports the untiled naive_sgemm with the figures
// expect/issue22.json computed from the trace and leaves the tiled_sgemm
// (shared memory) alone. tf32-disabled counts only cuBLAS's FFMA GEMM:
// torch's TF32 flag does not reach a CuPy kernel.
func TestCuPyRawKernels(t *testing.T) {
	var expect map[string]issue22Expect
	readExpected(t, "issue22.json", &expect)
	cats := map[string]string{"naive_sgemm": CategoryGEMM, "tiled_sgemm": CategoryGEMM, "scale_bias_relu": CategoryCustom}
	for _, n := range issue22Fixtures {
		e, ok := expect[filepath.Base(n)]
		if !ok || len(e.CuPy.Names) == 0 || e.CuPy.AnyTriton {
			t.Fatalf("%s: expect/issue22.json has no CuPy kernels for it (or Triton ones)", n)
		}
		r := run(t, n)
		got := map[string]Kernel{}
		for _, k := range r.Kernels {
			got[k.Name] = k
			if k.Category == CategoryTriton {
				t.Errorf("%s: %s is triton", n, k.Name)
			}
		}
		cupyUs := 0.0
		for name, x := range e.Kernels {
			k, ok := got[name]
			if !ok || k.Count != x.Count || math.Abs(k.TotalUs-x.TotalUs) > 0.01 {
				t.Errorf("%s: %.50s: %d calls, %.3f µs; expected %d, %.3f", n, name, k.Count, k.TotalUs, x.Count, x.TotalUs)
			}
			if !x.CuPy {
				continue
			}
			cupyUs += k.TotalUs
			if !slices.Equal(x.LaunchAPI, []string{"cuLaunchKernel"}) {
				t.Errorf("%s: %s launched by %v: not the driver-API case this test is about", n, name, x.LaunchAPI)
			}
			if want := cats[name]; k.Category != want || LibraryKernel(name) {
				t.Errorf("%s: %s is %s (library %v), want %s, the user's", n, name, k.Category, LibraryKernel(name), want)
			}
		}
		if math.Abs(cupyUs-e.CuPy.KernelUs) > 0.01 {
			t.Errorf("%s: CuPy kernels %.3f µs, expected %.3f", n, cupyUs, e.CuPy.KernelUs)
		}
	}

	e := expect["rawkernel_cupy_gemm.json.gz"]
	naive := e.Kernels["naive_sgemm"]
	if !slices.Equal(naive.SharedMemory, []float64{0}) {
		t.Fatalf("naive_sgemm shared memory %v: the trace is not the untiled case", naive.SharedMemory)
	}
	r := run(t, issue22Fixtures[0])
	f := finding(t, r, "custom-gemm")
	if f.Subject != "naive_sgemm" {
		t.Fatalf("custom-gemm on %q, want naive_sgemm", f.Subject)
	}
	if got := measure(t, f, "share of GPU kernel time").Num; math.Abs(got-e.CuPy.ShareOfKernels) > 0.001 {
		t.Errorf("custom-gemm share %.4f, expected %.3f", got, e.CuPy.ShareOfKernels)
	}
	if got := measure(t, f, "calls").Num; int(got) != naive.Count {
		t.Errorf("custom-gemm calls %v, expected %d", got, naive.Count)
	}
	mean := naive.TotalUs / float64(naive.Count)
	if got := measure(t, f, "mean time").Num / 1e3; math.Abs(got-mean) > 0.01 {
		t.Errorf("custom-gemm mean %.3f µs, expected %.3f", got, mean)
	}
	if !strings.Contains(evidenceText(f), "0 bytes of shared memory") || !strings.Contains(f.Fix, "capture_issue22.py(163): raw") {
		t.Errorf("custom-gemm: evidence %q, fix %q", evidenceText(f), f.Fix)
	}
	// The saving is conservative: at most what the trace's cuBLAS GEMM of
	// the same shape (torch_matmul, 1024³ fp32) would save per call.
	var lib string
	for name := range e.Kernels {
		if strings.Contains(name, "xmma_gemm") {
			lib = name
		}
	}
	perStep := mean - e.Kernels[lib].TotalUs/float64(e.Kernels[lib].Count)
	if f.SavingUs <= 0 || f.SavingUs > perStep {
		t.Errorf("custom-gemm saving %.1f µs a step, want in (0, %.1f] (naive − cuBLAS per call)", f.SavingUs, perStep)
	}
	tf := finding(t, r, "tf32-disabled")
	if got := measure(t, tf, "FFMA GEMM time").Num / 1e3; math.Abs(got-e.Kernels[lib].TotalUs) > 0.01 {
		t.Errorf("tf32-disabled FFMA time %.3f µs, want cuBLAS's %s alone: %.3f", got, lib, e.Kernels[lib].TotalUs)
	}
	if r := run(t, issue22Fixtures[1]); slices.Contains(ids(r), "custom-gemm") {
		t.Errorf("custom-gemm fired on rawkernel_cupy_mixed, whose tiled_sgemm tiles through shared memory")
	}
}

// cuBLAS's BLAS-named kernels are a library's; a user's kernel that only
// contains the routine's name (CuPy's naive_sgemm) is not.
func TestBLASKernelNames(t *testing.T) {
	for name, want := range map[string]bool{
		"sgemm_largek_lds64": true,
		"void sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>(float*, float const*, float const*, int, int, int, int, int, int, float const*, float const*, float, float, int, int, int*, int*)": true,
		"maxwell_sgemm_128x64_nt":         true,
		"volta_hgemm_128x128_nn":          true,
		"sm86_dgemm_64x64_nn":             true,
		"cutlass_80_simt_sgemm_64x64_8x5": true,
		"naive_sgemm":                     false,
		"tiled_sgemm":                     false,
		"my_dgemm_kernel":                 false,
		"matmul_kernel":                   false,
		"naive_gemm":                      false,
	} {
		if got := LibraryKernel(name); got != want {
			t.Errorf("LibraryKernel(%q) = %v, want %v", name, got, want)
		}
	}
	if ffmaGEMM("naive_sgemm") || !ffmaGEMM("void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>(cutlass_80_simt_sgemm_64x64_8x5_nn_align1::Params)") {
		t.Error("ffmaGEMM: a CuPy naive_sgemm is not cuBLAS's FFMA path; CUTLASS's simt sgemm is")
	}
}
