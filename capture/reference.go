package capture

import (
	"fmt"
	"math"
)

// CPU references for --check. They compute in float64 what the kernels
// compute in float32.

// refLinear is y[b, o] = act(sum_k x[b, k] w[o, k] + bias[o]).
func refLinear(x, w, bias []float32, B, K, O int, relu bool) []float64 {
	y := make([]float64, B*O)
	for b := 0; b < B; b++ {
		for o := 0; o < O; o++ {
			acc := float64(bias[o])
			for k := 0; k < K; k++ {
				acc += float64(x[b*K+k]) * float64(w[o*K+k])
			}
			if relu && acc < 0 {
				acc = 0
			}
			y[b*O+o] = acc
		}
	}
	return y
}

// hash32 is the kernels' counter-based generator (lowbias32).
func hash32(x uint32) uint32 {
	x ^= x >> 16
	x *= 0x7feb352d
	x ^= x >> 15
	x *= 0x846ca68b
	x ^= x >> 16
	return x
}

// normalAt is the kernels' normal_at: draw i of stream seed.
func normalAt(seed, i uint32) float64 {
	h1 := hash32(i*2 + seed*0x9E3779B9)
	h2 := hash32(i*2 + 1 + seed*0x9E3779B9)
	u1 := float64(float32(float64((h1>>8)+1) * (1.0 / 16777217.0)))
	u2 := float64(float32(float64(h2>>8) * (1.0 / 16777216.0)))
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(6.283185307*u2)
}

// refNoise is one layer's antithetic low-rank noise, [P, D].
func refNoise(P, D, in int, sigma float32, seed uint32) []float64 {
	out := make([]float64, P*D)
	for p := 0; p < P; p++ {
		for j := 0; j < D; j++ {
			v := normalAt(seed, uint32((p/2)*D+j))
			if j >= in {
				v *= float64(sigma)
				if p%2 == 1 {
					v = -v
				}
			}
			out[p*D+j] = v
		}
	}
	return out
}

// refSinCos is y = sin(x) + cos(x).
func refSinCos(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = math.Sin(float64(v)) + math.Cos(float64(v))
	}
	return y
}

// relError is ‖got − want‖ / ‖want‖; NaN anywhere (an unwritten, poisoned
// output) makes it +Inf.
func relError(got []float32, want []float64) (float64, error) {
	if len(got) != len(want) {
		return 0, fmt.Errorf("output has %d values, reference %d", len(got), len(want))
	}
	var num, den float64
	for i, g := range got {
		if math.IsNaN(float64(g)) || math.IsInf(float64(g), 0) {
			return math.Inf(1), nil
		}
		d := float64(g) - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	if den == 0 {
		return math.Sqrt(num), nil
	}
	return math.Sqrt(num / den), nil
}

// checkClose fails when the relative error exceeds tol.
func checkClose(what string, got []float32, want []float64, tol float64) error {
	e, err := relError(got, want)
	if err != nil {
		return fmt.Errorf("check %s: %w", what, err)
	}
	if !(e <= tol) {
		return fmt.Errorf("check %s: relative error %.3g exceeds %.1g (or an output was not written)", what, e, tol)
	}
	return nil
}
