package capture

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestCUPTICost: the fake CUPTI's API record takes 100 ns of the host clock
// inside each launch call when records are on, and nothing when paused, so
// every paired round must measure exactly +100 ns per launch call and per
// launch of the step, whatever the call costs otherwise (here a stall on
// every seventh launch moves the mean, not the medians).
func TestCUPTICost(t *testing.T) {
	opt := DefaultOptions("launch-overhead")
	opt.Size, opt.Steps = "20", 2
	plain, _, err := fakeRunTimed(t, opt, func(d *fakeDriver) { d.stallEvery, d.stallNs = 7, 5000 }, true)
	if err != nil {
		t.Fatal(err)
	}
	opt.CUPTICostRounds = 5
	res, d, err := fakeRunTimed(t, opt, func(d *fakeDriver) { d.stallEvery, d.stallNs = 7, 5000 }, true)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Session.CUPTICost
	if c == nil {
		t.Fatal("no CUPTI cost measured")
	}
	want := CUPTICost{Rounds: 5, Launches: 20, CallOffNs: c.CallOffNs, CallOnNs: c.CallOffNs + 100,
		CallDiff: Quartiles{100, 100, 100}, StepDiff: Quartiles{100, 100, 100}}
	if *c != want {
		t.Fatalf("cost %+v, want %+v", *c, want)
	}
	if c.CallOffNs <= 0 {
		t.Fatalf("median call without records %d ns", c.CallOffNs)
	}
	if d.act.paused {
		t.Fatal("CUPTI left paused")
	}
	// The unrecorded steps leave the recorded trace as it was.
	if !reflect.DeepEqual(plain.Session.Steps, res.Session.Steps) || !reflect.DeepEqual(plain.Session.Ops, res.Session.Ops) {
		t.Fatal("cost rounds changed the recorded steps")
	}
	if !reflect.DeepEqual(plain.Trace.Events, res.Trace.Events) {
		t.Fatal("cost rounds changed the trace's events")
	}
	var buf bytes.Buffer
	if err := res.Trace.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Capture struct {
			Cost struct {
				Rounds int   `json:"rounds"`
				Added  []int `json:"launch_call_added_ns"`
			} `json:"cupti_cost"`
		} `json:"tracelens_capture"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Capture.Cost.Rounds != 5 || !reflect.DeepEqual(doc.Capture.Cost.Added, []int{100, 100, 100}) {
		t.Fatalf("trace metadata cupti_cost %+v", doc.Capture.Cost)
	}
	var sum strings.Builder
	if err := res.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "inside the launch call +0.100 us (IQR +0.100 to +0.100") {
		t.Fatalf("summary does not give the cost:\n%s", sum.String())
	}
}

// TestCUPTICostOnlyWithCUPTI: event timing has no CUPTI to switch, so the
// cost is not measured (and the command refuses the flag).
func TestCUPTICostOnlyWithCUPTI(t *testing.T) {
	opt := DefaultOptions("launch-overhead")
	opt.Size, opt.Steps, opt.CUPTICostRounds = "5", 1, 3
	res, _, err := fakeRunTimed(t, opt, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Session.CUPTICost != nil {
		t.Fatal("cost measured without CUPTI")
	}
}

func TestQuartiles(t *testing.T) {
	// numpy.percentile(v, [25, 50, 75]) (linear), rounded half away from 0.
	for _, tc := range []struct {
		v    []int64
		want Quartiles
	}{
		{nil, Quartiles{}},
		{[]int64{7}, Quartiles{7, 7, 7}},
		{[]int64{50, 10, 40, 20, 30}, Quartiles{20, 30, 40}},
		{[]int64{4, 1, 3, 2}, Quartiles{2, 3, 3}},                // 1.75, 2.5, 3.25
		{[]int64{-300, 100, -100, 700}, Quartiles{-150, 0, 250}}, // -150, 0, 250
	} {
		if got := quartiles(tc.v); got != tc.want {
			t.Errorf("quartiles(%v) = %+v, want %+v", tc.v, got, tc.want)
		}
	}
}

// TestCUPTICallWithoutGPURecord: a copy workload recorded without CUPTI's
// memcpy records (a kind ForWorkload would not have left off) fails and
// names the call, instead of writing a trace whose steps lack their copies.
func TestCUPTICallWithoutGPURecord(t *testing.T) {
	opt := DefaultOptions("memcpy-pinned")
	opt.Size, opt.Steps = "1K:16K", 1
	_, _, err := fakeRunTimed(t, opt, func(d *fakeDriver) { d.act.noCopies = true }, true)
	if err == nil || !strings.Contains(err.Error(), "no GPU work for 3 of its 3 calls") || !strings.Contains(err.Error(), "cuMemcpyHtoD_v2") {
		t.Fatalf("error %v, want the copies without records named", err)
	}
	for _, w := range Workloads() {
		c := ForWorkload(w, false)
		names := strings.Join(c.kindNames(), ", ")
		if w.Copies != strings.Contains(names, "memcpy") && !w.Library {
			t.Errorf("%s: kinds %s", w.Name, names)
		}
		if w.Library != strings.Contains(names, "runtime API") {
			t.Errorf("%s: kinds %s", w.Name, names)
		}
	}
	if n := ForWorkload(Workload{}, true).kindNames(); !slices.Contains(n, "runtime API") {
		t.Errorf("--cupti-api all: kinds %v lack the runtime API", n)
	}
}
