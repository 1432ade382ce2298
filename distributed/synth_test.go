package distributed

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// kern is one kernel of a hand-made rank trace (µs).
type kern struct {
	name    string
	ts, dur float64
	seq     int // -1: no Seq argument; -2: no communication args at all
	group   string
	host    bool // a user_annotation on the host instead of a kernel
}

// writeRank writes a small Kineto trace for one rank: steps of stepUs, the
// given kernels (communication args on the kernel event itself), and
// distributedInfo unless rank < 0.
func writeRank(t *testing.T, dir, file string, rank, world int, steps int, stepUs float64, ks []kern) string {
	t.Helper()
	var ev []string
	for s := 0; s < steps; s++ {
		ev = append(ev, fmt.Sprintf(`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%.3f,"dur":%.3f,"args":{}}`, s, float64(s)*stepUs, stepUs))
	}
	for i, k := range ks {
		if k.host {
			ev = append(ev, fmt.Sprintf(`{"ph":"X","cat":"user_annotation","name":%q,"pid":1,"tid":1,"ts":%.3f,"dur":%.3f,"args":{}}`, k.name, k.ts, k.dur))
			continue
		}
		args := fmt.Sprintf(`"correlation":%d,"device":0,"stream":7`, 100+i)
		if k.seq != -2 {
			g := k.group
			if g == "" {
				g = "0"
			}
			args += fmt.Sprintf(`,"Collective name":"allreduce","In msg nelems":1048576,"Out msg nelems":1048576,"Group size":%d,"dtype":"Float","Process Group Name":%q,"Process Group Description":"mesh_dp {\"weird\": [brace]}","Process Group Ranks":"[0, 1]"`, world, g)
			if k.seq >= 0 {
				args += fmt.Sprintf(`,"Seq":%d`, k.seq)
			}
		}
		ev = append(ev, fmt.Sprintf(`{"ph":"X","cat":"kernel","name":%q,"pid":0,"tid":7,"ts":%.3f,"dur":%.3f,"args":{%s}}`, k.name, k.ts, k.dur, args))
	}
	head := `{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3"}],`
	if rank >= 0 {
		head += fmt.Sprintf(`"distributedInfo":{"backend":"nccl","rank":%d,"world_size":%d,"pg_config":[{"pg_name":"0","pg_desc":"default_pg","pg_size":%d,"ranks":[0,1]}]},`, rank, world, world)
	}
	body := head + `"traceEvents":[` + strings.Join(ev, ",\n") + "]}"
	p := filepath.Join(dir, file)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// allreduces makes n all-reduce kernels, one per step of stepUs, each
// starting at start+step and lasting dur (Seq = position when seq).
func allreduces(n int, stepUs, start, dur float64, seq bool) []kern {
	var ks []kern
	for i := 0; i < n; i++ {
		s := -1
		if seq {
			s = i
		}
		ks = append(ks, kern{name: "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ts: float64(i)*stepUs + start, dur: dur, seq: s})
		ks = append(ks, kern{name: "sm90_xmma_gemm_f32", ts: float64(i)*stepUs + 10, dur: start - 20, seq: -2})
	}
	return ks
}

func TestStragglerAndClockOffset(t *testing.T) {
	dir := t.TempDir()
	// Rank 1 arrives 3 ms late at every all-reduce; both leave together.
	writeRank(t, dir, "a.json", 0, 2, 5, 20000, allreduces(5, 20000, 5000, 4000, true))
	writeRank(t, dir, "b.json", 1, 2, 5, 20000, allreduces(5, 20000, 8000, 1000, true))
	run, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Collectives) != 5 || len(run.Unmatched) != 0 {
		t.Fatalf("matched %d, unmatched %+v", len(run.Collectives), run.Unmatched)
	}
	sc, _ := run.Straggler()
	if !sc.Is || run.Ranks[sc.Index].Rank != 1 || sc.Late.Micros() != 3000 {
		t.Errorf("straggler %+v, want rank 1, 3 ms per step", sc)
	}
	if got := run.Stats[0].Wait.Micros(); got != 15000 {
		t.Errorf("rank 0 waits %v µs, want 15000", got)
	}
	if got := run.Stats[0].Transfer.Micros(); got != 5000 {
		t.Errorf("transfer %v µs, want 5 × 1000", got)
	}

	// The same run with rank 1's clock 40 ms ahead: the offset is found
	// from the end times and the straggler is still rank 1 by 3 ms.
	dir2 := t.TempDir()
	writeRank(t, dir2, "rank0.json", -1, 2, 5, 20000, allreduces(5, 20000, 5000, 4000, true))
	ks := allreduces(5, 20000, 8000+40000, 1000, true)
	writeRank(t, dir2, "rank_1.json", -1, 2, 5, 20000, ks)
	run2, err := Load([]string{filepath.Join(dir2, "*.json")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if run2.Ranks[1].Rank != 1 || run2.Ranks[1].RankFrom != "file name" {
		t.Errorf("rank from file name: %+v", run2.Ranks[1])
	}
	if !run2.ClockCorrected || run2.Clocks[1].Offset.Micros() != 40000 || run2.Clocks[1].Residual != 0 {
		t.Errorf("clock %+v corrected=%v, want 40 ms ± 0", run2.Clocks[1], run2.ClockCorrected)
	}
	sc2, _ := run2.Straggler()
	if run2.Ranks[sc2.Index].Rank != 1 || sc2.Late.Micros() != 3000 {
		t.Errorf("after clock correction: %+v", sc2)
	}
}

// TestExposedAndSlowCommunication: all-reduces of 4 MiB with no compute
// under them, taking 4 ms each on an H100 (1 GB/s where NVLink allows
// ~360 GB/s): exposed-comm for the dp dimension with the DDP fix, and
// comm-bandwidth.
func TestExposedAndSlowCommunication(t *testing.T) {
	dir := t.TempDir()
	writeRank(t, dir, "r0.json", 0, 2, 5, 20000, allreduces(5, 20000, 5000, 4000, true))
	writeRank(t, dir, "r1.json", 1, 2, 5, 20000, allreduces(5, 20000, 5000, 4000, true))
	run, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := Analyze(run, ReadRankTrace, Options{})
	got := map[string]Finding{}
	for _, f := range res.Findings {
		got[f.ID] = f
	}
	ex, ok := got[IDExposedComm]
	if !ok || ex.Subject != "dimension dp" || !strings.Contains(ex.Fix, "bucket_cap_mb") || ex.SavingUs != 4000 {
		t.Errorf("exposed-comm: %+v", ex)
	}
	bw, ok := got[IDCommBandwidth]
	// 4 MiB in 4 ms; expected 20 µs + 4 MiB / (0.8 × 450 GB/s).
	wantLost := 4000 - (20 + float64(4<<20)/(0.8*450e9)*1e6)
	if !ok || bw.SavingUs < wantLost-0.01 || bw.SavingUs > wantLost+0.01 {
		t.Errorf("comm-bandwidth: %+v, want %.2f µs lost per step", bw, wantLost)
	}
	if _, ok := got[IDStraggler]; ok {
		t.Error("straggler on ranks that arrive together")
	}
}

// TestComputeVersusHostStraggler: rank 1 arrives 3 ms late at every
// all-reduce, once because it runs an extra 3 ms kernel first (compute),
// once because its host spends 3 ms in a range with the GPU idle (host).
func TestComputeVersusHostStraggler(t *testing.T) {
	// steps builds 5 steps of 20 ms: each step's kernels from body, then
	// the all-reduce (Seq = step) from arrive µs, ending at 9 ms.
	steps := func(arrive float64, body func(at float64) []kern) []kern {
		var ks []kern
		for s := 0; s < 5; s++ {
			at := float64(s) * 20000
			ks = append(ks, body(at)...)
			ks = append(ks, kern{name: "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ts: at + arrive, dur: 9000 - arrive, seq: s})
		}
		return ks
	}
	main := func(at float64) kern { return kern{name: "sm90_gemm_main", ts: at + 10, dur: 4970, seq: -2} }
	fast := steps(5000, func(at float64) []kern { return []kern{main(at)} })
	compute := steps(8000, func(at float64) []kern {
		return []kern{main(at), {name: "sm90_gemm_extra", ts: at + 4990, dur: 3000, seq: -2}}
	})
	host := steps(8000, func(at float64) []kern {
		m := main(at)
		m.ts += 3000
		return []kern{{name: "dataloader.next", ts: at + 1, dur: 2998, host: true}, m}
	})
	for _, c := range []struct {
		kind, cause string
		rank1       []kern
	}{{ComputeStraggler, "sm90_gemm_extra", compute}, {HostStraggler, "dataloader.next", host}} {
		dir := t.TempDir()
		writeRank(t, dir, "rank0.json", 0, 2, 5, 20000, fast)
		writeRank(t, dir, "rank1.json", 1, 2, 5, 20000, c.rank1)
		run, err := Load([]string{dir}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := Analyze(run, ReadRankTrace, Options{}).Straggler
		if s == nil || s.Rank != 1 || s.Kind != c.kind || s.LateUs != 3000 || !strings.Contains(s.Sentence, c.cause) {
			t.Errorf("%s straggler: %+v", c.kind, s)
		}
	}
}

func TestBalancedRunHasNoStraggler(t *testing.T) {
	dir := t.TempDir()
	writeRank(t, dir, "r0.json", 0, 2, 5, 20000, allreduces(5, 20000, 5000, 1000, false))
	writeRank(t, dir, "r1.json", 1, 2, 5, 20000, allreduces(5, 20000, 5010, 990, false))
	run, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := Analyze(run, ReadRankTrace, Options{})
	for _, f := range res.Findings {
		if f.ID == IDStraggler {
			t.Errorf("straggler on a balanced run: %s", f.Title)
		}
	}
	if len(run.Collectives) != 5 || !run.Collectives[0].SeqFromOrder {
		t.Errorf("matched by order: %d collectives", len(run.Collectives))
	}
}

// TestMatchByOrderAlignment: rank 1's profiler window opened one
// collective earlier; the alignment check finds the shift from the
// message sizes and reports the extra kernel as unmatched.
func TestMatchByOrderAlignment(t *testing.T) {
	dir := t.TempDir()
	k0 := allreduces(4, 20000, 5000, 1000, false)
	k1 := append([]kern{{name: "ncclDevKernel_AllGather_RING_LL", ts: 1, dur: 50, seq: -2}}, allreduces(4, 20000, 5000, 1000, false)...)
	writeRank(t, dir, "rank0.json", 0, 2, 4, 20000, k0)
	writeRank(t, dir, "rank1.json", 1, 2, 4, 20000, k1)
	run, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Collectives) != 4 {
		t.Errorf("matched %d, want 4", len(run.Collectives))
	}
	if len(run.Unmatched) != 1 || run.Unmatched[0].Rank != 1 || run.Unmatched[0].Count != 1 {
		t.Errorf("unmatched %+v, want rank 1's extra all-gather", run.Unmatched)
	}
}

// TestUserCommPattern: a custom collective kernel counts as communication
// only with the user's pattern.
func TestUserCommPattern(t *testing.T) {
	dir := t.TempDir()
	for r := 0; r < 2; r++ {
		writeRank(t, dir, fmt.Sprintf("rank%d.json", r), r, 2, 2, 20000, []kern{
			{name: "my_ring_allreduce_kernel", ts: 100, dur: 50, seq: 0}, {name: "my_ring_allreduce_kernel", ts: 20100, dur: 50, seq: 1}})
	}
	plain, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	custom, err := Load([]string{dir}, Options{CommKernel: regexp.MustCompile(`^my_ring_`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Collectives) != 0 || len(custom.Collectives) != 2 || custom.Collectives[0].Kind != AllReduce {
		t.Errorf("without pattern %d collectives, with %d (%+v)", len(plain.Collectives), len(custom.Collectives), custom.Collectives)
	}
}

func TestMissingRankAndWorldSize(t *testing.T) {
	dir := t.TempDir()
	writeRank(t, dir, "r0.json", 0, 4, 2, 20000, allreduces(2, 20000, 5000, 1000, true))
	writeRank(t, dir, "r2.json", 2, 4, 2, 20000, allreduces(2, 20000, 5000, 1000, true))
	run, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if run.WorldSize != 4 || fmt.Sprint(run.Missing) != "[1 3]" {
		t.Errorf("world %d missing %v, want 4 and [1 3]", run.WorldSize, run.Missing)
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	writeRank(t, dir, "r0.json", 0, 2, 1, 20000, allreduces(1, 20000, 5000, 1000, true))
	writeRank(t, dir, "r0b.json", 0, 2, 1, 20000, allreduces(1, 20000, 5000, 1000, true))
	if _, err := Load([]string{dir}, Options{}); err == nil || !strings.Contains(err.Error(), "rank 0") {
		t.Errorf("duplicate rank: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "rank1.json")
	os.WriteFile(bad, []byte(`{"traceEvents":[{"ph":"X","name":"x","ts":1,`), 0o644)
	// A broken rank is left out and named; the run is incomplete (issue 27).
	if run, err := Load([]string{bad, filepath.Join(dir, "r0.json")}, Options{}); err != nil || len(run.Unreadable) != 1 || !strings.Contains(run.Unreadable[0], "rank1.json") {
		t.Errorf("broken JSON: %v", err)
	}
	if _, err := Load([]string{t.TempDir()}, Options{}); err == nil || !strings.Contains(err.Error(), "no trace files") {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := Load([]string{filepath.Join(dir, "*.nothing")}, Options{}); err == nil || !strings.Contains(err.Error(), "no file matches") {
		t.Errorf("empty glob: %v", err)
	}
}

func TestScannerOddJSON(t *testing.T) {
	// Strings with braces, escaped quotes and backslashes around the
	// communication args; distributedInfo after traceEvents; a chunk
	// boundary at every byte.
	doc := `{"traceEvents":[{"name":"a\"{[","args":{"x":"\\"}},` +
		`{"ph":"X","cat":"kernel","name":"nccl}","args":{"correlation":5,"Collective name":"_allgather_base","In msg nelems":4,"Out msg nelems":8,"dtype":"BFloat16","Seq":"12","Process Group Name":"7"}}],` +
		`"distributedInfo":{"rank":3,"world_size":8}}`
	for _, step := range []int{1, 7, len(doc)} {
		s := newCommScanner()
		for i := 0; i < len(doc); i += step {
			s.Write([]byte(doc[i:min(i+step, len(doc))]))
		}
		a, ok := s.byCorr[5]
		if !ok || a.Collective != "_allgather_base" || a.Seq != 12 || a.GroupName != "7" || a.OutNelems != 8 {
			t.Errorf("step %d: args %+v ok=%v", step, a, ok)
		}
		if string(s.dist) != `{"rank":3,"world_size":8}` {
			t.Errorf("step %d: distributedInfo %q", step, s.dist)
		}
	}
	// Chrome array form: events at depth 1.
	s := newCommScanner()
	s.Write([]byte(`[{"cat":"cpu_op","name":"record_param_comms","args":{"External id":9,"Collective name":"allreduce"}}]`))
	if s.byExtID[9].Collective != "allreduce" {
		t.Errorf("array form: %+v", s.byExtID)
	}
}

func TestCollectiveNames(t *testing.T) {
	for _, c := range []struct{ arg, kernel, want string }{
		{"", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", AllReduce},
		{"_allgather_base", "ncclDevKernel_Generic", AllGather},
		{"", "ncclKernel_ReduceScatter_RING_LL_Sum_bf16", ReduceScatter},
		{"", "rcclGenericKernel_AllToAll", AllToAll},
		{"", "ncclDevKernel_SendRecv", SendRecv},
	} {
		if got := CollectiveKind(c.arg, c.kernel); got != c.want {
			t.Errorf("CollectiveKind(%q, %q) = %q, want %q", c.arg, c.kernel, got, c.want)
		}
	}
	for _, n := range []string{"ncclDevKernel_Generic", "NCCLKERNEL_x", "rccl_allreduce"} {
		if !IsCommKernel(n, nil) {
			t.Errorf("%s not communication", n)
		}
	}
	if IsCommKernel("sm90_gemm", nil) {
		t.Error("a GEMM counted as communication")
	}
	if BusFactor(AllReduce, 8) != 1.75 || BusFactor(AllGather, 4) != 0.75 || BusFactor(Broadcast, 4) != 1 {
		t.Error("NCCL bus factors")
	}
	for desc, want := range map[string]string{"mesh_dp": "dp", "mesh_tp": "tp", "default_pg": "default", "pp-stage": "pp", "custom": "custom"} {
		if got := Dimension(desc, "1"); got != want {
			t.Errorf("Dimension(%q) = %q, want %q", desc, got, want)
		}
	}
}
