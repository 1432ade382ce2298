package capture

// The GEMM and low-rank MLP workloads: a naive or tiled kernel against
// the fused one, for custom-gemm and fusion.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

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
