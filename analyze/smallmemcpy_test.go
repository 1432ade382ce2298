package analyze

import (
	"testing"

	"github.com/tracelens/tracelens/trace"
)

func TestSmallMemcpyBuilt(t *testing.T) {
	// 4 copies of 4 bytes a step, each blocking the host 20µs in its call:
	// 240µs over 3 steps; batching them into one saves 3 of the 4 calls,
	// 80µs × 3/4 = 60µs a step.
	f := oneFinding(t, copyTrace(4, 4, trace.Pinned, 2), SmallMemcpy)
	checkNear(t, "copies per step", measureOf(t, f, "copies per step"), 4)
	checkNear(t, "host blocked", measureOf(t, f, "host blocked"), 3*4*20)
	checkNear(t, "saving", f.SavingUs, 60)
	// Two a step: under SmallMemcpyMinPerStep.
	noFinding(t, copyTrace(SmallMemcpyMinPerStep-1, 4, trace.Pinned, 2), SmallMemcpy)
}
