package analyze

import (
	"strings"
	"unicode/utf8"
)

// ShortKernelName turns a demangled C++ kernel name into what an engineer
// would call it: the kernel function plus the functor or op that tells
// instances apart, e.g.
//
//	void at::native::elementwise_kernel<128, 2, ...MulFunctor<float> >...(int, ...)
//	  → elementwise_kernel<BinaryFunctor, MulFunctor, float>
//
// Names that are not C++ signatures (cuBLAS sm80_xmma_*, nvjet_*, Triton
// and XLA kernels) come back unchanged. The full name is always kept
// elsewhere (JSON, details views); this is for tables.
func ShortKernelName(name string) string {
	if !strings.ContainsAny(name, "<(") {
		return name
	}
	// Find the end of the function name: the first depth-0 '(' that starts
	// the parameter list, skipping template arguments.
	depth := 0
	paramStart := len(name)
	lastSpace := -1
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		case '(':
			if depth == 0 && !strings.HasSuffix(name[:i], "anonymous namespace") && !strings.HasSuffix(name[:i], "operator") {
				// "(anonymous namespace)" is part of a qualified name.
				if strings.HasPrefix(name[i:], "(anonymous namespace)") {
					i += len("(anonymous namespace)") - 1
					continue
				}
				paramStart = i
			}
		case ' ':
			if depth == 0 {
				lastSpace = i
			}
		}
		if paramStart != len(name) {
			break
		}
	}
	sig := name[:paramStart]
	if lastSpace >= 0 && lastSpace < paramStart {
		sig = name[lastSpace+1 : paramStart] // drop the return type
	}
	tmpl := ""
	qual := sig
	if lt := strings.IndexByte(sig, '<'); lt >= 0 {
		qual, tmpl = sig[:lt], sig[lt:]
	}
	parts := strings.Split(qual, "::")
	base := parts[len(parts)-1]
	if base == "" {
		// Not a C++ signature after all: "Memset (Device)", "Memcpy HtoD
		// (Pageable -> Device)".
		return name
	}
	if (base == "kernel" || base == "Kernel") && len(parts) > 1 {
		base = parts[len(parts)-2] + "::" + base
	}
	hints := kernelHints(tmpl+name[paramStart:], base)
	if len(hints) == 0 {
		return base
	}
	return base + "<" + strings.Join(hints, ", ") + ">"
}

// kernelHints picks the identifiers inside template arguments that tell
// one instantiation from another: functors, the op kernels behind lambdas,
// and the element type.
func kernelHints(s, base string) []string {
	var hints []string
	seen := map[string]bool{base: true}
	dtype := ""
	for i := 0; i < len(s); {
		c := s[i]
		if !isIdentStart(c) {
			i++
			continue
		}
		j := i
		for j < len(s) && isIdent(s[j]) {
			j++
		}
		id := s[i:j]
		i = j
		switch id {
		case "float", "double", "Half", "BFloat16", "half", "bfloat16", "__half", "__nv_bfloat16", "long", "int", "bool", "char", "short":
			if dtype == "" && id != "char" && id != "int" {
				dtype = id
			}
			continue
		}
		if seen[id] || !informative(id) {
			continue
		}
		seen[id] = true
		hints = append(hints, id)
	}
	if len(hints) > 2 {
		hints = hints[:2]
	}
	if dtype != "" {
		hints = append(hints, dtype)
	}
	return hints
}

func informative(id string) bool {
	switch id {
	case "gpu_kernel_impl_nocast", "gpu_kernel_impl", "elementwise_kernel", "vectorized_elementwise_kernel",
		"unrolled_elementwise_kernel", "func_wrapper_t", "ReduceOp", "TensorIteratorBase", "TensorIterator", "TensorBase",
		"CUDAGeneratorImpl", "TensorListMetadata", "cublasGemvTensorStridedBatched", "operator":
		return false
	}
	for _, suf := range []string{"Functor", "functor", "_kernel", "_kernel_cuda", "_kernel_impl", "_transform", "Params", "ParamsEx", "Op", "_op"} {
		if strings.HasSuffix(id, suf) {
			return true
		}
	}
	return strings.HasPrefix(id, "CUDAFunctor")
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdent(c byte) bool      { return isIdentStart(c) || c >= '0' && c <= '9' }

// ClipName bounds a name to width characters by cutting its middle (the
// start says what it is, the end which variant), so a title or cell never
// wraps on a 300-character template instantiation.
func ClipName(s string, width int) string {
	n := utf8.RuneCountInString(s)
	if n <= width || width < 3 {
		return s
	}
	r := []rune(s)
	head := (width - 1) * 2 / 3
	tail := width - 1 - head
	return string(r[:head]) + "…" + string(r[n-tail:])
}
