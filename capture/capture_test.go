package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

func fakeRun(t *testing.T, opt Options, setup func(*fakeDriver)) (*Result, *fakeDriver, error) {
	t.Helper()
	return fakeRunTimed(t, opt, setup, false)
}

// fakeRunTimed runs a workload on the fake driver, with a fake CUPTI when
// cupti is set.
func fakeRunTimed(t *testing.T, opt Options, setup func(*fakeDriver), cupti bool) (*Result, *fakeDriver, error) {
	t.Helper()
	clk := &fakeClock{now: 1_700_000_000_000_000_000, tick: 50}
	d := newFakeDriver(clk)
	var src ActivitySource
	if cupti {
		d.act = newFakeCUPTI(clk)
		src = d.act
	}
	if setup != nil {
		setup(d)
	}
	res, err := Run(d, src, clk, opt)
	return res, d, err
}

type jsonTrace struct {
	SchemaVersion    int `json:"schemaVersion"`
	DeviceProperties []struct {
		Name   string `json:"name"`
		NumSms int    `json:"numSms"`
	} `json:"deviceProperties"`
	CUDADriverVersion int `json:"cuda_driver_version"`
	TraceEvents       []struct {
		Ph   string         `json:"ph"`
		Cat  string         `json:"cat"`
		Name string         `json:"name"`
		Pid  int            `json:"pid"`
		Tid  int            `json:"tid"`
		Ts   float64        `json:"ts"`
		Dur  float64        `json:"dur"`
		ID   int64          `json:"id"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
}

func decode(t *testing.T, tr *Trace) (jsonTrace, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := tr.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var jt jsonTrace
	if err := json.Unmarshal(buf.Bytes(), &jt); err != nil {
		t.Fatalf("trace is not valid JSON: %v\n%s", err, buf.String()[:min(buf.Len(), 2000)])
	}
	return jt, buf.String()
}

func TestFormatMicros(t *testing.T) {
	for ns, want := range map[int64]string{0: "0.000", 1: "0.001", 999: "0.999", 1000: "1.000", 1234567: "1234.567",
		-5: "-0.005", -1500: "-1.500", 1_700_000_000_123_456_789: "1700000000123456.789"} {
		if got := formatMicros(ns); got != want {
			t.Errorf("formatMicros(%d) = %q, want %q", ns, got, want)
		}
	}
}

func TestCalibration(t *testing.T) {
	clk := &fakeClock{now: 5_000_000, tick: 200}
	d := newFakeDriver(clk)
	pool := &eventPool{d: d}
	cal, err := calibrate(d, clk, pool)
	if err != nil {
		t.Fatal(err)
	}
	// The reference event completed at its fake GPU time; the calibration
	// must put it within its own error bound.
	truth := d.events[cal.Ref]
	if diff := cal.Anchor - truth; diff < -cal.Error || diff > cal.Error {
		t.Fatalf("anchor %d is %d ns from the event's time %d, beyond the bound %d", cal.Anchor, diff, truth, cal.Error)
	}
	if cal.Error <= 0 || cal.Error > 10_000 {
		t.Fatalf("implausible error bound %d", cal.Error)
	}
	// A later event maps through the calibration with the same offset.
	ev, _ := pool.get()
	clk.now += 1_000_000
	if err := d.Record(ev); err != nil {
		t.Fatal(err)
	}
	got, err := cal.hostTime(d, ev)
	if err != nil {
		t.Fatal(err)
	}
	if want := d.events[ev] + (cal.Anchor - truth); got != want {
		t.Fatalf("hostTime = %d, want %d", got, want)
	}
	if err := pool.release(); err != nil {
		t.Fatal(err)
	}
	if len(d.events) != 0 {
		t.Fatalf("%d events left after release", len(d.events))
	}
}

// TestTraceKinetoShape runs the unfused elementwise chain with --check on the
// fake GPU and checks the trace the way tracelens's reader relies on it.
func TestTraceKinetoShape(t *testing.T) {
	opt := DefaultOptions("elementwise-chain-unfused")
	opt.Size, opt.Steps, opt.Warmup, opt.Check, opt.Pid = "1000", 3, 1, true, 4242
	res, d, err := fakeRun(t, opt, func(d *fakeDriver) { d.kdur["ew_add"] = 7000 })
	if err != nil {
		t.Fatal(err)
	}
	if !res.Checked {
		t.Fatal("check did not run")
	}
	if len(d.mem) != 0 || d.pinned != 0 || len(d.events) != 0 {
		t.Fatalf("leaked: %d buffers, %d pinned, %d events", len(d.mem), d.pinned, len(d.events))
	}
	jt, raw := decode(t, res.Trace)
	if jt.SchemaVersion != 1 || len(jt.DeviceProperties) != 1 || jt.DeviceProperties[0].Name != "Fake GPU" || jt.CUDADriverVersion != 13000 {
		t.Fatalf("bad header: %+v", jt)
	}
	// Every ts and dur has exactly three decimals.
	for _, m := range regexp.MustCompile(`"(ts|dur)": ([-0-9.]+)`).FindAllStringSubmatch(raw, -1) {
		if !regexp.MustCompile(`^-?\d+\.\d{3}$`).MatchString(m[2]) {
			t.Fatalf("%s %q is not microseconds with 3 decimals", m[1], m[2])
		}
	}
	launches := map[int64]float64{} // correlation -> launch ts
	kernels := map[string]int{}
	steps, gpuSteps, flowsS, flowsF := 0, 0, 0, 0
	for _, e := range jt.TraceEvents {
		switch {
		case e.Cat == "cuda_driver" && e.Name == "cuLaunchKernel":
			if e.Pid != 4242 || e.Tid != 4242 {
				t.Errorf("launch on pid/tid %d/%d", e.Pid, e.Tid)
			}
			launches[int64(e.Args["correlation"].(float64))] = e.Ts
			if e.Args["External id"].(float64) == 0 {
				t.Errorf("launch without External id")
			}
		case e.Cat == "user_annotation" && strings.HasPrefix(e.Name, "ProfilerStep#"):
			steps++
		case e.Cat == "gpu_user_annotation" && strings.HasPrefix(e.Name, "ProfilerStep#"):
			gpuSteps++
		case e.Ph == "s":
			flowsS++
		case e.Ph == "f":
			flowsF++
		}
	}
	for _, e := range jt.TraceEvents {
		if e.Cat != "kernel" {
			continue
		}
		kernels[e.Name]++
		if e.Pid != 0 || e.Tid != 7 || e.Args["stream"].(float64) != 7 {
			t.Errorf("kernel %s on pid/tid %d/%d", e.Name, e.Pid, e.Tid)
		}
		c := int64(e.Args["correlation"].(float64))
		lts, ok := launches[c]
		if !ok {
			t.Errorf("kernel %s correlation %d has no launch", e.Name, c)
		}
		// The kernel cannot start before its launch call (clock error
		// allowed for).
		if e.Ts < lts-1 {
			t.Errorf("kernel %s starts at %.3f before its launch at %.3f", e.Name, e.Ts, lts)
		}
		for _, k := range []string{"grid", "block", "registers per thread", "shared memory", "device", "External id"} {
			if _, ok := e.Args[k]; !ok {
				t.Errorf("kernel %s lacks args.%s", e.Name, k)
			}
		}
	}
	if kernels["ew_sin"] != 3 || kernels["ew_cos"] != 3 || kernels["ew_add"] != 3 || len(launches) != 9 {
		t.Fatalf("kernels %v, launches %d; want 3 steps x 3 kernels", kernels, len(launches))
	}
	if steps != 3 || gpuSteps != 3 || flowsS != 9 || flowsF != 9 {
		t.Fatalf("steps %d, gpu steps %d, flows %d/%d", steps, gpuSteps, flowsS, flowsF)
	}
	// The fake add kernel takes 7 us; the capture must say so (event
	// rounding aside).
	if m, _, _ := medianOp(res.Session, "ew_add"); m < 6990 || m > 7010 {
		t.Fatalf("ew_add median %d ns, want 7000", m)
	}
	var sum bytes.Buffer
	if err := res.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "check passed") || !strings.Contains(sum.String(), "ew_add") {
		t.Fatalf("summary:\n%s", sum.String())
	}
}

func TestWholeStepMode(t *testing.T) {
	opt := DefaultOptions("launch-overhead")
	opt.Size, opt.Steps, opt.PerLaunchTiming = "50", 2, false
	res, d, err := fakeRun(t, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	jt, _ := decode(t, res.Trace)
	counts := map[string]int{}
	for _, e := range jt.TraceEvents {
		counts[e.Cat]++
		counts[e.Name]++
	}
	if counts["kernel"] != 0 || counts["cuLaunchKernel"] != 100 || counts["cuEventSynchronize"] != 2 || counts["gpu_user_annotation"] != 2 {
		t.Fatalf("event counts %v", counts)
	}
	if d.calls["Record"] > 2*3*(calibrateTries+2) {
		t.Fatalf("%d event records: whole-step mode must not record per launch", d.calls["Record"])
	}
	if res.Session.Steps[0].GPUNs < 50*1000 {
		t.Fatalf("step GPU time %d for 50 x 1 us kernels", res.Session.Steps[0].GPUNs)
	}
}

// TestAllWorkloadsOnFake runs every workload in event and CUPTI mode: no
// leaks, GPU records and notes, and tracelens's own reader links every GPU
// record to its launch.
func TestAllWorkloadsOnFake(t *testing.T) {
	small := smallSizes()
	for _, cupti := range []bool{false, true} {
		for _, w := range Workloads() {
			opt := DefaultOptions(w.Name)
			opt.Size, opt.Steps = small[w.Name], 2
			res, d, err := fakeRunTimed(t, opt, nil, cupti)
			if err != nil {
				t.Errorf("%s (CUPTI %v): %v", w.Name, cupti, err)
				continue
			}
			if len(d.mem) != 0 || d.pinned != 0 || len(d.events) != 0 {
				t.Errorf("%s leaked: %d buffers, %d pinned, %d events", w.Name, len(d.mem), d.pinned, len(d.events))
			}
			var buf bytes.Buffer
			if err := res.Trace.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			tr, err := ingest.Read(&buf, w.Name, ingest.Options{})
			if err != nil {
				t.Fatalf("%s (CUPTI %v): %v", w.Name, cupti, err)
			}
			for i := range tr.GPU {
				if tr.GPU[i].Launch == trace.None {
					t.Errorf("%s (CUPTI %v): GPU record %d not linked to a launch", w.Name, cupti, i)
				}
			}
			if len(tr.GPU) == 0 || len(res.Session.Notes) == 0 {
				t.Errorf("%s (CUPTI %v): %d GPU records, notes %q", w.Name, cupti, len(tr.GPU), res.Session.Notes)
			}
		}
	}
}

// TestMemcpyRecords: copies become gpu_memcpy events named after their
// memory kinds, with bytes and bandwidth; CUPTI's durations are exact (the
// fake copies at 10 GB/s), events' carry cuEventElapsedTime's rounding.
func TestMemcpyRecords(t *testing.T) {
	for _, cupti := range []bool{false, true} {
		for _, pinned := range []bool{false, true} {
			w, kind := "memcpy-pageable", "Pageable"
			if pinned {
				w, kind = "memcpy-pinned", "Pinned"
			}
			opt := DefaultOptions(w)
			opt.Size, opt.Steps = "64K:1M", 2
			res, _, err := fakeRunTimed(t, opt, nil, cupti)
			if err != nil {
				t.Fatal(err)
			}
			jt, _ := decode(t, res.Trace)
			n := 0
			for _, e := range jt.TraceEvents {
				if e.Cat != "gpu_memcpy" {
					continue
				}
				n++
				b, _ := e.Args["bytes"].(float64)
				if e.Name != "Memcpy HtoD ("+kind+" -> Device)" || b == 0 || e.Args["memory bandwidth (GB/s)"] == nil {
					t.Errorf("%s (CUPTI %v): memcpy event %s %v", w, cupti, e.Name, e.Args)
				}
				if want := float64(int64(b)/10) / 1000; cupti && math.Abs(e.Dur-want) > 1e-9 {
					t.Errorf("%s: memcpy of %v bytes lasts %.3f us, want %.3f", w, b, e.Dur, want)
				}
			}
			if n != 2*3 {
				t.Fatalf("%s (CUPTI %v): %d memcpy records, want 6 (3 sizes x 2 steps)", w, cupti, n)
			}
		}
	}
}

// TestCUDAErrorPaths makes CUDA calls fail at various points: the error names
// the workload, the phase or step and CUDA's error name, and nothing leaks.
func TestCUDAErrorPaths(t *testing.T) {
	cases := []struct {
		method string
		at     int
		want   string
	}{
		{"Alloc", 2, "setup"},
		{"Launch", 1, "warm-up step 0"},
		{"Launch", 9, "ProfilerStep#2"},
		{"Record", 3, "calibrate"},
		{"ElapsedNs", 2, "ProfilerStep#2"},
		{"Kernel", 1, "load kernel"},
		{"Synchronize", 1, "warm-up"},
	}
	for _, c := range cases {
		opt := DefaultOptions("elementwise-chain-unfused")
		opt.Size, opt.Steps, opt.Warmup = "100", 3, 2
		_, d, err := fakeRun(t, opt, func(d *fakeDriver) { d.failOn, d.failAt = c.method, c.at })
		if err == nil {
			t.Errorf("%s#%d: no error", c.method, c.at)
			continue
		}
		var ce *CUDAError
		if !errors.As(err, &ce) || ce.Name != "CUDA_ERROR_LAUNCH_FAILED" {
			t.Errorf("%s#%d: error %v does not carry the CUDA error", c.method, c.at, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "elementwise-chain-unfused") || !strings.Contains(msg, c.want) ||
			!strings.Contains(msg, "CUDA_ERROR_LAUNCH_FAILED") {
			t.Errorf("%s#%d: message %q lacks workload, %q or the error name", c.method, c.at, msg, c.want)
		}
		if len(d.mem) != 0 || len(d.events) != 0 {
			t.Errorf("%s#%d: leaked %d buffers, %d events", c.method, c.at, len(d.mem), len(d.events))
		}
	}
}

func TestCheckCatchesWrongOutput(t *testing.T) {
	// The fake GPU does not run the GEMM: the poisoned output stays NaN.
	opt := DefaultOptions("gemm-naive")
	opt.Check = true
	_, d, err := fakeRun(t, opt, nil)
	if err == nil || !strings.Contains(err.Error(), "check") {
		t.Fatalf("want a failed check, got %v", err)
	}
	if len(d.mem) != 0 {
		t.Fatalf("leaked %d buffers", len(d.mem))
	}
}

func TestBadOptions(t *testing.T) {
	for _, opt := range []Options{
		{Workload: "nope", Steps: 1},
		{Workload: "gemm-naive", Steps: 0},
		{Workload: "gemm-naive", Steps: 1, Size: "12x3"},
		{Workload: "lowrank-noise-fused", Steps: 1, Size: "5"},
		{Workload: "memcpy-pinned", Steps: 1, Size: "1M:64K"},
	} {
		if _, _, err := fakeRun(t, opt, nil); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
}

func TestWriteFileGzip(t *testing.T) {
	opt := DefaultOptions("lowrank-noise-fused")
	opt.Size, opt.Steps = "8", 1
	res, _, err := fakeRun(t, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gz, plain := filepath.Join(dir, "t.json.gz"), filepath.Join(dir, "t.json")
	if err := res.Trace.WriteFile(gz); err != nil {
		t.Fatal(err)
	}
	if err := res.Trace.WriteFile(plain); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	a, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) || !json.Valid(a) {
		t.Fatal("gzip and plain traces differ or are not JSON")
	}
	if err := res.Trace.WriteFile(filepath.Join(dir, "missing", "x.json")); err == nil {
		t.Fatal("writing into a missing folder succeeded")
	}
}

func TestNormalReference(t *testing.T) {
	var sum, sq float64
	const n = 200000
	for i := uint32(0); i < n; i++ {
		v := normalAt(99, i)
		sum += v
		sq += v * v
	}
	mean, sd := sum/n, math.Sqrt(sq/n-(sum/n)*(sum/n))
	if math.Abs(mean) > 0.01 || math.Abs(sd-1) > 0.01 {
		t.Fatalf("normal draws: mean %.4f sd %.4f", mean, sd)
	}
	ref := refNoise(4, 3, 1, 0.5, 7)
	// Antithetic pairs: rows 0 and 1 share B (col 0) and negate A (cols 1..).
	if ref[0] != ref[3] || ref[1] != -ref[4] || ref[2] != -ref[5] {
		t.Fatalf("rows 0/1 not antithetic: %v", ref[:6])
	}
}

func TestLookupAndList(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range Workloads() {
		if seen[w.Name] || w.Summary == "" || w.DefaultSize == "" || w.CheckSize == "" {
			t.Errorf("workload %+v", w)
		}
		seen[w.Name] = true
		if _, err := w.make(w.DefaultSize); err != nil {
			t.Errorf("%s default size: %v", w.Name, err)
		}
		if _, ok := Lookup(w.Name); !ok {
			t.Errorf("Lookup(%s) failed", w.Name)
		}
	}
	if len(KernelsPTX()) == 0 || !strings.Contains(KernelsPTX(), ".entry gemm_naive") {
		t.Fatal("embedded PTX missing")
	}
}

// smallSizes are sizes of every workload small enough for the fake driver.
func smallSizes() map[string]string {
	return map[string]string{"gemm-naive": "8x8x8", "gemm-tiled": "8x8x8", "gemm-library": "8x8x8",
		"lowrank-noise-unfused": "4", "lowrank-noise-fused": "4", "elementwise-chain-unfused": "64",
		"elementwise-chain-fused": "64", "launch-overhead": "3", "memcpy-pageable": "1K:16K", "memcpy-pinned": "1K:16K"}
}
