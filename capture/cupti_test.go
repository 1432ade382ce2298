package capture

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

func TestCUPTIModeOnFake(t *testing.T) {
	opt := DefaultOptions("elementwise-chain-unfused")
	opt.Size, opt.Steps, opt.Warmup, opt.Pid = "1000", 3, 1, 4242
	res, d, err := fakeRunTimed(t, opt, func(d *fakeDriver) { d.kdur["ew_add"] = 7000 }, true)
	if err != nil {
		t.Fatal(err)
	}
	if d.calls["Record"] != 0 {
		t.Errorf("%d event records in CUPTI mode", d.calls["Record"])
	}
	jt, _ := decode(t, res.Trace)
	launches := map[int64]float64{}
	ops := map[float64]string{} // External id -> cpu_op
	for _, e := range jt.TraceEvents {
		switch {
		case e.Cat == "cuda_driver" && e.Name == "cuLaunchKernel":
			launches[int64(e.Args["correlation"].(float64))] = e.Ts
		case e.Cat == "cpu_op":
			ops[e.Args["External id"].(float64)] = e.Name
		}
	}
	n := 0
	for _, e := range jt.TraceEvents {
		if e.Cat != "kernel" {
			continue
		}
		n++
		c := int64(e.Args["correlation"].(float64))
		if _, ok := launches[c]; !ok {
			t.Errorf("kernel %s correlation %d has no cuLaunchKernel", e.Name, c)
		}
		if op := ops[e.Args["External id"].(float64)]; !strings.HasPrefix(op, "capture::") {
			t.Errorf("kernel %s not linked to its cpu_op (External id %v)", e.Name, e.Args["External id"])
		}
	}
	if n != 9 || len(launches) != 9 {
		t.Fatalf("%d kernels, %d launches; want 3 steps x 3", n, len(launches))
	}
	// The fake runs ew_add for exactly 7 us: CUPTI timestamps have no
	// event rounding.
	if m, c, _ := medianOp(res.Session, "ew_add"); m != 7000 || c != 3 {
		t.Fatalf("ew_add median %d ns over %d, want 7000 over 3", m, c)
	}
	if !strings.Contains(string(must(t, res)), `"timing_mode": "cupti"`) {
		t.Errorf("trace metadata does not say timing_mode cupti")
	}
}

func must(t *testing.T, res *Result) []byte {
	t.Helper()
	var b strings.Builder
	if err := res.Trace.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}

// TestCUPTIMemsetRecord converts a memset record (no workload issues one)
// into Kineto's gpu_memset event.
func TestCUPTIMemsetRecord(t *testing.T) {
	clk := &fakeClock{now: 2_000_000_000_000, tick: 50}
	c := newFakeCUPTI(clk)
	c.buf.APINames["driver/54"] = "cuMemsetD32_v2"
	corr := c.api(ActDriver, 54)
	at := clk.now + 1000
	c.memset(0, 4096, at, at+800, corr)
	bufs, _ := c.Flush()
	acts, err := DecodeActivities(&bufs[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	s := newSession(newFakeDriver(clk), nil, clk, DefaultOptions("launch-overhead"), 1)
	s.convertActivities(acts, cuptiCalibration{Offset: c.base}, 0, clk.now, 9)
	var set, api *TraceEvent
	for i := range s.events {
		switch s.events[i].Cat {
		case "gpu_memset":
			set = &s.events[i]
		case "cuda_driver":
			api = &s.events[i]
		}
	}
	if set == nil || api == nil {
		t.Fatalf("events %+v", s.events)
	}
	if set.Name != "Memset (Device)" || set.DurNs != 800 || set.TsNs != at || argInt(t, set.Args, "bytes") != 4096 {
		t.Errorf("memset event %+v", *set)
	}
	if api.Name != "cuMemsetD32_v2" || argInt(t, api.Args, "correlation") != int64(corr) || argInt(t, api.Args, "External id") != 9 {
		t.Errorf("API event %+v", *api)
	}
}

func TestCUPTIBadRecords(t *testing.T) {
	clk := &fakeClock{now: 2_000_000_000_000, tick: 50}
	c := newFakeCUPTI(clk)
	corr := c.api(ActDriver, 307)
	c.kernel("k", clk.now+100, clk.now+900, corr, Dim3{1, 1, 1}, Dim3{32, 1, 1})
	good, _ := c.Flush()
	kernelAt := good[0].Records[1]
	cases := []struct {
		name string
		edit func(b *ActivityBuffer)
		want string
	}{
		{"short kernel", func(b *ActivityBuffer) { b.Data = b.Data[:kernelAt+60] }, "kernel record of 60 bytes, want at least 112"},
		{"unknown name", func(b *ActivityBuffer) { b.KernelNames = nil }, "has no name"},
		{"end before start", func(b *ActivityBuffer) {
			binary.LittleEndian.PutUint64(b.Data[kernelAt+24:], 1)
		}, "runs from"},
		{"offsets out of order", func(b *ActivityBuffer) { b.Records = []int{kernelAt, 0} }, "out of order"},
	}
	for _, tc := range cases {
		b := good[0]
		b.Data = append([]byte(nil), b.Data...)
		b.Records = append([]int(nil), b.Records...)
		tc.edit(&b)
		_, err := DecodeActivities(&b, 3)
		var ae *ActivityError
		if !errors.As(err, &ae) || ae.Buffer != 3 || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "buffer 3, record at byte") {
			t.Errorf("%s: error %v, want %q naming buffer 3 and a byte offset", tc.name, err, tc.want)
		}
	}
}

func TestCUPTIDroppedRecordsFail(t *testing.T) {
	opt := DefaultOptions("launch-overhead")
	opt.Size, opt.Steps = "3", 1
	_, _, err := fakeRunTimed(t, opt, func(d *fakeDriver) { d.act.dropped = 5 }, true)
	if err == nil || !strings.Contains(err.Error(), "dropped 5") || !strings.Contains(err.Error(), "launch-overhead") {
		t.Fatalf("error %v, want dropped records named", err)
	}
}

func TestCUPTIRecordsOfNewerLayouts(t *testing.T) {
	// CUDA 13 writes longer kernel records (216 bytes): the prefix decodes
	// the same.
	opt := DefaultOptions("elementwise-chain-fused")
	opt.Size, opt.Steps = "64", 2
	res, _, err := fakeRunTimed(t, opt, func(d *fakeDriver) { d.act.recordSize = 216; d.kdur["ew_fused"] = 4321 }, true)
	if err != nil {
		t.Fatal(err)
	}
	if m, n, _ := medianOp(res.Session, "ew_fused"); m != 4321 || n != 2 {
		t.Fatalf("ew_fused median %d over %d, want 4321 over 2", m, n)
	}
}

// BenchmarkConvertCUPTIStep converts one step of 10 000 launches (the
// launch-overhead workload's measured size) from decoded CUPTI records to
// trace events: work done after the last step, outside the timing.
func BenchmarkConvertCUPTIStep(b *testing.B) {
	opt := DefaultOptions("launch-overhead")
	opt.Size, opt.Steps, opt.Warmup, opt.KeepActivity = "10000", 1, 0, true
	clk := &fakeClock{now: 1_700_000_000_000_000_000, tick: 50}
	d := newFakeDriver(clk)
	d.act = newFakeCUPTI(clk)
	res, err := Run(d, d.act, clk, opt)
	if err != nil {
		b.Fatal(err)
	}
	var acts []Activity
	for i := range res.Session.Activity {
		a, err := DecodeActivities(&res.Session.Activity[i], i)
		if err != nil {
			b.Fatal(err)
		}
		acts = append(acts, a...)
	}
	st := res.Session.ActivitySteps[0]
	// One host bracket around each launch's API record, as the session
	// keeps them.
	var calls []hostCall
	for _, a := range acts {
		if a.Kind == ActDriver && a.Name == "cuLaunchKernel" {
			calls = append(calls, hostCall{start: a.Start + st.Offset - 10, end: a.End + st.Offset + 10, ext: 2, inner: -1})
		}
	}
	if len(calls) < 10000 {
		b.Fatalf("%d launches", len(calls))
	}
	b.ResetTimer()
	for b.Loop() {
		s := newSession(d, d.act, clk, opt, 1)
		s.calls = calls
		if i, _ := s.convertActivities(acts, cuptiCalibration{Offset: st.Offset}, st.From+st.Offset, st.To+st.Offset, 1); i >= 0 {
			b.Fatalf("call %d has no GPU record", i)
		}
	}
}
