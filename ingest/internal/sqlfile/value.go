package sqlfile

import (
	"encoding/binary"
	"math"
)

// Value is one column value of a record, to read a row generically
// (Row.Value) or to encode one (AppendRecord).
type Value struct {
	Type  Type
	Int   int64
	Float float64
	// Bytes holds TEXT and BLOB values; read from a Row, it aliases the
	// scanner's buffers.
	Bytes []byte
}

// Value returns column i as a Value (NULL past the stored columns).
func (r *Row) Value(i int) Value {
	switch r.Type(i) {
	case Integer:
		v, _ := r.Int(i)
		return Value{Type: Integer, Int: v}
	case Float:
		f, _ := r.Float(i)
		return Value{Type: Float, Float: f}
	case Text:
		return Value{Type: Text, Bytes: r.Text(i)}
	case Blob:
		return Value{Type: Blob, Bytes: r.Text(i)}
	}
	return Value{}
}

// AppendRecord appends the SQLite record format encoding of vals to dst:
// a header of serial types, then the values, integers in the fewest bytes
// (0 and 1 as serial types 8 and 9, schema format 4).
func AppendRecord(dst []byte, vals []Value) []byte {
	var hdr [16 * 9]byte
	h := hdr[:0]
	if len(vals) > 16 {
		h = make([]byte, 0, 9*len(vals))
	}
	for _, v := range vals {
		h = AppendVarint(h, serialType(v))
	}
	// The header size counts its own varint: 1 byte up to 127, else 2
	// (a record of fewer than 16 k columns).
	n := uint64(len(h) + 1)
	if n > 127 {
		n++
	}
	dst = AppendVarint(dst, n)
	dst = append(dst, h...)
	for _, v := range vals {
		switch st := serialType(v); {
		case st >= 1 && st <= 6:
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], uint64(v.Int))
			size := serialSize(st)
			dst = append(dst, b[8-size:]...)
		case st == 7:
			dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(v.Float))
		case st >= 12:
			dst = append(dst, v.Bytes...)
		}
	}
	return dst
}

// serialType is the serial type AppendRecord stores v as.
func serialType(v Value) uint64 {
	switch v.Type {
	case Integer:
		switch i := v.Int; {
		case i == 0:
			return 8
		case i == 1:
			return 9
		case i >= math.MinInt8 && i <= math.MaxInt8:
			return 1
		case i >= math.MinInt16 && i <= math.MaxInt16:
			return 2
		case i >= -1<<23 && i < 1<<23:
			return 3
		case i >= math.MinInt32 && i <= math.MaxInt32:
			return 4
		case i >= -1<<47 && i < 1<<47:
			return 5
		}
		return 6
	case Float:
		return 7
	case Text:
		return 13 + 2*uint64(len(v.Bytes))
	case Blob:
		return 12 + 2*uint64(len(v.Bytes))
	}
	return 0
}

// AppendVarint appends v as a SQLite varint (big-endian, 7 bits a byte,
// the ninth byte whole).
func AppendVarint(dst []byte, v uint64) []byte {
	if v > 1<<56-1 {
		var b [9]byte
		b[8] = byte(v)
		v >>= 8
		for i := 7; i >= 0; i-- {
			b[i] = byte(v&0x7f) | 0x80
			v >>= 7
		}
		return append(dst, b[:]...)
	}
	var b [8]byte
	n := 0
	for {
		b[7-n] = byte(v & 0x7f)
		v >>= 7
		n++
		if v == 0 {
			break
		}
	}
	for i := 8 - n; i < 7; i++ {
		b[i] |= 0x80
	}
	return append(dst, b[8-n:]...)
}
