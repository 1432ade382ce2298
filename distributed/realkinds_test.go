package distributed

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// expectedKinds is the part of testdata/expected.json (expect.py) about
// each rank's GPU busy time and the pipeline and all-to-all rows.
type expectedKinds struct {
	Ranks map[string]struct {
		GPUBusyUs    float64 `json:"gpu_busy_us"`
		GPUSpinUs    float64 `json:"gpu_spin_us"`
		GPUBusyShare float64 `json:"gpu_busy_share"`
		GPUSpinShare float64 `json:"gpu_spin_share"`
	} `json:"ranks"`
	Pipeline map[string]struct {
		ComputeUs float64 `json:"compute_per_step_us"`
		P2PUs     float64 `json:"p2p_kernel_per_step_us"`
		Bytes     int64   `json:"p2p_bytes_per_step"`
		BubbleUs  float64 `json:"bubble_per_step_us"`
	} `json:"pipeline"`
	AllToAll map[string]struct {
		Calls     int     `json:"calls"`
		Bytes     int64   `json:"bytes_per_step"`
		TimeUs    float64 `json:"kernel_per_step_us"`
		OverMean  float64 `json:"bytes_over_mean"`
		OthersWUs float64 `json:"others_wait_per_step_us"`
	} `json:"all_to_all"`
}

// TestRealRunsGPUBusyWithoutSpin: every rank's GPU busy time with its
// spinning NCCL kernels counted as waiting (the figure every face shows
// per rank) matches the script's, on every real run.
func TestRealRunsGPUBusyWithoutSpin(t *testing.T) {
	exp := loadJSON[map[string]expectedKinds](t, "testdata/expected.json")
	for name, dir := range runDirs(t) {
		want, ok := exp[name]
		if !ok {
			continue
		}
		res := loadAnalyzed(t, dir)
		for _, row := range res.Ranks {
			w := want.Ranks[strconv.Itoa(row.Rank)]
			p := name + " rank " + strconv.Itoa(row.Rank) + " "
			near(t, p+"gpu_busy_us", row.GPUBusyUs, w.GPUBusyUs, 1)
			near(t, p+"gpu_spin_us", row.GPUSpinUs, w.GPUSpinUs, 1)
			near(t, p+"gpu_busy_share", row.GPUBusyShare, w.GPUBusyShare, 1e-4)
			near(t, p+"gpu_spin_share", row.GPUSpinShare, w.GPUSpinShare, 1e-4)
		}
	}
}

// TestRealRunsPipelineAndAllToAll: on the recorded pipeline-parallel and
// MoE runs (fixtures/runs/README.md), the per-stage and per-rank rows match
// the script, and the findings are the ones the runs were made to show:
// a pipeline bubble naming the slow stage on the unbalanced pipeline, an
// all-to-all imbalance on the skewed MoE run and not on the balanced one,
// and a straggler that shifts on the transient run.
func TestRealRunsPipelineAndAllToAll(t *testing.T) {
	exp := loadJSON[map[string]expectedKinds](t, "testdata/expected.json")
	dirs := runDirs(t)
	for _, c := range []struct {
		run         string
		must, not   []string
		text, ranks string
	}{
		{run: "pp_unbalanced", must: []string{IDPipelineBubble}, not: []string{IDAllToAllImbalance, IDStraggler}, text: "against rank 1's"},
		{run: "pp_mlp", must: []string{IDPipelineBubble}, not: []string{IDAllToAllImbalance, IDStraggler}},
		{run: "moe_skewed", must: []string{IDAllToAllImbalance}, not: []string{IDPipelineBubble}, ranks: "1"},
		{run: "moe_balanced", not: []string{IDAllToAllImbalance, IDStraggler, IDPipelineBubble}},
		{run: "transient", must: []string{IDStraggler}, text: "shifts between steps (rank 1 in steps 1–2; rank 0 in steps 4–6)", not: []string{IDAllToAllImbalance, IDPipelineBubble}},
		// Issue 30's 4-GPU recordings (capture_issue30.py). Pipelines:
		// the bubble, not exposed communication (the stages' waiting is
		// the bubble) and no straggler.
		{run: "pp2_gpipe", must: []string{IDPipelineBubble}, not: []string{IDStraggler, IDExposedComm, IDAllToAllImbalance}, text: "8 micro-batches"},
		{run: "pp2_1f1b", must: []string{IDPipelineBubble}, not: []string{IDStraggler, IDExposedComm, IDAllToAllImbalance}, text: "2 stages and 8 micro-batches"},
		{run: "pp4_gpipe", must: []string{IDPipelineBubble}, not: []string{IDStraggler, IDExposedComm, IDAllToAllImbalance}, text: "4 stages and 8 micro-batches"},
		{run: "pp4_1f1b", must: []string{IDPipelineBubble}, not: []string{IDStraggler, IDExposedComm, IDAllToAllImbalance}, text: "4 stages and 8 micro-batches"},
		{run: "moe4_skewed", must: []string{IDAllToAllImbalance}, not: []string{IDPipelineBubble}, ranks: "1"},
		{run: "moe4_balanced", not: []string{IDAllToAllImbalance, IDStraggler, IDPipelineBubble}},
		// The 2-D mesh whose rank 0 is slow on the host: the others'
		// lateness cascades from it through both groups.
		{run: "mesh_tpdp", must: []string{IDStraggler}, ranks: "0", text: "cascades from it"},
		{run: "mesh_tpdp_big", must: []string{IDExposedComm}, not: []string{IDStraggler}},
		// A slow rank against a slow link (NCCL_P2P_DISABLE=1).
		{run: "ddp4_straggler", must: []string{IDStraggler}, not: []string{IDCommBandwidth}, ranks: "2"},
		{run: "ddp4_slowlink", must: []string{IDCommBandwidth}, not: []string{IDStraggler}},
		{run: "ddp4_balanced", not: []string{IDStraggler, IDCommBandwidth, IDExposedComm}},
		// Host-bound 2-rank DDP: rank 0's spin named, the saving bounded
		// by rank 1's own host work.
		{run: "ddp2_hostslow", must: []string{IDStraggler}, ranks: "0", text: "range `slow_host`"},
		{run: "ddp2_hostslow10", must: []string{IDStraggler}, ranks: "0", text: "rank 1's host works"},
	} {
		dir, ok := dirs[c.run]
		if !ok {
			continue
		}
		t.Run(c.run, func(t *testing.T) {
			res, want := loadAnalyzed(t, dir), exp[c.run]
			if len(res.Pipeline) != len(want.Pipeline) || len(res.AllToAll) != len(want.AllToAll) {
				t.Fatalf("%d stages and %d all-to-all rows, want %d and %d", len(res.Pipeline), len(res.AllToAll), len(want.Pipeline), len(want.AllToAll))
			}
			for _, s := range res.Pipeline {
				w := want.Pipeline[strconv.Itoa(s.Rank)]
				p := "stage " + strconv.Itoa(s.Rank) + " "
				near(t, p+"compute per step", s.BusyUs, w.ComputeUs, 1)
				near(t, p+"send/recv per step", s.P2PUs, w.P2PUs, 1)
				near(t, p+"bubble per step", s.BubbleUs, w.BubbleUs, 1)
				if s.BytesPerStep != w.Bytes {
					t.Errorf("%sbytes per step %d, want %d", p, s.BytesPerStep, w.Bytes)
				}
			}
			for _, a := range res.AllToAll {
				w := want.AllToAll[strconv.Itoa(a.Rank)]
				p := "all-to-all rank " + strconv.Itoa(a.Rank) + " "
				near(t, p+"kernel per step", a.TimeUs, w.TimeUs, 1)
				near(t, p+"others' wait per step", a.OthersWaitUs, w.OthersWUs, 1)
				if a.BytesPerStep != w.Bytes || a.Calls != w.Calls {
					t.Errorf("%sbytes per step %d in %d calls, want %d in %d", p, a.BytesPerStep, a.Calls, w.Bytes, w.Calls)
				}
			}
			found := map[string]*Finding{}
			for i := range res.Findings {
				found[res.Findings[i].ID] = &res.Findings[i]
			}
			for _, id := range c.must {
				f := found[id]
				if f == nil {
					t.Errorf("no %s finding", id)
					continue
				}
				if all := f.Title + " " + f.Fix + " " + evidenceText(f); c.text != "" && !strings.Contains(all, c.text) {
					t.Errorf("%s does not say %q: %s", id, c.text, all)
				}
				if c.ranks != "" && strconv.Itoa(f.Ranks[0]) != c.ranks {
					t.Errorf("%s on ranks %v, want %s", id, f.Ranks, c.ranks)
				}
			}
			for _, f := range res.Findings {
				if len(f.Ranks) == 0 {
					t.Errorf("%s names no rank", f.ID)
				}
			}
			// A rank cannot make the others wait longer per step than a
			// step lasts (a pipeline's eager sends wait for no one).
			if f := found[IDStraggler]; f != nil {
				if late, step := measure(t, f, "late per step"), res.Ranks[0].StepMedianUs; late > step {
					t.Errorf("straggler late %.0f µs per step, more than the %.0f µs step", late, step)
				}
			}
			for _, id := range c.not {
				if f := found[id]; f != nil {
					t.Errorf("%s on %s: %s", id, c.run, f.Title)
				}
			}
		})
	}
}

func evidenceText(f *Finding) string {
	var b strings.Builder
	for _, e := range f.Evidence {
		b.WriteString(e.Text + " ")
	}
	return b.String()
}

// loadAnalyzed loads and analyzes the run in dir.
func loadAnalyzed(t *testing.T, dir string) *Result {
	t.Helper()
	run, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return Analyze(run, ReadRankTrace, Options{})
}

// loadJSON reads the JSON file at path into a T.
func loadJSON[T any](t *testing.T, path string) T {
	t.Helper()
	var v T
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRealRunsLateRankPerStep: step by step, the rank the others waited
// for and by how much match the script's step_late on every real run (the
// transient run: rank 1 in steps 1–2, rank 0 in steps 4–6).
func TestRealRunsLateRankPerStep(t *testing.T) {
	exp := loadJSON[map[string]struct {
		StepLate []*[2]float64 `json:"step_late"`
	}](t, "testdata/expected.json")
	for name, dir := range runDirs(t) {
		want, ok := exp[name]
		if !ok {
			continue
		}
		run, _, pat := patternOf(t, dir)
		if len(pat.Late) != len(want.StepLate) {
			t.Errorf("%s: %d steps, want %d", name, len(pat.Late), len(want.StepLate))
			continue
		}
		for i, w := range want.StepLate {
			got := pat.Late[i]
			switch {
			case w == nil && got.Rank >= 0:
				t.Errorf("%s step %d: rank %d late by %s, want none", name, i+1, run.Ranks[got.Rank].Rank, got.Late)
			case w != nil && (got.Rank < 0 || run.Ranks[got.Rank].Rank != int(w[0])):
				t.Errorf("%s step %d: late rank index %d, want rank %v", name, i+1, got.Rank, w[0])
			case w != nil:
				near(t, name+" step "+strconv.Itoa(i+1)+" late", got.Late.Micros(), w[1], 1)
			}
		}
	}
}

// patternOf loads the run in dir and returns it with its straggler
// candidate and that one's step pattern.
func patternOf(t *testing.T, dir string) (*Run, StragglerCandidate, StepPattern) {
	t.Helper()
	run, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := run.Straggler()
	return run, sc, run.stepPattern(sc.Index, sc.Step)
}

// TestRealRunsGroups: per parallelism dimension, the collectives, kinds,
// communication kernel time and exposed time match the script's per
// process group figures (groups named by their description: mesh_tp,
// mesh_dp, default_pg) on every real run.
func TestRealRunsGroups(t *testing.T) {
	exp := loadJSON[map[string]struct {
		Groups map[string]struct {
			Collectives int      `json:"collectives"`
			Kinds       []string `json:"kinds"`
			CommUs      float64  `json:"comm_us"`
			ExposedUs   float64  `json:"exposed_us"`
			Bytes       int64    `json:"bytes"`
		} `json:"groups"`
	}](t, "testdata/expected.json")
	for name, dir := range runDirs(t) {
		want, ok := exp[name]
		if !ok || len(want.Groups) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			res := loadAnalyzed(t, dir)
			got := map[string]DimRow{}
			for _, d := range res.Dimensions {
				got[d.Dimension] = d
			}
			for desc, w := range want.Groups {
				d, ok := got[Dimension(desc, "")]
				if !ok {
					t.Errorf("no dimension for group %s", desc)
					continue
				}
				kinds := slices.Clone(d.Kinds)
				slices.Sort(kinds)
				if d.Collectives != w.Collectives || !slices.Equal(kinds, w.Kinds) {
					t.Errorf("%s: %d collectives %v, want %d %v", desc, d.Collectives, kinds, w.Collectives, w.Kinds)
				}
				tol := 0.01 * float64(w.Collectives)
				near(t, desc+" comm kernel", d.CommKernelUs, w.CommUs, tol)
				near(t, desc+" exposed", d.ExposedCommUs, w.ExposedUs, tol)
				if !slices.Contains(w.Kinds, AllToAll) && d.Bytes != w.Bytes {
					t.Errorf("%s: %d bytes, want %d", desc, d.Bytes, w.Bytes)
				}
			}
		})
	}
}
