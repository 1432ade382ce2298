package capture

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// workload is one runnable workload at one size.
type workload interface {
	// setup allocates and uploads inputs (untraced).
	setup(s *Session, rng *rand.Rand) error
	// step issues one step's GPU work.
	step(s *Session) error
	// verify compares the device's output with a CPU reference.
	verify(s *Session) error
	// notes are result lines computed from the recorded steps.
	notes(s *Session) []string
}

// Workload describes a workload `tracelens capture` can run.
type Workload struct {
	// Name is what the command line takes, e.g. "gemm-naive".
	Name string
	// Summary is one line for --list.
	Summary string
	// DefaultSize is the --size used when none is given, from the
	// write-ups; SizeHelp says what the size means.
	DefaultSize string
	SizeHelp    string
	// CheckSize is the small size --check verifies at.
	CheckSize string
	// Copies: the workload's steps copy memory (CUPTI records copies only
	// for such workloads, see ForWorkload).
	Copies bool
	// Library: the workload's steps call a library through the runtime
	// API (cuBLAS).
	Library bool
	make    func(size string) (workload, error)
}

// Workloads lists every workload, in --list order.
func Workloads() []Workload {
	gemm := func(name, summary string, v gemmVariant) Workload {
		return Workload{Name: name, Summary: summary, DefaultSize: "1024x784x2048", SizeHelp: "BATCHxINxOUT",
			CheckSize: "67x100x93", Library: v == gemmLibrary, make: func(size string) (workload, error) { return newGemm(v, size) }}
	}
	lowrank := func(name, summary string, fused bool) Workload {
		return Workload{Name: name, Summary: summary, DefaultSize: "2048", SizeHelp: "POPULATION (even)", CheckSize: "16",
			make: func(size string) (workload, error) { return newLowrank(fused, size) }}
	}
	ew := func(name, summary string, fused bool) Workload {
		return Workload{Name: name, Summary: summary, DefaultSize: "16777216", SizeHelp: "ELEMENTS", CheckSize: "100003",
			make: func(size string) (workload, error) { return newElementwise(fused, size) }}
	}
	mc := func(name, summary string, pinned bool) Workload {
		return Workload{Name: name, Summary: summary, DefaultSize: "64K:256M", SizeHelp: "MIN:MAX bytes (powers of 4 between)", CheckSize: "64K:1M",
			Copies: true, make: func(size string) (workload, error) { return newMemcpy(pinned, size) }}
	}
	return []Workload{
		gemm("gemm-naive", "Linear 784->2048 + ReLU, batch 1024: one thread per output, serial dot product (the naive-GEMM write-up's kernel)", gemmNaive),
		gemm("gemm-tiled", "the same layer: shared-memory tiled, 4x4 register-blocked GEMM with ReLU epilogue", gemmTiled),
		gemm("gemm-library", "the same layer: cuBLAS sgemm (dlopen libcublas.so.13/.12/.11) + separate bias+ReLU kernel", gemmLibrary),
		lowrank("lowrank-noise-unfused", "ES noise for 3 layers, population 2048: rng -> repeat -> scale -> sign, 4 kernels a layer", false),
		lowrank("lowrank-noise-fused", "the same noise, one fused kernel a layer", true),
		ew("elementwise-chain-unfused", "y = sin(x) + cos(x) as 3 kernels (sin, cos, add)", false),
		ew("elementwise-chain-fused", "y = sin(x) + cos(x) as 1 fused kernel", true),
		{Name: "launch-overhead", Summary: "N empty kernels back to back (compare with --no-per-launch-timing)", DefaultSize: "1000",
			SizeHelp: "KERNELS per step", CheckSize: "10", make: newLaunchOverhead},
		mc("memcpy-pageable", "host-to-device copies from pageable memory, 64 KiB to 256 MiB", false),
		mc("memcpy-pinned", "host-to-device copies from pinned memory, 64 KiB to 256 MiB", true),
	}
}

// Lookup finds a workload by name.
func Lookup(name string) (Workload, bool) {
	for _, w := range Workloads() {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}

func parseDims(size string, n int) ([]int, error) {
	parts := strings.Split(size, "x")
	if len(parts) != n {
		return nil, fmt.Errorf("size %q: want %d numbers separated by x", size, n)
	}
	dims := make([]int, n)
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("size %q: %q is not a positive integer", size, p)
		}
		dims[i] = v
	}
	return dims, nil
}

func randFloats(rng *rand.Rand, n int, lo, hi float32) []float32 {
	f := make([]float32, n)
	for i := range f {
		f[i] = lo + (hi-lo)*rng.Float32()
	}
	return f
}

func nanFloats(n int) []float32 {
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(math.NaN())
	}
	return f
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// median of the durations of ops with the given name; ok is false if none.
func medianOp(s *Session, name string) (ns int64, n int, ok bool) {
	var d []int64
	for _, o := range s.Ops {
		if o.Name == name {
			d = append(d, o.DurNs)
		}
	}
	if len(d) == 0 {
		return 0, 0, false
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	m := d[len(d)/2]
	if len(d)%2 == 0 {
		m = (d[len(d)/2-1] + d[len(d)/2]) / 2
	}
	return m, len(d), true
}

func us(ns int64) string { return strconv.FormatFloat(float64(ns)/1e3, 'f', 3, 64) }

// stepNotes summarizes steps: median host and GPU span, launches, and the
// GPU's busy share.
func stepNotes(s *Session, busy int64) []string {
	var host, wall, gpu []int64
	launches := 0
	for _, st := range s.Steps {
		host = append(host, st.HostNs)
		wall = append(wall, st.WallNs)
		gpu = append(gpu, st.GPUNs)
		launches += st.Launches
	}
	var gsum int64
	for _, g := range gpu {
		gsum += g
	}
	line := fmt.Sprintf("per step: %d launches, host issue %s us, wall %s us, GPU span %s us (medians)",
		launches/len(s.Steps), us(medianI64(host)), us(medianI64(wall)), us(medianI64(gpu)))
	if busy > 0 && gsum > 0 {
		line += fmt.Sprintf(", GPU busy %s us (%.0f%% of span)", us(busy/int64(len(s.Steps))), 100*float64(busy)/float64(gsum))
	}
	return []string{line}
}

func medianI64(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	c := append([]int64(nil), v...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	if len(c)%2 == 0 {
		return (c[len(c)/2-1] + c[len(c)/2]) / 2
	}
	return c[len(c)/2]
}
