package jsonout

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// errFallBack stops the direct encoding where encoding/json would fail
// (a NaN or an infinity, a marshaller's error, a cycle): Write then
// encodes the whole value through encoding/json, whose error it returns
// as it always did.
var errFallBack = errors.New("jsonout: encode through encoding/json")

// maxNesting bounds the direct encoding's recursion: a pointer cycle
// goes to encoding/json, which reports it.
const maxNesting = 1000

// appendValue appends v, of c's type, indented as the Encoder indents a
// value that starts at depth (its closing bracket's indent); nest counts
// the recursion.
func appendValue(dst []byte, m *memo, c *codec, v reflect.Value, depth, nest int) ([]byte, error) {
	if c.addrMarshals && v.CanAddr() {
		return appendMarshaled(dst, m, v.Addr(), depth)
	}
	switch c.op {
	case opBool:
		return strconv.AppendBool(dst, v.Bool()), nil
	case opInt:
		return strconv.AppendInt(dst, v.Int(), 10), nil
	case opUint:
		return strconv.AppendUint(dst, v.Uint(), 10), nil
	case opFloat64:
		return appendFloat64(dst, v.Float())
	case opFloat32:
		return appendFloat(dst, v.Float(), 32)
	case opString:
		return appendString(dst, v.String()), nil
	case opPointer:
		if v.IsNil() {
			return append(dst, "null"...), nil
		}
		if nest > maxNesting {
			return dst, errFallBack
		}
		return appendValue(dst, m, c.elem, v.Elem(), depth, nest+1)
	case opSlice, opArray:
		if c.op == opSlice && v.IsNil() {
			return append(dst, "null"...), nil
		}
		return appendElems(dst, m, c.elem, v, 0, v.Len(), depth, nest)
	case opStruct:
		return appendStruct(dst, m, c, v, depth, nest)
	}
	return appendMarshaled(dst, m, v, depth)
}

// appendElems appends elements lo to hi of the slice or array v as an
// indented array (a whole one when they are all its elements).
func appendElems(dst []byte, m *memo, elem *codec, v reflect.Value, lo, hi, depth, nest int) ([]byte, error) {
	if lo == hi {
		return append(dst, "[]"...), nil
	}
	if nest > maxNesting {
		return dst, errFallBack
	}
	dst = append(dst, '[')
	dst, err := appendRun(dst, m, elem, v, lo, hi, depth+1, nest)
	if err != nil {
		return dst, err
	}
	return append(newline(dst, depth), ']'), nil
}

// appendRun appends elements lo to hi of v at depth, each on its own
// line, comma separated: an array's inside, or a piece of it.
func appendRun(dst []byte, m *memo, elem *codec, v reflect.Value, lo, hi, depth, nest int) ([]byte, error) {
	var err error
	for i := lo; i < hi; i++ {
		if i > lo {
			dst = append(dst, ',')
		}
		dst = newline(dst, depth)
		if dst, err = appendValue(dst, m, elem, v.Index(i), depth, nest+1); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// appendStruct appends the struct v's fields as an indented object.
func appendStruct(dst []byte, m *memo, c *codec, v reflect.Value, depth, nest int) ([]byte, error) {
	if nest > maxNesting {
		return dst, errFallBack
	}
	open := len(dst)
	dst = append(dst, '{')
	var err error
	for i := range c.fields {
		f := &c.fields[i]
		fv, ok := fieldValue(v, f)
		if !ok {
			continue
		}
		if len(dst) > open+1 {
			dst = append(dst, ',')
		}
		dst = append(newline(dst, depth+1), f.key...)
		if dst, err = appendValue(dst, m, f.codec, fv, depth+1, nest+1); err != nil {
			return dst, err
		}
	}
	if len(dst) == open+1 {
		return append(dst, '}'), nil
	}
	return append(newline(dst, depth), '}'), nil
}

// fieldValue is f's value in the struct v, and whether it is written: a
// field behind a nil embedded pointer, or omitempty and empty, is not.
func fieldValue(v reflect.Value, f *field) (reflect.Value, bool) {
	if len(f.index) == 1 {
		v = v.Field(f.index[0])
	} else {
		for _, i := range f.index {
			if v.Kind() == reflect.Pointer {
				if v.IsNil() {
					return v, false
				}
				v = v.Elem()
			}
			v = v.Field(i)
		}
	}
	return v, !f.omitEmpty || !empty(v)
}

// empty is encoding/json's isEmptyValue, what omitempty leaves out.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// appendMarshaled appends v encoded by encoding/json and indented from
// depth: what the Encoder writes for it in place.
func appendMarshaled(dst []byte, m *memo, v reflect.Value, depth int) ([]byte, error) {
	compact, err := m.marshal(v)
	if err != nil {
		return dst, errFallBack
	}
	dst, _ = appendIndented(dst, compact, depth)
	return dst, nil
}

// appendFloat64 appends f as the Encoder writes a float64. Most of a
// report's figures are whole or microseconds to the nanosecond: those
// are written as integers of thousandths, a tenth of strconv's cost.
func appendFloat64(dst []byte, f float64) ([]byte, error) {
	// Within ±1e12 a float64's spacing is under 0.00025, so a number of
	// thousandths that converts back to f exactly is the shortest
	// decimal that reads back as f: any other decimal as short lies on
	// the same thousandths grid, at least 0.001 away (see
	// TestAppendFloat64MatchesStrconv).
	if f > -1e12 && f < 1e12 && (f != 0 || !math.Signbit(f)) {
		if t := math.Round(f * 1000); t/1000 == f {
			n := int64(t)
			if n < 0 {
				dst = append(dst, '-')
				n = -n
			}
			dst = strconv.AppendInt(dst, n/1000, 10)
			if frac := n % 1000; frac != 0 {
				d := [4]byte{'.', byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
				k := 4
				for d[k-1] == '0' {
					k--
				}
				dst = append(dst, d[:k]...)
			}
			return dst, nil
		}
	}
	return appendFloat(dst, f, 64)
}

// appendFloat is encoding/json's floatEncoder: the shortest decimal,
// exponent form below 1e-6 and from 1e21, the exponent not padded.
func appendFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, errFallBack
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// hex is the digits of \u escapes.
const hex = "0123456789abcdef"

// appendString appends s quoted as encoding/json does without HTML
// escaping: quotes, backslashes and control characters escaped, invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b >= 0x20 && b != '"' && b != '\\' && b < utf8.RuneSelf {
			i++
			continue
		}
		if b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(dst, s[start:]...), '"')
}
