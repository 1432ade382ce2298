package analyze

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestOverheadConstantsMatchFit checks the per-event and per-option
// costs (OverheadPerOpUs, OverheadPerShapesOpUs, OverheadPerFrameUs,
// OverheadPerMemoryEventUs) against the least-squares fit that
// fixtures/recorded/expect/overhead.py recorded.
func TestOverheadConstantsMatchFit(t *testing.T) {
	b, err := os.ReadFile("../fixtures/recorded/expect/overhead.json")
	if err != nil {
		t.Fatal(err)
	}
	var fit struct {
		PerOpUs       float64 `json:"per_op_us"`
		PerShapesOpUs float64 `json:"per_shapes_op_us"`
		PerFrameUs    float64 `json:"per_frame_us"`
		PerMemoryUs   float64 `json:"per_memory_event_us"`
	}
	if err := json.Unmarshal(b, &fit); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		fit, konst float64
	}{
		{"per op", fit.PerOpUs, OverheadPerOpUs}, {"per op with record_shapes", fit.PerShapesOpUs, OverheadPerShapesOpUs},
		{"per frame", fit.PerFrameUs, OverheadPerFrameUs}, {"per allocator event", fit.PerMemoryUs, OverheadPerMemoryEventUs},
	} {
		if math.Abs(c.fit-c.konst) > 0.005 {
			t.Errorf("%s: constant %.2f µs, fit %.2f µs", c.name, c.konst, c.fit)
		}
	}
}

// TestLoaderOpCostMatchesFit checks OverheadPerLoaderOpUs against the fit
// fixtures/recorded/expect/overhead_loader.py recorded, and that the
// pairs it was not fitted on are named there as validation.
func TestLoaderOpCostMatchesFit(t *testing.T) {
	b, err := os.ReadFile("../fixtures/recorded/expect/overhead_loader.json")
	if err != nil {
		t.Fatal(err)
	}
	var fit struct {
		PerLoaderOpUs float64 `json:"per_loader_op_us"`
		Validation    []struct {
			Pair string `json:"pair"`
		} `json:"validation"`
	}
	if err := json.Unmarshal(b, &fit); err != nil {
		t.Fatal(err)
	}
	if math.Abs(fit.PerLoaderOpUs-OverheadPerLoaderOpUs) > 0.005 {
		t.Errorf("per loading op: constant %.2f µs, fit %.2f µs", OverheadPerLoaderOpUs, fit.PerLoaderOpUs)
	}
	if len(fit.Validation) == 0 || fit.Validation[0].Pair != "loader_aug" {
		t.Errorf("overhead_loader.json validates on %+v, want loader_aug first", fit.Validation)
	}
}

// TestSortTimes checks the run-merging sort against slices.Sort on
// orders the model gives (a few ascending runs, one per thread), odd run
// counts, many runs (sorted outright) and edge sizes.
func TestSortTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		var v []trace.Time
		runs := 1 + trial%20
		for range runs {
			at := trace.Time(rng.IntN(1000))
			for range rng.IntN(50) {
				at += trace.Time(rng.IntN(5))
				v = append(v, at)
			}
		}
		want := slices.Clone(v)
		slices.Sort(want)
		sortTimes(v)
		if !slices.Equal(v, want) {
			t.Fatalf("trial %d (%d runs): %v, want %v", trial, runs, v, want)
		}
	}
}
