package distributed

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracelens/tracelens/fixtures/genranks"
)

// kindRuns are the generated runs of TestGeneratedKinds: the real DDP
// ranks with their all-reduces turned into send/recv (a 2-stage
// pipeline, rank 0's host delayed 6 ms a step in pp_bubble) or
// all-to-all (4 ranks, rank 2's messages and kernels 2× in a2a_skewed).
var kindRuns = []struct {
	name, kind string
	ranks      int
	delayed    int
	scale      func(rank int) float64
}{
	{"pp_balanced", SendRecv, 2, -1, nil},
	{"pp_bubble", SendRecv, 2, 0, nil},
	{"a2a_balanced", AllToAll, 4, -1, nil},
	{"a2a_skewed", AllToAll, 4, -1, func(r int) float64 {
		if r == 2 {
			return 2
		}
		return 1
	}},
}

// genKindRun writes one of kindRuns under dir/name.
func genKindRun(t *testing.T, srcs []*genranks.Source, dir string, i int) string {
	k := kindRuns[i]
	out := filepath.Join(dir, k.name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	paths, err := genranks.Generate(out, srcs, genranks.Options{Ranks: k.ranks, Size: 1, Straggler: k.delayed, Delay: 6_000_000, Gzip: true})
	if err != nil {
		t.Fatal(err)
	}
	for r, p := range paths {
		scale := 1.0
		if k.scale != nil {
			scale = k.scale(r)
		}
		if err := genranks.Retype(p, r, k.kind, scale); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestGeneratedKinds checks the pipeline and all-to-all figures on runs
// generated from real ranks against testdata/kinds.json, written by
// kinds.py from the same runs (TRACELENS_KEEP_KINDS=DIR keeps them there),
// and that the findings appear only where the imbalance was injected.
func TestGeneratedKinds(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and reads real-sized rank traces")
	}
	srcs := sourceRanks(t)
	dir := os.Getenv("TRACELENS_KEEP_KINDS")
	if dir == "" {
		dir = t.TempDir()
	}
	raw, err := os.ReadFile("testdata/kinds.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		Pipeline []StageRow    `json:"pipeline"`
		AllToAll []AllToAllRow `json:"all_to_all"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	dirs := make([]string, len(kindRuns))
	for i := range kindRuns {
		dirs[i] = genKindRun(t, srcs, dir, i)
	}
	for i, k := range kindRuns {
		run, err := Load([]string{dirs[i]}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		res := Analyze(run, nil, Options{})
		w := want[k.name]
		if len(res.Pipeline) != len(w.Pipeline) || len(res.AllToAll) != len(w.AllToAll) {
			t.Fatalf("%s: %d stages, %d all-to-all rows; want %d, %d", k.name, len(res.Pipeline), len(res.AllToAll), len(w.Pipeline), len(w.AllToAll))
		}
		for j, g := range res.Pipeline {
			e := w.Pipeline[j]
			if g.Rank != e.Rank || g.Calls != e.Calls || g.BytesPerStep != e.BytesPerStep {
				t.Errorf("%s stage %d: %+v, want %+v", k.name, j, g, e)
			}
			near(t, k.name+" compute", g.BusyUs, e.BusyUs, 1)
			near(t, k.name+" send/recv", g.P2PUs, e.P2PUs, 1)
			near(t, k.name+" bubble", g.BubbleUs, e.BubbleUs, 1)
		}
		for j, g := range res.AllToAll {
			e := w.AllToAll[j]
			if g.Rank != e.Rank || g.Calls != e.Calls || g.BytesPerStep != e.BytesPerStep {
				t.Errorf("%s all-to-all %d: %+v, want %+v", k.name, j, g, e)
			}
			near(t, k.name+" all-to-all time", g.TimeUs, e.TimeUs, 1)
		}
		has := map[string]bool{}
		for _, f := range res.Findings {
			has[f.ID] = true
		}
		if has[IDPipelineBubble] != (k.name == "pp_bubble") || has[IDAllToAllImbalance] != (k.name == "a2a_skewed") {
			t.Errorf("%s: findings %v", k.name, has)
		}
	}
}
