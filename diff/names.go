package diff

import (
	"regexp"
	"strings"
)

var (
	// tileRE matches tile, warp and cluster shapes (128x128x8, 1x2) and
	// pipeline depths (stage3): what an autotuner or cuBLAS heuristic
	// changes between runs of the same algorithm.
	tileRE = regexp.MustCompile(`\d+(?:x\d+)+|stage\d+`)
	// hashRE matches hex hashes Inductor and Triton put into kernel names.
	hashRE = regexp.MustCompile(`(?:^|_)[0-9a-f]{8,}(?:_|$)`)
	// suffixRE matches the numeric suffix Inductor (triton_poi_fused_add_0)
	// and XLA (loop_add_fusion_3) give the n-th kernel of the same shape.
	suffixRE   = regexp.MustCompile(`_\d+$`)
	underRunRE = regexp.MustCompile(`_{2,}`)
)

// NormalizeKernelName reduces a kernel name to what stays the same when a
// kernel is recompiled, retuned or instantiated for other types, so that
// the "same" kernel in two runs pairs up even when its exact name differs:
//
//	void at::native::elementwise_kernel<128, 2, …MulFunctor<float>…>(int, …) → at::native::elementwise_kernel
//	triton_poi_fused_add_mul_0                                           → triton_poi_fused_add_mul
//	sm80_xmma_gemm_f32f32_…_tilesize32x32x8_stage3_warpsize1x2x1_…       → sm80_xmma_gemm_f32f32_…_tilesize_stage_warpsize_…
//	loop_add_fusion_3                                                    → loop_add_fusion
//
// Template arguments, parameter lists, return types, hex hashes, numeric
// suffixes and tile shapes are removed. It is only a key for pairing names
// that did not match exactly; tables show the real names.
func NormalizeKernelName(name string) string {
	s := stripSignature(strings.TrimSpace(name))
	s = tileRE.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "stage") {
			return "stage"
		}
		return ""
	})
	for {
		t := hashRE.ReplaceAllStringFunc(s, func(m string) string {
			if !strings.ContainsAny(m, "0123456789") {
				return m // a word like "deadbeef", not a hash
			}
			return "_"
		})
		if t == s {
			break
		}
		s = t
	}
	s = suffixRE.ReplaceAllString(s, "")
	s = underRunRE.ReplaceAllString(s, "_")
	s = strings.Trim(s, "_")
	if s == "" {
		return name
	}
	return s
}

// stripSignature keeps the qualified function name of a demangled C++
// signature: no return type, template arguments or parameters. Names that
// are not signatures come back unchanged.
func stripSignature(name string) string {
	if !strings.ContainsAny(name, "<(") {
		return name
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '<':
			depth++
		case c == '>':
			if depth > 0 {
				depth--
			}
		case depth > 0:
		case c == '(' && strings.HasPrefix(name[i:], "(anonymous namespace)"):
			i += len("(anonymous namespace)") - 1
			b.WriteString("(anonymous namespace)")
		case c == '(':
			// The parameter list: the name is complete.
			return lastWord(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return lastWord(b.String())
}

// lastWord drops a return type ("void f" → "f"; "std::enable_if::type
// internal::gemvx::kernel" → "internal::gemvx::kernel").
func lastWord(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "(anonymous namespace)", "(anonymous_namespace)")
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		s = s[i+1:]
	}
	return strings.ReplaceAll(s, "(anonymous_namespace)", "(anonymous namespace)")
}
