package capture

// The workloads of small kernels and copies: an elementwise chain, launch
// overhead, pinned and pageable memcpy.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

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
