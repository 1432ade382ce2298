package jsonout

import (
	"math"
	"reflect"
)

// A stream writes its pieces as they are encoded; so that an encoding
// error still writes nothing, every piece is checked first: check fails
// exactly where appendValue would (an infinity or a NaN, a marshaller's
// or encoding/json's error, nesting past maxNesting), walking the same
// values without writing them, and skips the values that cannot fail
// (strings, integers, and whatever holds only those).

// settle sets every codec's mayFail: whether one of its values can fail
// to encode. A type that reaches itself may nest past maxNesting: it may
// fail, as may one nested nearly that deep.
func (cs codecs) settle() {
	state := map[*codec]int{} // 1: being settled; 2: settled
	var height func(c *codec) int
	height = func(c *codec) int {
		switch state[c] {
		case 1:
			c.mayFail = true
			return maxNesting
		case 2:
			return c.height
		}
		state[c] = 1
		h := 0
		switch c.op {
		case opMarshal, opFloat32, opFloat64:
			c.mayFail = true
		case opPointer, opSlice, opArray:
			h = height(c.elem)
			c.mayFail = c.mayFail || c.elem.mayFail
		case opStruct:
			for i := range c.fields {
				f := &c.fields[i]
				h = max(h, height(f.codec))
				c.mayFail = c.mayFail || f.codec.mayFail
			}
		}
		c.height = min(h+1, maxNesting)
		for i := range c.fields {
			// A field's mayFail is settled, or true (a type reaching
			// itself): either way final.
			if f := &c.fields[i]; f.codec.mayFail {
				c.failing = append(c.failing, f)
			}
		}
		c.mayFail = c.mayFail || c.addrMarshals || c.height >= maxNesting/2
		state[c] = 2
		return c.height
	}
	for _, c := range cs {
		height(c)
	}
}

// check reports whether the piece would fail to encode.
func (p *piece) check() error {
	if !p.run {
		return check(&p.memo, p.c, p.v, p.nest)
	}
	for i := p.lo; i < p.hi; i++ {
		if err := check(&p.memo, p.c, p.v.Index(i), p.nest+1); err != nil {
			return err
		}
	}
	return nil
}

// check returns appendValue's error for v, of c's type, at nest, without
// writing it.
func check(m *memo, c *codec, v reflect.Value, nest int) error {
	if !c.mayFail {
		return nil
	}
	if c.addrMarshals && v.CanAddr() {
		return checkMarshaled(m, v.Addr())
	}
	switch c.op {
	case opFloat32, opFloat64:
		if f := v.Float(); math.IsInf(f, 0) || math.IsNaN(f) {
			return errFallBack
		}
		return nil
	case opPointer:
		if v.IsNil() {
			return nil
		}
		if nest > maxNesting {
			return errFallBack
		}
		return check(m, c.elem, v.Elem(), nest+1)
	case opSlice, opArray:
		if c.op == opSlice && v.IsNil() {
			return nil
		}
		n := v.Len()
		if n > 0 && nest > maxNesting {
			return errFallBack
		}
		for i := range n {
			if err := check(m, c.elem, v.Index(i), nest+1); err != nil {
				return err
			}
		}
		return nil
	case opStruct:
		if nest > maxNesting {
			return errFallBack
		}
		for _, f := range c.failing {
			if fv, ok := fieldValue(v, f); ok {
				if err := check(m, f.codec, fv, nest+1); err != nil {
					return err
				}
			}
		}
		return nil
	case opMarshal:
		return checkMarshaled(m, v)
	}
	return nil
}

// checkMarshaled returns appendMarshaled's error for v.
func checkMarshaled(m *memo, v reflect.Value) error {
	if err := m.keep(v); err != nil {
		return errFallBack
	}
	return nil
}
