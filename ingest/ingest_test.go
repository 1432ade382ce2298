package ingest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// fixturePaths lists the real traces in ../fixtures.
func fixturePaths(t testing.TB) []string {
	// Every real trace in the repository: profiler exports, traces
	// recorded on a GPU for tests (multi-rank runs included), and
	// tracelens capture's own output.
	var paths []string
	for _, pat := range []string{"../fixtures/*.json.gz", "../fixtures/recorded/*.json.gz", "../fixtures/capture/*.json.gz", "../fixtures/runs/*/*.json.gz"} {
		p, err := filepath.Glob(pat)
		if err != nil || len(p) == 0 {
			t.Fatalf("no fixtures %s: %v", pat, err)
		}
		paths = append(paths, p...)
	}
	return paths
}

// shortEvery is the share of the fixtures (one in shortEvery) that the
// slowest equivalence tests read under -short: CI runs them in full once
// and again under -race -short, where reading every fixture in every
// layout took minutes. The parallel and speculative paths still run on
// each layout.
const shortEvery = 8

// sampledFixtures is fixturePaths, one in shortEvery under -short.
func sampledFixtures(t testing.TB) []string {
	paths := fixturePaths(t)
	if !testing.Short() {
		return paths
	}
	var out []string
	for i := 0; i < len(paths); i += shortEvery {
		out = append(out, paths[i])
	}
	return out
}

func gunzip(t testing.TB, path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// micros converts a JSON number in µs to exact nanoseconds with big.Rat,
// independently of the code under test.
func micros(t testing.TB, n json.Number) int64 {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		t.Fatalf("bad number %q", n)
	}
	r.Mul(r, big.NewRat(1000, 1))
	if !r.IsInt() {
		t.Fatalf("sub-nanosecond value %s", n)
	}
	return r.Num().Int64()
}

// truth is what a plain encoding/json walk says about a trace's kernels.
type truth struct {
	kernels int
	total   int64
	memcpy  int
	steps   int
}

func independentTruth(t testing.TB, raw []byte) truth {
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	// JAX/Perfetto: kernels are the X events on the GPU process.
	gpuPID := map[string]bool{}
	for _, e := range doc.TraceEvents {
		if e["ph"] == "M" && e["name"] == "process_name" {
			if args, ok := e["args"].(map[string]any); ok && strings.HasPrefix(args["name"].(string), "/device:GPU") {
				gpuPID[string(e["pid"].(json.Number))] = true
			}
		}
	}
	var tr truth
	for _, e := range doc.TraceEvents {
		if e["ph"] != "X" {
			continue
		}
		name, _ := e["name"].(string)
		cat, _ := e["cat"].(string)
		pid, _ := e["pid"].(json.Number)
		isKernel := cat == "kernel" || (cat == "" && gpuPID[string(pid)] && !strings.HasPrefix(name, "Memcpy"))
		if isKernel {
			tr.kernels++
			tr.total += micros(t, e["dur"].(json.Number))
		}
		if cat == "gpu_memcpy" || (cat == "" && gpuPID[string(pid)] && strings.HasPrefix(name, "Memcpy")) {
			tr.memcpy++
		}
		if cat == "user_annotation" && strings.HasPrefix(name, "ProfilerStep#") {
			tr.steps++
		}
	}
	return tr
}

func TestKernelCountsAndTotalsMatchIndependentDecode(t *testing.T) {
	withGPU := 0
	for _, path := range sampledFixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := independentTruth(t, gunzip(t, path))
			tr, err := ReadFile(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got truth
			for i := range tr.GPU {
				g := &tr.GPU[i]
				switch g.Kind {
				case trace.Kernel:
					got.kernels++
					got.total += int64(g.Dur())
				case trace.Memcpy:
					got.memcpy++
				}
			}
			for _, s := range tr.Steps {
				if !s.Synthetic {
					got.steps++
				}
			}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if want.kernels+want.memcpy > 0 {
				withGPU++
			}
		})
	}
	// One capture trace legitimately has no GPU activity (launch overhead
	// without per-launch timing); if most had none, the test would prove
	// nothing.
	if paths := sampledFixtures(t); withGPU < len(paths)-1 {
		t.Errorf("only %d of %d fixtures have kernels or copies", withGPU, len(paths))
	}
}

func TestTimestampsAreExactNanoseconds(t *testing.T) {
	tr, err := ReadFile("../fixtures/eggroll_hooks.json.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	// {"name": "ProfilerStep#3", "ts": 4485344487239.559, "dur": 2611.699}
	s := tr.Steps[0]
	if s.Number != 3 || s.Start != 4485344487239559 || s.Dur() != 2611699 {
		t.Errorf("step 0 = #%d start %d dur %d, want #3 start 4485344487239559 dur 2611699", s.Number, s.Start, s.Dur())
	}
}

func TestEveryNaiveKernelReachesItsLaunch(t *testing.T) {
	tr, err := ReadFile("../fixtures/fusedlinear_naive.json.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := range tr.GPU {
		g := &tr.GPU[i]
		if g.Kind != trace.Kernel {
			continue
		}
		n++
		if g.Launch == trace.None {
			t.Fatalf("kernel %d (%s at %d) has no launch call", i, g.Name, g.Start)
		}
		a := tr.APICalls[g.Launch]
		if a.Name != "cudaLaunchKernel" || a.Correlation != g.Correlation {
			t.Errorf("kernel %d launched by %s corr %d, want cudaLaunchKernel corr %d", i, a.Name, a.Correlation, g.Correlation)
		}
	}
	if n != 25 {
		t.Errorf("%d kernels, want 25", n)
	}
}

func TestEggrollKernelsReachOpAndHookFrame(t *testing.T) {
	tr, err := ReadFile("../fixtures/eggroll_hooks.json.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	viaHook := map[string]int{}
	withOp := 0
	kernels := 0
	for i := range tr.GPU {
		if tr.GPU[i].Kind != trace.Kernel {
			continue
		}
		kernels++
		op := tr.LaunchOp(trace.Index(i))
		if op != trace.None {
			withOp++
		}
		for _, f := range tr.FrameStack(tr.LaunchFrame(trace.Index(i))) {
			if strings.HasSuffix(tr.Frames[f].Name, "eggroll_perturb_hook") {
				outer := tr.OpPath(op)
				viaHook[tr.Ops[outer[0]].Name]++
				break
			}
		}
	}
	if withOp != kernels {
		t.Errorf("%d of %d kernels reach an aten op", withOp, kernels)
	}
	// The hook perturbs each of 3 layers in 5 steps: randn, repeat_interleave
	// and the two muls (plus bmm/add) run inside it.
	for _, op := range []string{"aten::randn", "aten::repeat_interleave", "aten::mul", "aten::bmm"} {
		if viaHook[op] == 0 {
			t.Errorf("no kernel launched by %s under eggroll_perturb_hook (got %v)", op, viaHook)
		}
	}
}

func TestSameModelWhateverTheBatching(t *testing.T) {
	for _, path := range sampledFixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			one, err := ReadFile(path, Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			many, err := ReadFile(path, Options{Workers: 3, chunk: 4096})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(one, many) {
				t.Errorf("model differs between 1 worker/4 MiB chunks and 3 workers/4 KiB chunks")
			}
		})
	}
}
