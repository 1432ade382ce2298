package capture

import "testing"

// TestLaunchCallMedian: a step's median call time ignores the rare call
// that stalls, which the mean does not. Every fifth launch stalls 10 µs, so
// each 10-launch step has two stalled calls: its median call time is that
// of a launch without stall (measured in a run without stalls) and its mean
// that plus 2 × 10 µs / 10, in each timing mode.
func TestLaunchCallMedian(t *testing.T) {
	const stall = 10_000
	for _, mode := range []struct {
		name          string
		cupti, events bool
	}{{"cupti", true, true}, {"events", false, true}, {"steps", false, false}} {
		t.Run(mode.name, func(t *testing.T) {
			opt := DefaultOptions("launch-overhead")
			opt.Size, opt.Steps, opt.PerLaunchTiming = "10", 3, mode.events
			plain, _, err := fakeRunTimed(t, opt, nil, mode.cupti)
			if err != nil {
				t.Fatal(err)
			}
			base := plain.Session.Steps[0].LaunchCallNs / int64(plain.Session.Steps[0].Launches)
			res, _, err := fakeRunTimed(t, opt, func(d *fakeDriver) { d.stallEvery, d.stallNs = 5, stall }, mode.cupti)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range res.Session.Steps {
				if st.Launches != 10 {
					t.Fatalf("step %d: %d launches, want 10", st.Step, st.Launches)
				}
				if st.LaunchCallMedianNs != base {
					t.Errorf("step %d: median call %d ns, want %d (a call without stall)", st.Step, st.LaunchCallMedianNs, base)
				}
				if mean := st.LaunchCallNs / int64(st.Launches); mean != base+2*stall/10 {
					t.Errorf("step %d: mean call %d ns, want %d", st.Step, mean, base+2*stall/10)
				}
			}
			if len(res.Session.Notes) == 0 {
				t.Fatal("no notes")
			}
		})
	}
}
