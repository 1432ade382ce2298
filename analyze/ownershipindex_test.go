package analyze

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// ownershipByWalk is the index newOwnership builds, built the plain way:
// the activities placed by their calls' counts, each call's name asked
// of isLaunchCall, each launch call's thread run looked up and stored.
func ownershipByWalk(t *trace.Trace) *OwnershipFacts {
	o := &OwnershipFacts{t: t, byCall: make([]int32, len(t.APICalls)+1), thread: map[trace.Index][2]int{}}
	for i := range t.GPU {
		if l := t.GPU[i].Launch; l != trace.None {
			o.byCall[l+1]++
		}
	}
	for c := range t.APICalls {
		o.byCall[c+1] += o.byCall[c]
	}
	o.launched = make([]int32, o.byCall[len(t.APICalls)])
	fill := slices.Clone(o.byCall[:len(t.APICalls)])
	for i := range t.GPU {
		if l := t.GPU[i].Launch; l != trace.None {
			o.launched[fill[l]] = int32(i)
			fill[l]++
		}
	}
	o.gpu, o.api, o.activities, o.kernelsBy = []trace.Duration{0}, []trace.Duration{0}, []int32{0}, []int32{0}
	for c := range t.APICalls {
		call := &t.APICalls[c]
		lo, hi := o.byCall[c], o.byCall[c+1]
		if hi == lo && !isLaunchCall(call) {
			continue
		}
		r, ok := o.thread[call.Thread]
		if !ok {
			r = [2]int{len(o.calls), len(o.calls)}
		}
		r[1]++
		o.thread[call.Thread] = r
		o.calls = append(o.calls, int32(c))
		var gpu trace.Duration
		var kernels int32
		for _, g := range o.launched[lo:hi] {
			gpu += t.GPU[g].Dur()
			if t.GPU[g].Kind == trace.Kernel {
				kernels++
			}
		}
		n := len(o.gpu) - 1
		o.gpu = append(o.gpu, o.gpu[n]+gpu)
		o.api = append(o.api, o.api[n]+call.Dur())
		o.activities = append(o.activities, o.activities[n]+hi-lo)
		o.kernelsBy = append(o.kernelsBy, o.kernelsBy[n]+kernels)
	}
	return o
}

// assertOwnershipIndex fails unless newOwnership's index of tr is
// ownershipByWalk's, field by field, each call's start beside it, and
// at its size (the fact lives as long as the analysis).
func assertOwnershipIndex(t *testing.T, name string, tr *trace.Trace) {
	t.Helper()
	got, want := newOwnership(tr, newHostTable(tr)), ownershipByWalk(tr)
	if !slices.Equal(got.byCall, want.byCall) || !slices.Equal(got.launched, want.launched) || !slices.Equal(got.calls, want.calls) ||
		!maps.Equal(got.thread, want.thread) || !slices.Equal(got.gpu, want.gpu) || !slices.Equal(got.api, want.api) ||
		!slices.Equal(got.activities, want.activities) || !slices.Equal(got.kernelsBy, want.kernelsBy) {
		t.Fatalf("%s: the index differs from the walk's (%d calls, %d activities launched; the walk's %d, %d)", name, len(got.calls), len(got.launched), len(want.calls), len(want.launched))
	}
	for i, c := range got.calls {
		if got.starts.v[i] != tr.APICalls[c].Start {
			t.Fatalf("%s: launch call %d starts %d, its start column says %d", name, c, tr.APICalls[c].Start, got.starts.v[i])
		}
	}
	// At its size, or within the allocator's rounding of it.
	for _, c := range [][2]int{{len(got.calls), cap(got.calls)}, {len(got.starts.v), cap(got.starts.v)}, {len(got.gpu), cap(got.gpu)}, {len(got.launched), cap(got.launched)}} {
		if c[1] > c[0]+c[0]/8+16 {
			t.Fatalf("%s: a list of %d kept at %d", name, c[0], c[1])
		}
	}
}

// TestOwnershipIndexMatchesWalk: on the recorded traces, and on calls
// whose activities come out of their order, calls named as launches
// that launched nothing, graph launches and threads whose calls are
// interleaved, the one-pass index is the walk's.
func TestOwnershipIndexMatchesWalk(t *testing.T) {
	names, err := filepath.Glob("../fixtures/recorded/*.json.gz")
	if err != nil || len(names) < 10 {
		t.Fatalf("%d recorded traces (%v)", len(names), err)
	}
	for _, path := range names {
		name := "recorded/" + filepath.Base(path)
		assertOwnershipIndex(t, name, load(t, name))
	}
	call := func(name string, th trace.Index, start trace.Time, first trace.Index) trace.APICall {
		return trace.APICall{Span: trace.Span{Name: name, Start: start, End: start + 3}, Thread: th, FirstGPU: first, Op: trace.None}
	}
	act := func(start trace.Time, launch trace.Index, kind trace.GPUKind) trace.GPUActivity {
		return trace.GPUActivity{Span: trace.Span{Name: "k", Start: start, End: start + 7}, Launch: launch, Kind: kind}
	}
	tr := &trace.Trace{
		APICalls: []trace.APICall{
			call("cudaLaunchKernel", 1, 0, 0), call("cudaGraphLaunch", 1, 10, 1), call("cudaStreamSynchronize", 1, 20, trace.None),
			call("cuLaunchKernel", 1, 30, trace.None), call("cudaLaunchKernel", 2, 5, 4), call("cudaLaunchKernel", 1, 40, 3),
			call("cudaLaunchCooperativeKernel", 2, 50, trace.None),
		},
		GPU: []trace.GPUActivity{act(1, 0, trace.Kernel), act(11, 1, trace.Kernel), act(12, 1, trace.Memcpy), act(41, 5, trace.Kernel), act(6, 4, trace.Kernel), act(13, 1, trace.Kernel)},
	}
	assertOwnershipIndex(t, "launches out of order, threads interleaved", tr)
	tr.GPU[3].Launch, tr.GPU[4].Launch = 4, 5 // in order
	assertOwnershipIndex(t, "launches in order", tr)
	tr.GPU = nil
	assertOwnershipIndex(t, "no activity", tr)
}
