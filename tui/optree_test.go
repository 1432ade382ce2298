package tui

import (
	"reflect"
	"testing"

	"github.com/tracelens/tracelens/analyze"
)

// TestPlacedOpsBesideTheAnalysis: the op tree whose ops were placed
// beside the analysis is the tree built after it, and ops placed from
// another trace (not the one analyze read) are placed again.
func TestPlacedOpsBesideTheAnalysis(t *testing.T) {
	read := func(name string) *analyze.Result {
		tr, err := fixtureLoader(name)(nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := analyze.Run(tr, analyze.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r, other := read("eggroll_hooks.json.gz"), read("fusedlinear_naive.json.gz")
	v := r.View()
	beside := placeOps(v.Trace()).withGPU(v.Trace(), v.Op)
	stale := placeOps(other.View().Trace()).withGPU(v.Trace(), v.Op)
	if len(beside.nodes) == 0 || len(beside.roots) == 0 {
		t.Fatalf("an empty tree: %d nodes", len(beside.nodes))
	}
	again := placeOps(v.Trace()).withGPU(v.Trace(), v.Op)
	if !reflect.DeepEqual(beside, again) || !reflect.DeepEqual(beside, stale) {
		t.Errorf("trees differ: %d nodes, %d placed again, %d from another trace's ops", len(beside.nodes), len(again.nodes), len(stale.nodes))
	}
}
