package jsonout

import (
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"sync"
)

// minChunkElems is the fewest elements of a split member's slice that
// one goroutine encodes. One: a report's 34 op rows each hold a figure
// per step (2,205 of them), and a goroutine costs microseconds.
const minChunkElems = 1

// part is one split member of WriteSplit: its compact encoding, whole or,
// for a long slice, as chunks of its elements encoded side by side (a
// report's 2,205 steps were one thread's 20 ms of encoding and as many
// of indenting, the tail of the whole command on 16 cores).
type part struct {
	// whole is the member's compact JSON (nil when chunked); chunks hold
	// the slice's elements, comma separated, without the brackets.
	whole  []byte
	chunks [][]byte
	// depth is the nesting at which the member's value starts, slot its
	// index among WriteSplit's pieces.
	depth, slot int
}

// encodePart encodes v compact: a slice of many elements in chunks, each
// on its own goroutine; anything else (or a slice type with its own
// marshaller) whole.
func encodePart(v any) (*part, error) {
	rv := reflect.ValueOf(v)
	n := 0
	if rv.Kind() == reflect.Slice && !rv.IsNil() && !marshals(rv.Type()) {
		n = rv.Len()
	}
	workers := min(runtime.GOMAXPROCS(0), n/minChunkElems)
	if workers < 2 {
		b, err := encodeCompact(v)
		return &part{whole: b}, err
	}
	per := (n + workers - 1) / workers
	p := &part{chunks: make([][]byte, (n+per-1)/per)}
	errs := make([]error, len(p.chunks))
	var wg sync.WaitGroup
	for c := range p.chunks {
		lo, hi := c*per, min((c+1)*per, n)
		wg.Go(func() {
			b, err := encodeCompact(rv.Slice(lo, hi).Interface())
			if err == nil {
				b = b[1 : len(b)-len("]\n")] // the elements, comma separated
			}
			p.chunks[c], errs[c] = b, err
		})
	}
	wg.Wait()
	return p, errors.Join(errs...)
}

// marshals reports whether values of type t encode through their own
// method, which may not write a slice element by element.
func marshals(t reflect.Type) bool {
	for _, u := range []reflect.Type{t, reflect.PointerTo(t)} {
		if u.Implements(reflect.TypeFor[json.Marshaler]()) || u.Implements(reflect.TypeFor[encoding.TextMarshaler]()) {
			return true
		}
	}
	return false
}

// indent is the member's text indented from its depth: the chunks side by
// side, each element at one level deeper, as the Encoder indents an
// array.
func (p *part) indent() []byte {
	if p.chunks == nil {
		out, _ := appendIndented(make([]byte, 0, len(p.whole)*5/2), p.whole, p.depth)
		return out
	}
	pieces := make([][]byte, len(p.chunks))
	var wg sync.WaitGroup
	for i, c := range p.chunks {
		wg.Go(func() { pieces[i], _ = appendIndented(make([]byte, 0, len(c)*5/2), c, p.depth+1) })
	}
	wg.Wait()
	n := 0
	for _, pc := range pieces {
		n += len(pc) + len(indent)
	}
	out := append(make([]byte, 0, n+len(indent)+2), '[')
	for i, pc := range pieces {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(newline(out, p.depth+1), pc...)
	}
	return append(newline(out, p.depth), ']')
}
