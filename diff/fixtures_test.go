package diff

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// loadFixture reads one of the embedded real traces.
func loadFixture(t *testing.T, name string) *trace.Trace {
	t.Helper()
	r, err := fixtures.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ingest.Read(r, name, ingest.Options{})
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return tr
}

func mustCompare(t *testing.T, base, new string, opt Options) *Result {
	t.Helper()
	r, err := CompareTraces(loadFixture(t, base), loadFixture(t, new), opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestOpsPerComparedStep: the ops table compares each op's mean CPU time
// per compared step (the warm-up step left out, as for kernels) and its
// calls in those steps, as fixtures/recorded/expect/op_steps.py computes
// them from the two traces' JSON; ops that ran only outside the compared
// steps have no row.
func TestOpsPerComparedStep(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "recorded", "expect", "op_steps.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		Ops map[string][]analyze.StepShare `json:"ops"`
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	base, next := "recorded/train_sync_pageable.json.gz", "recorded/optim_many_params.json.gz"
	r := compareFiles(t, base, next)
	type exp struct {
		bu, nu float64
		bc, nc int
	}
	exps := map[string]*exp{}
	for side, name := range []string{base, next} {
		for op, steps := range want[name].Ops {
			e := exps[op]
			if e == nil {
				e = &exp{}
				exps[op] = e
			}
			var us float64
			var calls int
			for _, st := range steps[1:] {
				us += st.Us
				calls += st.Count
			}
			us /= float64(len(steps) - 1)
			if side == 0 {
				e.bu, e.bc = us, calls
			} else {
				e.nu, e.nc = us, calls
			}
		}
	}
	rows := 0
	for _, e := range exps {
		if e.bc == 0 && e.nc == 0 {
			continue
		}
		rows++
	}
	if len(r.Ops) != rows || rows < 40 {
		t.Fatalf("%d op rows, script %d", len(r.Ops), rows)
	}
	for _, row := range r.Ops {
		e := exps[row.Name]
		if e == nil || row.BaseCalls != e.bc || row.NewCalls != e.nc || math.Abs(row.BaseUs-e.bu) > 0.01 || math.Abs(row.NewUs-e.nu) > 0.01 {
			t.Errorf("%s: %.3f µs (%d calls) → %.3f (%d), script %+v", row.Name, row.BaseUs, row.BaseCalls, row.NewUs, row.NewCalls, e)
		}
	}
}
