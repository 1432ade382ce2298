package jsonout

import (
	"reflect"
)

// A Write cuts its value into pieces of about the same work, encoded side
// by side: a report's per-step tables (the steps, a figure per step of
// every op, kernel, annotation and category: 6 of its 6.2 MB on 2,205
// steps) were one thread's work after the analysis, the tail every run
// waited for. The cut follows the value's weight, its number of scalars
// (estimated from a few elements of each slice): a value lighter than a
// piece is one; a heavier struct is cut field by field, a heavier slice
// into runs of elements. The text between pieces (brackets, keys,
// indents, and values too light to be worth a goroutine) is written as
// the value is cut.

const (
	// minWeight is the weight below which a value is written on one
	// thread: a goroutine costs microseconds, a scalar tens of
	// nanoseconds.
	minWeight = 1 << 14
	// piecesPerThread is how many pieces each thread gets: enough that
	// pieces of unequal cost even out.
	piecesPerThread = 8
	// inlineWeight is the weight of values the cutter writes itself
	// rather than as a piece of their own.
	inlineWeight = 64
	// maxWeighNesting bounds how deep weight looks: below it a value
	// counts one (a pointer cycle goes to encoding/json whole).
	maxWeighNesting = 12
	// weighSamples is how many of a slice's elements weight looks at,
	// weighBudget how many values in all.
	weighSamples = 8
	weighBudget  = 1 << 12
	// bytesPerWeight sizes a piece's buffer: an indented report scalar
	// with its key and indent takes about that.
	bytesPerWeight = 28
)

// piece is a part of the output encoded on its own: its value, or a run
// of a slice's elements, after the text before it.
type piece struct {
	prefix []byte
	c      *codec
	v      reflect.Value
	// run: elements lo to hi of v, each on its line at depth; else v
	// itself, starting at depth.
	run         bool
	lo, hi      int
	depth, nest int
	weight      int
	out         []byte
	err         error
	// memo keeps what check marshalled, for encode.
	memo memo
}

// encode writes the piece into its out, appended to dst (a new buffer
// when nil).
func (p *piece) encode(dst []byte) {
	if dst == nil {
		dst = make([]byte, 0, len(p.prefix)+p.weight*bytesPerWeight)
	}
	out := append(dst, p.prefix...)
	if p.run {
		p.out, p.err = appendRun(out, &p.memo, p.c, p.v, p.lo, p.hi, p.depth, p.nest)
	} else {
		p.out, p.err = appendValue(out, &p.memo, p.c, p.v, p.depth, p.nest)
	}
}

// cutter cuts a value into pieces.
type cutter struct {
	// target is a piece's weight.
	target int
	// text is the output since the last piece.
	text   []byte
	pieces []*piece
	err    error
}

// cut cuts v, of c's type, into pieces for threads threads, none
// heavier than most (but for a value it cannot cut) where the value is
// heavy enough to cut, and returns them with the text after the last one
// (a newline ends it).
func cut(c *codec, v reflect.Value, threads, most int) ([]*piece, []byte, error) {
	w := weight(c, v, 0)
	k := &cutter{target: min(w, most)}
	if threads > 1 && w >= minWeight {
		k.target = min(most, max(minWeight/piecesPerThread, w/(threads*piecesPerThread)))
	}
	k.value(c, v, 0, w, 0)
	return k.pieces, append(k.text, '\n'), k.err
}

// add makes v (or its elements lo to hi, for run) a piece.
func (k *cutter) add(p *piece) {
	p.prefix, k.text = k.text, nil
	k.pieces = append(k.pieces, p)
}

// value cuts v, of weight w, starting at depth.
func (k *cutter) value(c *codec, v reflect.Value, depth, w, nest int) {
	if k.err != nil {
		return
	}
	if w <= inlineWeight {
		k.text, k.err = appendValue(k.text, nil, c, v, depth, nest)
		return
	}
	if w <= k.target || nest >= maxWeighNesting || c.addrMarshals && v.CanAddr() {
		k.add(&piece{c: c, v: v, depth: depth, nest: nest, weight: w})
		return
	}
	switch c.op {
	case opPointer:
		if !v.IsNil() {
			k.value(c.elem, v.Elem(), depth, w, nest+1)
			return
		}
	case opStruct:
		k.fields(c, v, depth, nest)
		return
	case opSlice, opArray:
		if n := v.Len(); n > 0 {
			k.elems(c.elem, v, n, depth, w, nest)
			return
		}
	}
	k.add(&piece{c: c, v: v, depth: depth, nest: nest, weight: w})
}

// fields cuts the struct v field by field.
func (k *cutter) fields(c *codec, v reflect.Value, depth, nest int) {
	k.text = append(k.text, '{')
	n := 0
	for i := range c.fields {
		f := &c.fields[i]
		fv, ok := fieldValue(v, f)
		if !ok {
			continue
		}
		if n > 0 {
			k.text = append(k.text, ',')
		}
		n++
		k.text = append(newline(k.text, depth+1), f.key...)
		k.value(f.codec, fv, depth+1, weight(f.codec, fv, nest+1), nest+1)
	}
	if n > 0 {
		k.text = newline(k.text, depth)
	}
	k.text = append(k.text, '}')
}

// elems cuts the n elements of the slice or array v, of weight w: into
// runs of about a piece's weight, or one by one where each is heavier
// than half a piece.
func (k *cutter) elems(elem *codec, v reflect.Value, n, depth, w, nest int) {
	k.text = append(k.text, '[')
	per := max(1, w/n)
	if 2*per > k.target {
		for i := range n {
			if i > 0 {
				k.text = append(k.text, ',')
			}
			k.text = newline(k.text, depth+1)
			e := v.Index(i)
			k.value(elem, e, depth+1, weight(elem, e, nest+1), nest+1)
		}
	} else {
		step := max(1, k.target/per)
		for lo := 0; lo < n; lo += step {
			if lo > 0 {
				k.text = append(k.text, ',')
			}
			hi := min(lo+step, n)
			k.add(&piece{c: elem, v: v, run: true, lo: lo, hi: hi, depth: depth + 1, nest: nest, weight: (hi - lo) * per})
		}
	}
	k.text = append(newline(k.text, depth), ']')
}

// weight estimates the scalars v holds: a slice's from a few of its
// elements, spread over it.
func weight(c *codec, v reflect.Value, nest int) int {
	budget := weighBudget
	return weigh(c, v, nest, &budget)
}

// weigh is weight within a budget of values looked at: past it, a value
// counts one (weight is called for every value the cutter looks at).
func weigh(c *codec, v reflect.Value, nest int, budget *int) int {
	*budget--
	if nest >= maxWeighNesting || *budget < 0 || c.addrMarshals && v.CanAddr() {
		return 1
	}
	switch c.op {
	case opPointer:
		if !v.IsNil() {
			return weigh(c.elem, v.Elem(), nest+1, budget)
		}
	case opSlice, opArray:
		n := v.Len()
		if n == 0 {
			return 1
		}
		k := min(n, weighSamples)
		w := 0
		for i := range k {
			at := 0
			if k > 1 {
				at = i * (n - 1) / (k - 1)
			}
			w += weigh(c.elem, v.Index(at), nest+1, budget)
		}
		return 1 + n*w/k
	case opStruct:
		w := 1
		for i := range c.fields {
			if fv, ok := fieldValue(v, &c.fields[i]); ok {
				w += weigh(c.fields[i].codec, fv, nest+1, budget)
			}
		}
		return w
	case opMarshal:
		if v.Kind() == reflect.Map {
			return 1 + 2*v.Len()
		}
	}
	return 1
}
