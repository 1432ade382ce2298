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
	parts := make([][]byte, len(members))
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() { parts[i], errs[i] = encodeCompact(m.Value) })
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
	n := len(top)
	for _, p := range parts {
		n += len(p)
	}
	order := make([]int, len(members))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return at[a] - at[b] })
	return writeIndented(w, n, func(out []byte) []byte {
		depth, from := 0, 0
		for _, i := range order {
			// A member's value is whole, so the text around it indents
			// as it would around the null it stands for.
			out, depth = appendIndented(out, top[from:at[i]], depth)
			out, depth = appendIndented(out, parts[i], depth)
			from = at[i] + len("null")
		}
		out, _ = appendIndented(out, top[from:], depth)
		return out
	})
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
