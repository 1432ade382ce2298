//go:build linux

package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// freshEnv marks the test process inFresh started for one test.
const freshEnv = "TRACELENS_FRESH_TEST"

// inFresh reports whether the test runs in a test process of its own;
// if not, it runs the test again in one (its output logged, its failure
// failing t) and the caller returns. Linux counts in a child's peak RSS
// (ru_maxrss) the memory of the process that forked it (exec keeps the
// old high-water mark), and this package's in-process tests grow the
// test process past the budgets measured here: a fresh one forks small.
func inFresh(t *testing.T) bool {
	t.Helper()
	if os.Getenv(freshEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), freshEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("in a test process of its own:\n%s", out)
	if err != nil {
		t.Fatalf("%s failed in its own process: %v", t.Name(), err)
	}
	return false
}

// runPeak runs the binary with stdin (nil: none) and returns its stderr,
// exit status and peak resident size in bytes, as the kernel counted it
// (rusage's ru_maxrss): the measure --max-memory promises to bound.
func runPeak(t *testing.T, stdin io.Reader, args ...string) (string, int, int64) {
	t.Helper()
	cmd := exec.Command(cliBinary(t), args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = io.Discard, &stderr, stdin
	err := cmd.Run()
	var xe *exec.ExitError
	if err != nil && !errors.As(err, &xe) {
		t.Fatal(err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage")
	}
	if s := stderr.String(); strings.Contains(s, "goroutine ") || strings.Contains(s, "panic:") {
		t.Fatalf("Go panic reached the user:\n%s", s)
	}
	return stderr.String(), cmd.ProcessState.ExitCode(), ru.Maxrss << 10
}

// checkCapped fails unless the run exited 2 naming every want, with its
// peak resident size within 1.25× the budget.
func checkCapped(t *testing.T, name string, budget int64, stderr string, code int, peak int64, want ...string) {
	t.Helper()
	t.Logf("%s: peak RSS %d MB under a budget of %d MB (%.2f×), exit %d: %s", name, peak>>20, budget>>20, float64(peak)/float64(budget), code, strings.TrimSpace(stderr))
	if code != exitUsageOrBad {
		t.Errorf("%s: exit %d, want 2", name, code)
	}
	if peak > budget*5/4 {
		t.Errorf("%s: peak RSS %d MB, more than 1.25× the budget of %d MB", name, peak>>20, budget>>20)
	}
	for _, w := range append(want, "--max-memory") {
		if !strings.Contains(stderr, w) {
			t.Errorf("%s: stderr %q lacks %q", name, stderr, w)
		}
	}
}

// TestMaxMemoryCapsTheProcess: the attacks of issue 27, generated, each
// under --max-memory, exit 2 naming the file, the byte offset or stage,
// with the process's peak RSS (measured by the kernel) within 1.25× the
// budget: a ~10 MB .gz holding one 10 GiB string, an endless string on
// standard input, and a trace whose model fits but whose analysis does
// not (the analysis was not budgeted at all before).
func TestMaxMemoryCapsTheProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it on 400 k kernels")
	}
	if !inFresh(t) {
		return
	}
	const budget = 128 << 20
	dir := t.TempDir()
	gz := filepath.Join(dir, "10GiB-name.json.gz")
	writeStringBomb(t, gz, 10<<30)
	if fi, err := os.Stat(gz); err == nil {
		t.Logf("%s: %d bytes", gz, fi.Size())
	}
	stderr, code, peak := runPeak(t, nil, "top", "--max-memory", "128MB", gz)
	checkCapped(t, "10 GiB string in a .gz", budget, stderr, code, peak, gz, "at byte")

	stderr, code, peak = runPeak(t, newHugeString(-1), "findings", "--max-memory", "128MB", "-")
	checkCapped(t, "endless string on stdin", budget, stderr, code, peak, "at byte")

	kernels := filepath.Join(dir, "kernels.json")
	writeKernelSteps(t, kernels, 400_000, analysisOutgrows)
	stderr, code, peak = runPeak(t, nil, "findings", "--max-memory", "128MB", kernels)
	checkCapped(t, "400 k kernels", budget, stderr, code, peak, kernels)
	stderr, code, peak = runPeak(t, nil, "report", "--max-memory", "128MB", "-o", filepath.Join(dir, "r.html"), kernels)
	checkCapped(t, "400 k kernels, report", budget, stderr, code, peak, kernels)
}

// analysisOutgrows is the step interval (kernels) at which the analysis
// of 400 k kernels outgrows 128 MB while their model fits: a step every
// hundred kernels fits since the analysis keeps its per-kernel facts
// compact (issue 27), and a step every ten since it reuses its per-step
// storage (peak 1.13-1.15× the budget, exit 0), so the budget tests put
// a step every seven, whose per-step figures and ledger take the
// analysis past it.
const analysisOutgrows = 7

// writeStringBomb writes a .json.gz whose one kernel's name is n bytes
// of 'a': one gzip member of 1 MiB of 'a' repeated (a multi-member gzip
// file is one stream to every reader), so 10 GiB cost ~10 MB and no
// compressing time.
func writeStringBomb(t *testing.T, path string, n int64) {
	t.Helper()
	member := func(s []byte) []byte {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(s)
		zw.Close()
		return b.Bytes()
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	w.Write(member([]byte(`{"traceEvents":[{"ph":"X","cat":"kernel","ts":1,"dur":1,"pid":0,"tid":7,"name":"`)))
	mib := member(bytes.Repeat([]byte("a"), 1<<20))
	for range n >> 20 {
		w.Write(mib)
	}
	w.Write(member([]byte(`"}]}`)))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// writeKernelTrace writes n GPU kernels (a dozen names, ProfilerStep
// annotations every hundred), the shape of fixtures/gen -class kernels.
func writeKernelTrace(t *testing.T, path string, n int) {
	t.Helper()
	writeKernelSteps(t, path, n, 100)
}

// writeKernelSteps is writeKernelTrace with a step every `every` kernels.
func writeKernelSteps(t *testing.T, path string, n, every int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprint(w, `{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","computeMajor":9,"computeMinor":0,"numSms":132}],"traceEvents":[`)
	names := []string{"ampere_sgemm_128x64_tn", "triton_poi_fused_add_mul_0", "void at::native::reduce_kernel<512, 1>()",
		"ncclDevKernel_AllReduce_Sum_f32_RING_LL", "flash_fwd_kernel", "void at::native::vectorized_elementwise_kernel<4>()"}
	ts := int64(1_000_000)
	for i := range n {
		if i%every == 0 {
			fmt.Fprintf(w, `{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%d,"dur":%d},`+"\n", i/every, ts, 3*every)
		}
		fmt.Fprintf(w, `{"ph":"X","cat":"kernel","name":%q,"pid":0,"tid":7,"ts":%d,"dur":2,"args":{"stream":7,"correlation":%d}},`+"\n", names[(i*7+i/100)%len(names)], ts, i+1)
		ts += 3
	}
	fmt.Fprintf(w, `{"ph":"i","cat":"Trace","name":"end","pid":0,"tid":7,"ts":%d,"s":"t"}]}`, ts)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestMaxMemoryTenMillionKernels is issue 27's 10 M-kernel case (a
// 1.6 GB JSON; `findings` on it peaked at 5.6 GB under a 2 GB budget and
// exited 0): under 2 GB it now stops within 1.25× the budget. It takes
// minutes and disk, so it runs only with TRACELENS_BIG=1.
func TestMaxMemoryTenMillionKernels(t *testing.T) {
	if testing.Short() || os.Getenv("TRACELENS_BIG") == "" {
		t.Skip("10 M kernels: set TRACELENS_BIG=1")
	}
	const budget = 2 << 30
	path := filepath.Join(t.TempDir(), "10M.json")
	writeKernelTrace(t, path, 10_000_000)
	stderr, code, peak := runPeak(t, nil, "findings", "--max-memory", "2GB", path)
	if code == exitOK {
		t.Logf("10 M kernels: fits, peak RSS %d MB under a budget of %d MB (%.2f×)", peak>>20, budget>>20, float64(peak)/float64(budget))
		if peak > budget*5/4 {
			t.Errorf("peak RSS %d MB, more than 1.25× the budget", peak>>20)
		}
		return
	}
	checkCapped(t, "10 M kernels", budget, stderr, code, peak, path)
}

// TestReportRSSAgainstTop is issue 27's analysis-memory harness: the
// peak RSS of report against top's on a kernel-dense trace (1 M kernels,
// 148 MB; TRACELENS_KERNELS sets another count), both measured by the
// kernel. The target is 1.5×, and the test fails past it; it was
// 3.7× (782 MB against 204 MB), 2.8× (560 MB) with the analysis under a
// soft limit and its busy intervals sized once, 1.4-1.45× (~260 MB)
// with the facts kept compact and the limit at 1.5× the model, but up to
// 1.76-1.98× on 10 M kernels (its limit relaxed, later its analyzers
// side by side); it is 1.23-1.38× on 1 M to 10 M kernels since the
// analysis reuses its per-step storage, holds 1.3-1.35× the model at its
// peak and its limit is set from the model measured by a collection. It
// runs only with TRACELENS_BIG=1.
func TestReportRSSAgainstTop(t *testing.T) {
	if testing.Short() || os.Getenv("TRACELENS_BIG") == "" {
		t.Skip("1 M kernels: set TRACELENS_BIG=1")
	}
	if !inFresh(t) {
		return
	}
	n := 1_000_000
	if s := os.Getenv("TRACELENS_KERNELS"); s != "" {
		fmt.Sscan(s, &n)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "kernels.json")
	writeKernelTrace(t, path, n)
	_, code, top := runPeak(t, nil, "top", path)
	if code != exitOK {
		t.Fatalf("top: exit %d", code)
	}
	_, code, rep := runPeak(t, nil, "report", "-o", filepath.Join(dir, "r.md"), path)
	if code != exitOK {
		t.Fatalf("report: exit %d", code)
	}
	ratio := float64(rep) / float64(top)
	t.Logf("%d kernels: top %d MB, report %d MB peak RSS (%.2f×; target 1.5×)", n, top>>20, rep>>20, ratio)
	if ratio > 1.5 {
		t.Errorf("report takes %.2f× top's RSS", ratio)
	}
}
