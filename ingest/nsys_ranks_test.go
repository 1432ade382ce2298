package ingest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestNsysProcesses: none of the shared exports holds GPU work of two
// processes, so one is made by merging a real export with itself as two
// processes (pids 1001 and 1002, as two MPI ranks on one node would be).
// Read as processes it gives two ranks, each the original export
// (kernels ns-exact, every kernel linked); read as one trace, both
// processes' work with a warning.
func TestNsysProcesses(t *testing.T) {
	const name = "caoye310__Lower-Triangular-Solves__la.sqlite.gz"
	var ref nsysRef
	for _, r := range nsysRefs(t) {
		if r.file == name {
			ref = r
		}
	}
	raw := sharedExport(t, name)
	src := func(pid int64) NsysSource {
		return NsysSource{R: bytes.NewReader(raw), Size: int64(len(raw)), Copies: 1, PID: pid}
	}
	p, _ := writeExport(t, []NsysSource{src(1002), src(1001)})
	if n := NsysProcesses(p); n != 2 {
		t.Errorf("NsysProcesses: %d, want 2", n)
	}
	ts, err := ReadProcesses(p, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 {
		t.Fatalf("%d traces, want 2", len(ts))
	}
	for i, tr := range ts {
		checkModel(t, tr)
		var ns int64
		linked := 0
		for _, g := range tr.GPU {
			if g.Kind == trace.Kernel {
				ns += int64(g.Dur())
				if g.Launch != trace.None && strings.Contains(tr.APICalls[g.Launch].Name, "Launch") {
					linked++
				}
			}
		}
		o := tr.Meta.Other
		if tr.Kernels() != ref.kernels || ns != ref.kernelNs || linked != ref.kernels {
			t.Errorf("rank %d: %d kernels, %d ns, %d linked; want %d, %d ns, all", i, tr.Kernels(), ns, linked, ref.kernels, ref.kernelNs)
		}
		if want := []string{"1001", "1002"}[i]; o["pid"] != want || o["rank"] != []string{"0", "1"}[i] || o["rank_from"] != "process id order" {
			t.Errorf("rank %d: pid %s rank %s from %s; want pid %s", i, o["pid"], o["rank"], o["rank_from"], want)
		}
		for _, th := range tr.Threads {
			if th.PID != o["pid"] {
				t.Errorf("rank %d holds thread %+v of another process", i, th)
			}
		}
		if len(tr.Steps) == 0 || len(tr.Meta.Devices) != 1 {
			t.Errorf("rank %d: %d steps, devices %+v", i, len(tr.Steps), tr.Meta.Devices)
		}
	}
	one, err := ReadFile(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if one.Kernels() != 2*ref.kernels || !strings.Contains(strings.Join(one.Warnings, "\n"), "GPU work from 2 processes is analyzed as one trace") {
		t.Errorf("as one trace: %d kernels, warnings %q", one.Kernels(), one.Warnings)
	}
	// A single-process export is one trace, as ReadFile reads it.
	single, err := ReadProcesses(nsysDir+"/"+name, Options{})
	if err != nil || len(single) != 1 || single[0].Kernels() != ref.kernels {
		t.Errorf("single process: %d traces, %v", len(single), err)
	}
}

// TestNsysRankMarks: NVTX ranges that name a rank number each process
// once give the ranks; a process without one, or two processes naming
// the same, leave the process id order.
func TestNsysRankMarks(t *testing.T) {
	mk := func(names ...string) *trace.Trace {
		tr := &trace.Trace{Meta: trace.Metadata{Other: map[string]string{"pid": names[0]}}}
		for _, n := range names[1:] {
			tr.Annotations = append(tr.Annotations, trace.Annotation{Span: trace.Span{Name: n}})
		}
		return tr
	}
	for _, c := range []struct {
		names [][]string
		want  string // pids in rank order, then whence
	}{
		{[][]string{{"10", "step", "MPI rank 1"}, {"11", "RANK=0", "rank 0"}}, "11,10 NVTX range"},
		{[][]string{{"10", "rank 1"}, {"11", "step"}}, "10,11 process id order"},
		{[][]string{{"10", "rank 1"}, {"11", "rank: 1"}}, "10,11 process id order"},
		{[][]string{{"10", "rank 1", "rank 2"}, {"11", "rank 0"}}, "10,11 process id order"},
		{[][]string{{"10", "frank 1"}, {"11", "rank 0"}}, "10,11 process id order"},
	} {
		var ps []*trace.Trace
		for _, n := range c.names {
			ps = append(ps, mk(n...))
		}
		numberRanks(ps)
		var pids []string
		for _, p := range ps {
			pids = append(pids, p.Meta.Other["pid"])
		}
		if got := strings.Join(pids, ",") + " " + ps[0].Meta.Other["rank_from"]; got != c.want {
			t.Errorf("%q: %s, want %s", c.names, got, c.want)
		}
	}
}
