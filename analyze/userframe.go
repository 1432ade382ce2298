package analyze

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/tracelens/tracelens/trace"
)

// UserFrames finds the user's source frame above a Python frame: the
// innermost frame at or above it that lies in the user's code (not a
// library), else the innermost frame with a source location, else None.
// It memoises per frame, so walking the stacks of millions of launches
// costs one pass over each distinct frame. Attribution uses it, and
// export, so both name the same Python line for a kernel.
type UserFrames struct {
	t *trace.Trace
	// memo holds each frame's answer (-2 = not computed yet). Finding
	// analyzers run side by side and resolve frames as they meet them:
	// each entry is read and written atomically (two goroutines may
	// compute one frame; they store the same answer).
	memo []atomic.Int32
}

// NewUserFrames returns a resolver over t's Python frames.
func NewUserFrames(t *trace.Trace) *UserFrames {
	memo := make([]atomic.Int32, len(t.Frames))
	for i := range memo {
		memo[i].Store(-2)
	}
	return &UserFrames{t: t, memo: memo}
}

// Of returns the user frame at or above f (see UserFrames), or trace.None.
func (u *UserFrames) Of(f trace.Index) trace.Index {
	if f == trace.None {
		return trace.None
	}
	if v := trace.Index(u.memo[f].Load()); v != -2 {
		return v
	}
	t := u.t
	res, fallback := trace.None, trace.None
	var seen []trace.Index
	for cur := f; cur != trace.None && len(seen) < 1<<12; cur = t.Frames[cur].Parent {
		if v := trace.Index(u.memo[cur].Load()); v != -2 {
			// An ancestor already resolved: its user frame is ours too;
			// if it found none, our own fallback is the innermost one.
			if v != trace.None && (fallback == trace.None || u.isUser(v)) {
				res = v
			}
			break
		}
		seen = append(seen, cur)
		file, _, _, ok := t.Frames[cur].Source()
		if !ok {
			continue
		}
		if fallback == trace.None {
			fallback = cur
		}
		if !libraryFile(file) {
			res = cur
			break
		}
	}
	if res == trace.None {
		res = fallback
	}
	for _, s := range seen {
		u.memo[s].Store(int32(res))
	}
	return res
}

func (u *UserFrames) isUser(f trace.Index) bool {
	file, _, _, ok := u.t.Frames[f].Source()
	return ok && !libraryFile(file)
}

// userFuncs names the user functions and source files behind GPU
// activities, in first-seen order ("lowrank (capture_traces.py:63)").
func (ix *index) userFuncs(gs []int) []string {
	var out []string
	for _, g := range gs {
		f := ix.userFrameOf(ix.frameOf(g))
		if f == trace.None {
			continue
		}
		file, line, fn, ok := ix.t.Frames[f].Source()
		if !ok {
			continue
		}
		s := fmt.Sprintf("%s() at %s:%d", fn, file, line)
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
