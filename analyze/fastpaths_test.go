package analyze

import (
	"maps"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// TestKernelNamesMatchRowByRow: the op names and user lines counted in
// GPU order (kernelNames), in one chunk or several summed, are those
// counted launch by launch of each row.
func TestKernelNamesMatchRowByRow(t *testing.T) {
	atCores([]int{1, 3, 8}, func(int) { testKernelNames(t) })
}

func testKernelNames(t *testing.T) {
	for _, name := range []string{"eggroll_hooks.json.gz", "recorded/compile_autotune_mlp.json.gz", "nanobragg_compile.json.gz"} {
		tr := load(t, name)
		ix := factsOf(t, tr)
		rows, _ := kernelTable(tr, ix.PhaseFacts.autotune)
		names, _ := ix.kernelNames(rows)
		counted := 0
		for r, row := range rows {
			ops, lines := map[string]int{}, map[string]int{}
			for _, g := range row.Launches {
				l := tr.GPU[g].Launch
				if l == trace.None {
					continue
				}
				if op := tr.APICalls[l].Op; op != trace.None {
					ops[tr.Ops[op].Name]++
				}
				if f := ix.userFrameOf(tr.APICalls[l].Frame); f != trace.None && tr.Frames[f].Name != "" {
					lines[tr.Frames[f].Name]++
				}
			}
			if got := names[r].ops.counts(); !maps.Equal(got, ops) {
				t.Fatalf("%s: row %s: ops %v, want %v", name, row.Name, got, ops)
			}
			if got := names[r].lines.counts(); !maps.Equal(got, lines) {
				t.Fatalf("%s: row %s: lines %v, want %v", name, row.Name, got, lines)
			}
			counted += len(ops) + len(lines)
		}
		if counted == 0 {
			t.Fatalf("%s: no names: the test would prove nothing", name)
		}
	}
}
