package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestUserFramesAnswerEachFrame: a walk with no user frame above gives
// each frame it passes its own answer, so a later question about a frame
// above the first one's fallback (or a sibling below it) is answered the
// same whichever was asked first.
func TestUserFramesAnswerEachFrame(t *testing.T) {
	// r (library) > q (no location) > p (library) > f (no location), and
	// g (no location) a second child of q.
	frame := func(name string, parent trace.Index) trace.PyFrame {
		return trace.PyFrame{Span: trace.Span{Name: name}, Parent: parent}
	}
	tr := &trace.Trace{Frames: []trace.PyFrame{
		frame("torch/nn/modules/module.py(1750): _call_impl", trace.None), // 0 r
		frame("<built-in method apply>", 0),                               // 1 q
		frame("torch/autograd/function.py(575): apply", 1),                // 2 p
		frame("<built-in method mul>", 2),                                 // 3 f
		frame("<built-in method add>", 1),                                 // 4 g
	}}
	want := map[trace.Index]trace.Index{0: 0, 1: 0, 2: 2, 3: 2, 4: 0}
	for _, first := range []trace.Index{3, 4, 0, 1, 2} {
		u := NewUserFrames(tr)
		u.Of(first)
		for f, w := range want {
			if got := u.Of(f); got != w {
				t.Errorf("asked %d first: Of(%d) = %d, want %d", first, f, got, w)
			}
		}
	}
}
