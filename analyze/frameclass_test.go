package analyze

import (
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

// TestOfNamedIsOf: OfNamed answers as Of for every frame, asked in
// either order, on a stack of user, library and unlocated frames.
func TestOfNamedIsOf(t *testing.T) {
	frame := func(name string, parent trace.Index) trace.PyFrame {
		return trace.PyFrame{Span: trace.Span{Name: name}, Parent: parent}
	}
	tr := &trace.Trace{Frames: []trace.PyFrame{
		frame("train.py(30): main", trace.None),                     // 0 user
		frame("torch/nn/modules/module.py(1750): _call_impl", 0),    // 1 library
		frame("model.py(8): forward", 1),                            // 2 user
		frame("<built-in method mm>", 2),                            // 3 unlocated
		frame("torch/autograd/function.py(575): apply", trace.None), // 4 library root
		frame("<built-in method add>", 4),                           // 5 unlocated
		frame("torch/nn/functional.py(2000): linear", 3),            // 6 library
	}}
	want := NewUserFrames(tr)
	for _, named := range []bool{true, false} {
		u := NewUserFrames(tr)
		for f := range tr.Frames {
			got := u.Of(trace.Index(f))
			if named {
				got = u.OfNamed(trace.Index(f), tr.Frames[f].Name)
			}
			if w := want.Of(trace.Index(f)); got != w {
				t.Errorf("named %v: frame %d: %d, want %d", named, f, got, w)
			}
		}
	}
	if got := want.OfNamed(trace.None, ""); got != trace.None {
		t.Errorf("OfNamed(None) = %d", got)
	}
}
