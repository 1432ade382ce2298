package jsonout

import (
	"bytes"
	"io"
	"slices"
	"sync"
)

// Member is one member of a JSON object that WriteSplit encodes apart
// from the rest: its key (plain text, as the encoding writes it) and its
// value.
type Member struct {
	Key   string
	Value any
}

// WriteSplit writes to w what Write(w, v) writes, for v an object (a
// struct) whose large members are encoded side by side: rest is v with
// each of members' values left out so that it encodes as null, members
// the values themselves. The encoding of a report's per-step tables was
// 27 ms of one thread after the analysis, the tail every run waited for.
// Where rest's encoding does not hold each member's key exactly once,
// with null, at its top level (a key left out, omitempty), v is written
// whole.
func WriteSplit(w io.Writer, v, rest any, members []Member) error {
	parts := make([]*part, len(members))
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() { parts[i], errs[i] = encodePart(m.Value) })
	}
	top, err := encodeCompact(rest)
	wg.Wait()
	for _, e := range append(errs, err) {
		if e != nil {
			return e
		}
	}
	at, ok := nullMembers(top, members)
	if !ok {
		return writeWhole(w, v)
	}
	order := make([]int, len(members))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return at[a] - at[b] })
	// The text around the members is small: indented first, in order, it
	// gives each member the depth it starts at; the members' pieces, most
	// of the output, are then indented side by side. A member's value is
	// whole, so the text around it indents as around the null it stands
	// for.
	pieces := make([][]byte, 0, 2*len(members)+1)
	depth, from := 0, 0
	var around []byte
	for _, i := range order {
		around, depth = appendIndented(nil, top[from:at[i]], depth)
		pieces = append(pieces, around, nil)
		parts[i].depth, parts[i].slot = depth, len(pieces)-1
		from = at[i] + len("null")
	}
	around, _ = appendIndented(nil, top[from:], depth)
	pieces = append(pieces, around, []byte("\n"))
	for _, p := range parts {
		wg.Go(func() { pieces[p.slot] = p.indent() })
	}
	wg.Wait()
	// Piece by piece: joined first, the output was allocated once more
	// (30 MB for a 2,205-step report), enough to start a collection. A
	// buffer (what the faces hand in) grows once, not by doubling.
	if buf, ok := w.(*bytes.Buffer); ok {
		n := 0
		for _, p := range pieces {
			n += len(p)
		}
		buf.Grow(n)
	}
	for _, p := range pieces {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// nullMembers returns, for each member, the offset in src (a compact
// JSON object) of the null that is its key's value at the object's top
// level, and whether each key is there exactly once with null.
func nullMembers(src []byte, members []Member) ([]int, bool) {
	at := make([]int, len(members))
	for i := range at {
		at[i] = -1
	}
	depth := 0
	for i := 0; i < len(src); {
		switch src[i] {
		case '"':
			end := stringEnd(src, i)
			if depth == 1 && end < len(src) && src[end] == ':' {
				for k, m := range members {
					if string(src[i+1:end-1]) != m.Key {
						continue
					}
					if at[k] >= 0 || !bytes.HasPrefix(src[end+1:], []byte("null")) {
						return nil, false
					}
					at[k] = end + 1
				}
			}
			i = end
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		i++
	}
	return at, !slices.Contains(at, -1)
}
