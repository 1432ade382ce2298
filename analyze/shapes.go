package analyze

import (
	"strconv"
	"strings"
)

// parseDims parses the profiler's "Input Dims" text ([[1024, 64], [], [64]])
// into one shape per input; a scalar or non-tensor input is an empty
// shape. It returns nil for text it cannot read.
func parseDims(s string) [][]int64 {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil
	}
	s = s[1 : len(s)-1]
	var out [][]int64
	for {
		s = strings.TrimLeft(s, " ,")
		if s == "" {
			return out
		}
		if s[0] != '[' {
			// A bare value (some profilers write scalars inline).
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			out = append(out, nil)
			s = s[end:]
			continue
		}
		// Find the matching bracket: TensorList inputs nest lists.
		end, depth := -1, 0
		for i := 0; i < len(s) && end < 0; i++ {
			switch s[i] {
			case '[':
				depth++
			case ']':
				depth--
				if depth == 0 {
					end = i
				}
			}
		}
		if end < 0 {
			return nil
		}
		inner := s[1:end]
		var shape []int64
		if !strings.Contains(inner, "[") {
			for _, f := range strings.Split(inner, ",") {
				f = strings.TrimSpace(f)
				if f == "" {
					continue
				}
				n, err := strconv.ParseInt(f, 10, 64)
				if err != nil {
					return nil
				}
				shape = append(shape, n)
			}
		}
		out = append(out, shape)
		s = s[end+1:]
	}
}

// parseTypes parses the profiler's "Input type" text (["float", "c10::Half",
// "Scalar", ""]).
func parseTypes(s string) []string {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '[' {
		return nil
	}
	var out []string
	for _, f := range strings.Split(s[1:len(s)-1], ",") {
		out = append(out, strings.Trim(strings.TrimSpace(f), `"`))
	}
	return out
}

// elemSize returns the bytes per element of a profiler dtype name, 0 when
// it is not a tensor dtype.
func elemSize(dtype string) int64 {
	switch dtype {
	case "double", "long int", "long", "int64_t", "c10::complex<float>":
		return 8
	case "float", "int", "unsigned int":
		return 4
	case "c10::Half", "c10::BFloat16", "short", "at::Half", "at::BFloat16":
		return 2
	case "bool", "signed char", "unsigned char", "c10::Float8_e4m3fn", "c10::Float8_e5m2":
		return 1
	}
	return 0
}

// dtypeName is the short name users know a profiler dtype by.
func dtypeName(dtype string) string {
	switch dtype {
	case "double":
		return "fp64"
	case "float":
		return "fp32"
	case "c10::Half", "at::Half":
		return "fp16"
	case "c10::BFloat16", "at::BFloat16":
		return "bf16"
	case "c10::Float8_e4m3fn", "c10::Float8_e5m2":
		return "fp8"
	}
	return dtype
}

// OpDType is the short name (fp32, bf16, ...) of the element type of an
// op's first tensor input, read from the profiler's "Input type" text
// (["Scalar", "c10::BFloat16"] → bf16), "" when it lists no tensor. It is
// the name the roofline uses, for export's kernels table.
func OpDType(inputTypes string) string {
	for _, t := range parseTypes(inputTypes) {
		if elemSize(t) > 0 {
			return dtypeName(t)
		}
	}
	return ""
}

// numel returns the number of elements of a shape (1 for a scalar).
func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// firstTensorBytes returns the size of an op's first tensor input, 0 when
// unknown.
func firstTensorBytes(dims, types string) int64 {
	d, t := parseDims(dims), parseTypes(types)
	for i := range min(len(d), len(t)) {
		if len(d[i]) > 0 && elemSize(t[i]) > 0 {
			return numel(d[i]) * elemSize(t[i])
		}
	}
	return 0
}
