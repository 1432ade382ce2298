package jsonout

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// memo encodes, for one piece, the values encoding/json writes, and
// keeps what the piece's check encoded so that its encoding, which meets
// the same values in the same order, does not encode them again: a
// report's finding tables hold thousands of cells with their own
// marshaller, each encoded through a new Encoder. A nil memo keeps
// nothing.
type memo struct {
	kept  [][]byte
	types []reflect.Type
	next  int
	// buf and enc encode every value of the piece, one after another.
	buf bytes.Buffer
	enc *json.Encoder
}

// keep encodes v and keeps it for marshal.
func (m *memo) keep(v reflect.Value) error {
	b, err := m.encode(v)
	if err == nil && m != nil {
		m.kept = append(m.kept, b)
		m.types = append(m.types, v.Type())
	}
	return err
}

// marshal is v encoded by encoding/json, compact: the next value keep
// kept where it is of v's type (the same walk meets the same values),
// else encoded now.
func (m *memo) marshal(v reflect.Value) ([]byte, error) {
	if m != nil && m.next < len(m.kept) && m.types[m.next] == v.Type() {
		m.next++
		return m.kept[m.next-1], nil
	}
	return m.encode(v)
}

// encode is v encoded by encoding/json, compact. An addressable value
// goes by its address, so that the Encoder calls pointer methods inside
// it as it does in place.
func (m *memo) encode(v reflect.Value) ([]byte, error) {
	if !v.CanInterface() {
		return nil, errFallBack
	}
	if v.CanAddr() {
		v = v.Addr()
	}
	if m == nil {
		return encodeCompact(v.Interface())
	}
	if m.enc == nil {
		m.enc = json.NewEncoder(&m.buf)
		m.enc.SetEscapeHTML(false)
	}
	start := m.buf.Len()
	if err := m.enc.Encode(v.Interface()); err != nil {
		return nil, err
	}
	// A slice of the buffer, kept whole: the buffer grows by copying,
	// never writing over what it held.
	return m.buf.Bytes()[start:m.buf.Len():m.buf.Len()], nil
}
