package analyze

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestFrameClassesByAddressAndLength: a name's class is the same
// whether it is met first, again, at another address (not interned) or
// after a shorter name at the same address (a prefix of its text), whose
// class differs: the slot's length is part of its key.
func TestFrameClassesByAddressAndLength(t *testing.T) {
	user := "train.py(12): step"
	names := []string{
		user,
		user[:len("train.py(12")], // same address, no location
		strings.Clone(user),       // same text, another address
		"torch/nn/modules/module.py(1750): _call_impl",
		"<built-in method add>",
		"/usr/lib/python3.11/threading.py(1002): run",
		user,
	}
	want := []frameClass{frameUser, frameUnlocated, frameUser, frameLibrary, frameUnlocated, frameLibrary, frameUser}
	var c frameClasses
	for round := range 2 {
		for i, n := range names {
			if got := c.of(n); got != want[i] || got != classOfName(n) {
				t.Errorf("round %d: class of %q = %d, want %d", round, n, got, want[i])
			}
		}
	}
}

// TestOfEachIsOf: OfEach answers as Of for every frame of a forest of
// user, library and unlocated frames, over several blocks, with None
// among the frames, whether the walks met the frames before or not, and
// what it memoises answers the walks after it as they would.
func TestOfEachIsOf(t *testing.T) {
	names := []string{"train.py(30): main", "model.py(8): forward", "torch/nn/modules/module.py(1750): _call_impl",
		"torch/nn/functional.py(2000): linear", "<built-in method mm>", "<built-in method add>"}
	rng := rand.New(rand.NewPCG(1, 2))
	tr := &trace.Trace{}
	for i := range 500 {
		parent := trace.None
		if i > 0 && rng.IntN(8) > 0 {
			parent = trace.Index(rng.IntN(i))
		}
		tr.Frames = append(tr.Frames, trace.PyFrame{Span: trace.Span{Name: names[rng.IntN(len(names))]}, Parent: parent})
	}
	want := NewUserFrames(tr)
	fs := []trace.Index{trace.None}
	for f := range tr.Frames {
		fs = append(fs, trace.Index(f))
	}
	rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	for _, warm := range []bool{false, true} {
		u := NewUserFrames(tr)
		if warm {
			for _, f := range fs[:len(fs)/2] {
				u.Of(f)
			}
		}
		out := make([]trace.Index, len(fs))
		u.OfEach(fs, out)
		for i, f := range fs {
			if w := want.Of(f); out[i] != w {
				t.Errorf("warm %v: frame %d: %d, want %d", warm, f, out[i], w)
			}
		}
		// What OfEach memoised answers the walks that follow.
		for f := range tr.Frames {
			if got, w := u.Of(trace.Index(f)), want.Of(trace.Index(f)); got != w {
				t.Errorf("warm %v: after OfEach, Of(%d) = %d, want %d", warm, f, got, w)
			}
		}
	}
}
