package capture

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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

// ------------------------------------------------------------------ GEMM

type gemmVariant int

const (
	gemmNaive gemmVariant = iota
	gemmTiled
	gemmLibrary
)

type gemmWork struct {
	v          gemmVariant
	B, K, O    int
	x, w, b, y DevicePtr
	hx, hw, hb []float32
}

func newGemm(v gemmVariant, size string) (workload, error) {
	d, err := parseDims(size, 3)
	if err != nil {
		return nil, err
	}
	return &gemmWork{v: v, B: d[0], K: d[1], O: d[2]}, nil
}

func (g *gemmWork) setup(s *Session, rng *rand.Rand) error {
	g.hx = randFloats(rng, g.B*g.K, -1, 1)
	sc := float32(1 / math.Sqrt(float64(g.K)))
	g.hw = randFloats(rng, g.O*g.K, -sc, sc)
	g.hb = randFloats(rng, g.O, -sc, sc)
	var err error
	for _, a := range []struct {
		p *DevicePtr
		n int
	}{{&g.x, g.B * g.K}, {&g.w, g.O * g.K}, {&g.b, g.O}, {&g.y, g.B * g.O}} {
		if *a.p, err = s.AllocFloats(a.n); err != nil {
			return err
		}
	}
	if err := s.Upload(g.x, g.hx); err != nil {
		return err
	}
	if err := s.Upload(g.w, g.hw); err != nil {
		return err
	}
	if err := s.Upload(g.b, g.hb); err != nil {
		return err
	}
	return s.Upload(g.y, nanFloats(g.B*g.O)) // poison: every output must be written
}

func (g *gemmWork) step(s *Session) error {
	B, K, O := int32(g.B), int32(g.K), int32(g.O)
	return s.Annotate("linear_relu", func() error {
		switch g.v {
		case gemmNaive:
			k, err := s.Kernel("gemm_naive")
			if err != nil {
				return err
			}
			return s.Op("capture::linear_relu_naive", func() error {
				return s.Launch(k, Dim3{ceilDiv(g.O, 16), ceilDiv(g.B, 16), 1}, Dim3{16, 16, 1}, 0, g.x, g.w, g.b, g.y, B, K, O, int32(1))
			})
		case gemmTiled:
			k, err := s.Kernel("gemm_tiled")
			if err != nil {
				return err
			}
			return s.Op("capture::linear_relu_tiled", func() error {
				return s.Launch(k, Dim3{ceilDiv(g.O, 64), ceilDiv(g.B, 64), 1}, Dim3{16, 16, 1}, 0, g.x, g.w, g.b, g.y, B, K, O, int32(1))
			})
		default:
			k, err := s.Kernel("bias_relu")
			if err != nil {
				return err
			}
			// Row-major y[B,O] = x[B,K]·w[O,K]ᵀ is column-major
			// yᵀ[O,B] = op(w)ᵀ·x: w transposed, x as is.
			if err := s.Op("capture::mm", func() error {
				return s.LibrarySgemm(true, false, g.O, g.B, g.K, g.w, g.K, g.x, g.K, g.y, g.O)
			}); err != nil {
				return err
			}
			blocks := min(ceilDiv(g.B*g.O, 256), 32*max(s.Device().NumSms, 1))
			return s.Op("capture::bias_relu_", func() error {
				return s.Launch(k, Dim3{blocks, 1, 1}, Dim3{256, 1, 1}, 0, g.y, g.b, B, O)
			})
		}
	})
}

func (g *gemmWork) verify(s *Session) error {
	got := make([]float32, g.B*g.O)
	if err := s.Download(got, g.y); err != nil {
		return err
	}
	return checkClose(fmt.Sprintf("linear+relu %dx%dx%d", g.B, g.K, g.O), got, refLinear(g.hx, g.hw, g.hb, g.B, g.K, g.O, true), 1e-4)
}

func (g *gemmWork) notes(s *Session) []string {
	flop := 2 * float64(g.B) * float64(g.K) * float64(g.O)
	var total int64
	var out []string
	// The library's kernels: one record named after the call in event
	// mode, cuBLAS's own kernels under CUPTI.
	names := []string{"gemm_naive", "gemm_tiled"}
	for _, o := range s.Ops {
		if o.Cat == "kernel" && o.Name != "bias_relu" && !slices.Contains(names, o.Name) {
			names = append(names, o.Name)
		}
	}
	for _, name := range append(names, "bias_relu") {
		if m, n, ok := medianOp(s, name); ok {
			total += m
			short := name
			if len(short) > 34 {
				short = short[:33] + "…"
			}
			line := fmt.Sprintf("%-34s median %10s us over %d", short, us(m), n)
			if name != "bias_relu" {
				line += fmt.Sprintf(", %.0f GFLOP/s", flop/float64(m))
			}
			out = append(out, line)
		}
	}
	if total > 0 {
		out = append(out, fmt.Sprintf("%-34s %17s us (%dx%dx%d, %.2f GFLOP)", "layer total (sum of medians)", us(total), g.B, g.K, g.O, flop/1e9))
	}
	return out
}

// -------------------------------------------------------- low-rank noise

// lowrankLayers are the eggroll MLP's layers (in, out), rank 1.
func lowrankLayers() [3][2]int { return [3][2]int{{64, 256}, {256, 256}, {256, 8}} }

const lowrankSigma = 0.02

type lowrankWork struct {
	fused bool
	P     int
	z     [3]DevicePtr
	out   [3]DevicePtr
}

func newLowrank(fused bool, size string) (workload, error) {
	d, err := parseDims(size, 1)
	if err != nil {
		return nil, err
	}
	if d[0]%2 != 0 {
		return nil, fmt.Errorf("size %q: the population must be even (antithetic pairs)", size)
	}
	return &lowrankWork{fused: fused, P: d[0]}, nil
}

func lowrankSeed(layer int) uint32 { return uint32(1234 + layer*10007) }

func (l *lowrankWork) setup(s *Session, _ *rand.Rand) error {
	for i, ly := range lowrankLayers() {
		D := ly[0] + ly[1]
		var err error
		if l.z[i], err = s.AllocFloats(l.P / 2 * D); err != nil {
			return err
		}
		if l.out[i], err = s.AllocFloats(l.P * D); err != nil {
			return err
		}
		if err := s.Upload(l.out[i], nanFloats(l.P*D)); err != nil {
			return err
		}
	}
	return nil
}

func (l *lowrankWork) step(s *Session) error {
	names := []string{"noise_rng", "noise_repeat", "noise_scale", "noise_sign", "noise_fused"}
	ks := map[string]*Kernel{}
	for _, n := range names {
		k, err := s.Kernel(n)
		if err != nil {
			return err
		}
		ks[n] = k
	}
	P := int32(l.P)
	for i, ly := range lowrankLayers() {
		in, D := int32(ly[0]), int32(ly[0]+ly[1])
		n := l.P * int(D)
		grid, blk := Dim3{ceilDiv(n, 256), 1, 1}, Dim3{256, 1, 1}
		seed := lowrankSeed(i)
		err := s.Annotate(fmt.Sprintf("layer%d/lowrank_noise", i), func() error {
			if l.fused {
				return s.Op("capture::lowrank_noise_fused", func() error {
					return s.Launch(ks["noise_fused"], grid, blk, 0, l.out[i], P, D, in, float32(lowrankSigma), seed)
				})
			}
			half := l.P / 2 * int(D)
			steps := []struct {
				op   string
				k    string
				grid Dim3
				args []any
			}{
				{"capture::randn", "noise_rng", Dim3{ceilDiv(half, 256), 1, 1}, []any{l.z[i], int32(half), seed}},
				{"capture::repeat_interleave", "noise_repeat", grid, []any{l.out[i], l.z[i], P, D}},
				{"capture::mul_sigma", "noise_scale", grid, []any{l.out[i], P, D, in, float32(lowrankSigma)}},
				{"capture::mul_sign", "noise_sign", grid, []any{l.out[i], P, D, in}},
			}
			for _, st := range steps {
				if err := s.Op(st.op, func() error { return s.Launch(ks[st.k], st.grid, blk, 0, st.args...) }); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (l *lowrankWork) verify(s *Session) error {
	for i, ly := range lowrankLayers() {
		D := ly[0] + ly[1]
		got := make([]float32, l.P*D)
		if err := s.Download(got, l.out[i]); err != nil {
			return err
		}
		if err := checkClose(fmt.Sprintf("layer %d noise", i), got, refNoise(l.P, D, ly[0], lowrankSigma, lowrankSeed(i)), 1e-5); err != nil {
			return err
		}
	}
	return nil
}

func (l *lowrankWork) notes(s *Session) []string {
	var out []string
	var busy int64
	for _, n := range []string{"noise_rng", "noise_repeat", "noise_scale", "noise_sign", "noise_fused"} {
		if m, c, ok := medianOp(s, n); ok {
			out = append(out, fmt.Sprintf("%-14s median %8s us over %d", n, us(m), c))
		}
	}
	for _, o := range s.Ops {
		busy += o.DurNs
	}
	if len(s.Steps) > 0 {
		out = append(out, stepNotes(s, busy)...)
	}
	return out
}

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

// ----------------------------------------------------- elementwise chain

type ewWork struct {
	fused      bool
	n          int
	x, a, b, y DevicePtr
	hx         []float32
}

func newElementwise(fused bool, size string) (workload, error) {
	d, err := parseDims(size, 1)
	if err != nil {
		return nil, err
	}
	if d[0] > math.MaxInt32 {
		return nil, fmt.Errorf("size %q: at most %d elements", size, math.MaxInt32)
	}
	return &ewWork{fused: fused, n: d[0]}, nil
}

func (e *ewWork) setup(s *Session, rng *rand.Rand) error {
	e.hx = randFloats(rng, e.n, -10, 10)
	var err error
	for _, p := range []*DevicePtr{&e.x, &e.a, &e.b, &e.y} {
		if *p, err = s.AllocFloats(e.n); err != nil {
			return err
		}
	}
	if err := s.Upload(e.x, e.hx); err != nil {
		return err
	}
	return s.Upload(e.y, nanFloats(e.n))
}

func (e *ewWork) step(s *Session) error {
	n := int32(e.n)
	grid, blk := Dim3{ceilDiv(e.n, 256), 1, 1}, Dim3{256, 1, 1}
	return s.Annotate("sin_plus_cos", func() error {
		if e.fused {
			k, err := s.Kernel("ew_fused")
			if err != nil {
				return err
			}
			return s.Op("capture::sin_cos_add_fused", func() error { return s.Launch(k, grid, blk, 0, e.y, e.x, n) })
		}
		chain := []struct {
			op, k string
			args  []any
		}{
			{"capture::sin", "ew_sin", []any{e.a, e.x, n}},
			{"capture::cos", "ew_cos", []any{e.b, e.x, n}},
			{"capture::add", "ew_add", []any{e.y, e.a, e.b, n}},
		}
		for _, c := range chain {
			k, err := s.Kernel(c.k)
			if err != nil {
				return err
			}
			if err := s.Op(c.op, func() error { return s.Launch(k, grid, blk, 0, c.args...) }); err != nil {
				return err
			}
		}
		return nil
	})
}

func (e *ewWork) verify(s *Session) error {
	got := make([]float32, e.n)
	if err := s.Download(got, e.y); err != nil {
		return err
	}
	return checkClose(fmt.Sprintf("sin+cos of %d elements", e.n), got, refSinCos(e.hx), 1e-5)
}

func (e *ewWork) notes(s *Session) []string {
	var out []string
	var busy int64
	for _, k := range []string{"ew_sin", "ew_cos", "ew_add", "ew_fused"} {
		if m, c, ok := medianOp(s, k); ok {
			busy += m
			// Bytes moved: read x (and a, b for add), write one output.
			rw := 2.0
			if k == "ew_add" {
				rw = 3
			}
			out = append(out, fmt.Sprintf("%-9s median %9s us over %d, %.0f GB/s", k, us(m), c, rw*4*float64(e.n)/float64(m)))
		}
	}
	if busy > 0 {
		out = append(out, fmt.Sprintf("chain total (sum of medians) %s us", us(busy)))
	}
	return append(out, stepNotes(s, 0)...)
}

// ------------------------------------------------------- launch overhead

type launchWork struct{ n int }

func newLaunchOverhead(size string) (workload, error) {
	d, err := parseDims(size, 1)
	if err != nil {
		return nil, err
	}
	return &launchWork{n: d[0]}, nil
}

func (l *launchWork) setup(*Session, *rand.Rand) error { return nil }

func (l *launchWork) step(s *Session) error {
	k, err := s.Kernel("empty")
	if err != nil {
		return err
	}
	return s.Annotate("empty_kernels", func() error {
		for i := 0; i < l.n; i++ {
			if err := s.Launch(k, Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0); err != nil {
				return err
			}
		}
		return nil
	})
}

func (l *launchWork) verify(s *Session) error { return s.Sync() }

func (l *launchWork) notes(s *Session) []string {
	var host, call, callMed, gpu []int64
	for _, st := range s.Steps {
		host = append(host, st.HostNs/int64(l.n))
		call = append(call, st.LaunchCallNs/int64(max(st.Launches, 1)))
		callMed = append(callMed, st.LaunchCallMedianNs)
		gpu = append(gpu, st.GPUNs/int64(l.n))
	}
	out := []string{fmt.Sprintf("per launch (median over steps): host step time %s us, inside cuLaunchKernel %s us (mean; median call %s us), GPU time %s us",
		us(medianI64(host)), us(medianI64(call)), us(medianI64(callMed)), us(medianI64(gpu)))}
	if m, c, ok := medianOp(s, "empty"); ok {
		out = append(out, fmt.Sprintf("empty kernel as timed on the GPU: median %s us over %d", us(m), c))
	}
	return out
}

// ----------------------------------------------------------------- memcpy

type memcpyWork struct {
	pinned bool
	sizes  []int64
	src    []byte
	dst    DevicePtr
}

func parseBytes(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive byte count (K, M, G suffixes allowed)", s)
	}
	return v * mult, nil
}

func newMemcpy(pinned bool, size string) (workload, error) {
	lo, hi, ok := strings.Cut(size, ":")
	if !ok {
		hi = lo
	}
	a, err := parseBytes(lo)
	if err != nil {
		return nil, fmt.Errorf("size %q: %w", size, err)
	}
	b, err := parseBytes(hi)
	if err != nil {
		return nil, fmt.Errorf("size %q: %w", size, err)
	}
	if b < a {
		return nil, fmt.Errorf("size %q: MIN is larger than MAX", size)
	}
	w := &memcpyWork{pinned: pinned}
	for n := a; n <= b; n *= 4 {
		w.sizes = append(w.sizes, n)
	}
	return w, nil
}

func sizeName(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

func (m *memcpyWork) setup(s *Session, rng *rand.Rand) error {
	maxN := m.sizes[len(m.sizes)-1]
	var err error
	if m.pinned {
		if m.src, err = s.AllocHost(maxN); err != nil {
			return err
		}
	} else {
		m.src = make([]byte, maxN)
	}
	for i := range m.src {
		m.src[i] = byte(rng.Uint32())
	}
	m.dst, err = s.Alloc(maxN)
	return err
}

func (m *memcpyWork) step(s *Session) error {
	for _, n := range m.sizes {
		err := s.Annotate("HtoD "+sizeName(n), func() error {
			return s.Op("capture::copy_", func() error { return s.CopyHtoD(m.dst, m.src[:n], m.pinned) })
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *memcpyWork) verify(s *Session) error {
	n := m.sizes[len(m.sizes)-1]
	got := make([]byte, n)
	if err := s.Sync(); err != nil {
		return err
	}
	if err := s.d.CopyDtoH(got, m.dst); err != nil {
		return fmt.Errorf("read back %d bytes: %w", n, err)
	}
	for i := range got {
		if got[i] != m.src[i] {
			return fmt.Errorf("check copy of %d bytes: byte %d differs", n, i)
		}
	}
	return nil
}

func (m *memcpyWork) notes(s *Session) []string {
	kind := "pageable"
	if m.pinned {
		kind = "pinned"
	}
	out := []string{fmt.Sprintf("%-9s %12s %12s  (%s, medians over steps)", "size", "GPU us", "GB/s", kind)}
	for _, n := range m.sizes {
		var d []int64
		for _, o := range s.Ops {
			if o.Bytes == n {
				d = append(d, o.DurNs)
			}
		}
		if len(d) == 0 {
			continue
		}
		med := medianI64(d)
		out = append(out, fmt.Sprintf("%-9s %12s %12.2f", sizeName(n), us(med), float64(n)/float64(max(med, 1))))
	}
	return out
}
