package analyze

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// TestUnionRunsIsUnion: the busy union merged from the activities where
// they lie is interval.Union's, per device and with a filter, on models
// sorted as ingest sorts them and on activities in any order (ties,
// touching, empty and nested intervals included).
func TestUnionRunsIsUnion(t *testing.T) {
	r := rand.New(rand.NewSource(27))
	for trial := range 2000 {
		gpu := make([]trace.GPUActivity, r.Intn(60))
		for i := range gpu {
			start := trace.Time(r.Intn(40))
			gpu[i] = trace.GPUActivity{Span: trace.Span{Start: start, End: start + trace.Time(r.Intn(6))},
				Device: int32(r.Intn(2)), Stream: int32(r.Intn(3))}
		}
		if trial%2 == 0 {
			slices.SortFunc(gpu, func(a, b trace.GPUActivity) int {
				if a.Device != b.Device {
					return int(a.Device - b.Device)
				}
				if a.Stream != b.Stream {
					return int(a.Stream - b.Stream)
				}
				return int(a.Start - b.Start)
			})
		}
		keep := func(g int) bool { return gpu[g].Stream != 1 }
		for dev, runs := range deviceRuns(gpu) {
			var all, kept []trace.Span
			for g := range gpu {
				if gpu[g].Device == dev {
					all = append(all, gpu[g].Span)
					if keep(g) {
						kept = append(kept, gpu[g].Span)
					}
				}
			}
			if got, want := unionRuns(gpu, runs, nil, len(all)), interval.BoundsOf(interval.Union(all)); !slices.Equal(got, want) {
				t.Fatalf("trial %d device %d: got %v, want %v", trial, dev, got, want)
			}
			if got, want := unionRuns(gpu, runs, keep, len(kept)), interval.BoundsOf(interval.Union(kept)); !slices.Equal(got, want) {
				t.Fatalf("trial %d device %d, filtered: got %v, want %v", trial, dev, got, want)
			}
		}
	}
}
