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
	// memo holds each frame's answer plus memoShift (0 = not computed
	// yet, so a fresh slice needs no filling: storing -2 in each of 2 M
	// frames' entries, atomically, was most of the Attribution fact on a
	// deep-stack trace). Finding analyzers run side by side and resolve
	// frames as they meet them: each entry is read and written atomically
	// (two goroutines may compute one frame; they store the same answer).
	memo []atomic.Int32
	// classes is each frame name's class, parsed once per name.
	classes frameClasses
}

// memoShift is added to a memoised answer (trace.None and up), so that
// the zero value means not computed.
const memoShift = 2

// NewUserFrames returns a resolver over t's Python frames.
func NewUserFrames(t *trace.Trace) *UserFrames {
	return &UserFrames{t: t, memo: make([]atomic.Int32, len(t.Frames))}
}

// load returns frame f's memoised answer (answer's input) and whether it
// has one.
func (u *UserFrames) load(f trace.Index) (int32, bool) {
	v := u.memo[f].Load()
	return v - memoShift, v != 0
}

// store memoises v (answer's input) as frame f's answer.
func (u *UserFrames) store(f trace.Index, v int32) { u.memo[f].Store(v + memoShift) }

// storeUser memoises user frame res as frame f's answer: marked as the
// user's (userMark) where the trace's frame numbers leave the bit free,
// so that a walk that meets f need not parse res's name again. The
// other callers of Of, after the metrics, ask of the launches' frames
// again (fusion-candidate's chain breaks, of every launch): memoised,
// each answer is a load.
func (u *UserFrames) storeUser(f, res trace.Index) {
	if len(u.t.Frames) < userMark {
		res |= userMark
	}
	u.store(f, res)
}

// Of returns the user frame at or above f (see UserFrames), or trace.None.
// Each frame it walks through is given its own answer: the user frame
// found above it, or, with none, the innermost located frame at or above
// it, which for a frame above f's own fallback is not f's. (Given f's,
// such a frame answered with a frame of another branch for whichever
// later walk met it first, so an answer hung on the order the analyzers,
// running side by side, asked in; TestUserFramesAnswerEachFrame.)
func (u *UserFrames) Of(f trace.Index) trace.Index {
	if f == trace.None {
		return trace.None
	}
	if v, ok := u.load(f); ok {
		return answer(v)
	}
	t := u.t
	// seen is the walk, innermost first; located[i] says seen[i] has a
	// source location; above is the answer of the resolved ancestor the
	// walk stopped at (None at the root).
	var seenBuf [32]trace.Index
	var locatedBuf [32]bool
	seen, located := seenBuf[:0], locatedBuf[:0]
	res, above, aboveUser := trace.None, trace.None, false
	for cur := f; cur != trace.None && len(seen) < 1<<12; cur = t.Frames[cur].Parent {
		if v, ok := u.load(cur); ok {
			above = answer(v)
			aboveUser = v >= 0 && (v&userMark != 0 || len(t.Frames) >= userMark && u.isUser(above))
			break
		}
		cl := u.classes.of(t.Frames[cur].Name)
		seen, located = append(seen, cur), append(located, cl != frameUnlocated)
		if cl == frameUser {
			res = cur
			break
		}
	}
	if res == trace.None && aboveUser {
		res = above
	}
	if res != trace.None {
		for _, s := range seen {
			u.storeUser(s, res)
		}
		return res
	}
	// No user frame: each frame's answer is the innermost located frame
	// at or above it, found walking back down.
	ans := above
	for i := len(seen) - 1; i >= 0; i-- {
		if located[i] {
			ans = seen[i]
		}
		u.store(seen[i], ans)
	}
	return ans
}

// OfEach sets out[i] to Of(fs[i]) for each frame of fs (out at least
// as long). The frames are read a block at a time, each step of the
// walks in a loop of its own: a frame is 56 bytes among hundreds of
// thousands, a cache miss each, and read in a tight loop the misses of a
// block overlap, where walked frame by frame they came one after
// another. Most launches' frames are in the user's code or just below a
// frame that is (a built-in method called from it): those two steps are
// read so, and answered from the names alone; deeper ones walk (Of).
func (u *UserFrames) OfEach(fs, out []trace.Index) {
	t := u.t
	var name, above [64]string
	var parent [64]trace.Index
	var class [64]frameClass
	for lo := 0; lo < len(fs); lo += len(name) {
		blk := fs[lo:min(lo+len(name), len(fs))]
		for j, f := range blk {
			if f != trace.None {
				name[j], parent[j] = t.Frames[f].Name, t.Frames[f].Parent
			}
		}
		for j, f := range blk {
			if f == trace.None {
				continue
			}
			if class[j] = u.classes.of(name[j]); class[j] != frameUser && parent[j] != trace.None {
				above[j] = t.Frames[parent[j]].Name
			}
		}
		for j, f := range blk {
			switch {
			case f == trace.None:
				out[lo+j] = trace.None
			case class[j] == frameUser:
				out[lo+j] = f
				u.storeUser(f, f)
			case parent[j] != trace.None && u.classes.of(above[j]) == frameUser:
				// The innermost user frame at or above f: Of's
				// answer, which no walk from f can have cut short.
				out[lo+j] = parent[j]
				u.storeUser(f, parent[j])
				u.storeUser(parent[j], parent[j])
			default:
				out[lo+j] = u.Of(f)
			}
		}
	}
}

// userMark marks a memoised answer that is a user frame, so a walk that
// meets it need not parse the frame's name again (unset on a trace of
// that many frames, whose walks parse it).
const userMark = 1 << 30

// answer is the frame a memoised value names.
func answer(v int32) trace.Index {
	if v < 0 {
		return v
	}
	return v &^ userMark
}

// isUser reports whether frame f lies in the user's code.
func (u *UserFrames) isUser(f trace.Index) bool {
	return u.classes.of(u.t.Frames[f].Name) == frameUser
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
