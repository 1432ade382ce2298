package analyze

import (
	"math/rand/v2"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestStepCursor: the cursor answers StepOf for times in order, out of
// order and between, over steps with gaps, touching steps, one step
// inside another (ends not in order) and none.
func TestStepCursor(t *testing.T) {
	step := func(a, b trace.Time) trace.Step { return trace.Step{Span: trace.Span{Start: a, End: b}} }
	for _, steps := range [][]trace.Step{
		nil,
		{step(10, 20)},
		{step(10, 20), step(20, 30), step(35, 40), step(40, 41), step(60, 90)},
		{step(10, 50), step(20, 30), step(40, 60)},
	} {
		tr := &trace.Trace{Steps: steps}
		rng := rand.New(rand.NewPCG(1, 2))
		var times []trace.Time
		for at := trace.Time(0); at < 100; at++ {
			times = append(times, at)
		}
		for range 300 {
			times = append(times, trace.Time(rng.IntN(100)))
		}
		c := newStepCursor(tr)
		for _, at := range times {
			if got, want := c.of(at), tr.StepOf(at); got != want {
				t.Fatalf("steps %v: of(%d) = %d, StepOf = %d", steps, at, got, want)
			}
		}
	}
}
