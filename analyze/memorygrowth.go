package analyze

import (
	"fmt"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// MemoryGrowthMinBytes is the least device memory a steady step must
// leave allocated beyond the one before, in every step, for memory-growth
// to call it a leak.
const MemoryGrowthMinBytes = 1 << 20

// MemoryGrowth finds device memory that grows every step (a leak: tensors
// kept alive across steps).
var MemoryGrowth = &Analyzer{
	Name: "memory-growth",
	Doc: fmt.Sprintf("Reads the allocator's [memory] events (profile_memory=True): the device memory allocated when each step begins. "+
		"Reported when it grows by at least %s from every step to the next: tensors kept alive across steps (outputs or losses "+
		"appended to a list, a graph kept by a tensor that requires grad), which end in an out-of-memory error. The evidence lists the "+
		"ops and Python lines whose allocations in the steady steps are never freed in the trace (matched by address). Saving model: "+
		"none per step (the cost is the memory, then the crash); a one-time finding.", FormatBytes(MemoryGrowthMinBytes)),
	Requires: []*Analyzer{Steps, Attribution},
	Run:      runMemoryGrowth,
}

func runMemoryGrowth(p *Pass) ([]Finding, error) {
	t := p.Trace
	if len(t.Steps) < 3 || len(t.Memory) == 0 {
		return nil, nil
	}
	start := stepStartAllocated(t)
	var growth []float64
	for i := 2; i < len(start); i++ { // steady steps: from the second on
		if start[i] < 0 || start[i-1] < 0 {
			return nil, nil
		}
		growth = append(growth, float64(start[i]-start[i-1]))
	}
	if len(growth) == 0 || slices.Min(growth) < MemoryGrowthMinBytes {
		return nil, nil
	}
	perStep := median(slices.Clone(growth))
	kept, keptBytes := neverFreed(t, p.ix)
	tb := NewTable(Col("allocated in", KindName), Col("never freed", KindBytes), Col("blocks", KindCount))
	for _, k := range kept[:min(len(kept), 5)] {
		tb.Add(NameCell(k.Site), Bytes(float64(k.Bytes)), Count(float64(k.Blocks)))
	}
	steps := len(t.Steps)
	ev := []Evidence{
		{Text: fmt.Sprintf("device memory allocated at the start of each step: %s → %s over %d steps, +%s per step (median; every step grows)",
			FormatBytes(float64(start[1])), FormatBytes(float64(start[steps-1])), steps-1, FormatBytes(perStep))},
	}
	if len(kept) > 0 {
		ev = append(ev, Evidence{Text: fmt.Sprintf("allocations of the steady steps never freed in the trace (%s in all), by where they were made:",
			FormatBytes(float64(keptBytes))), Table: tb})
	}
	ev = append(ev, Evidence{Text: "saving model: none per step; at this rate the device runs out of memory after the number of steps its free memory allows"})
	return []Finding{{
		Title:      fmt.Sprintf("device memory grows %s every step: tensors kept alive across steps", FormatBytes(perStep)),
		Subject:    "memory growth",
		Severity:   High,
		SavingFrom: FromOneOff,
		Measures: []Measure{
			{"growth per step", Bytes(perStep)},
			{"allocated at the last step's start", Bytes(float64(start[steps-1]))},
			{"never freed in the steady steps", Bytes(float64(keptBytes))},
		},
		Evidence:   ev,
		Fix:        memoryFix(kept),
		Confidence: High,
	}}, nil
}

// neverFreed returns the device allocations of the steady steps that no
// later free at the same address releases, grouped by the user's Python
// line (else the op) around the allocation, largest first.
func neverFreed(t *trace.Trace, ix *index) ([]MemorySite, int64) {
	live := map[int64]int{} // address → index into t.Memory of its allocation
	for i, m := range t.Memory {
		switch {
		case m.Device < 0 || m.Addr == 0:
		case m.Bytes > 0:
			live[m.Addr] = i
		case m.Bytes < 0:
			delete(live, m.Addr)
		}
	}
	var idx []int
	for _, i := range live {
		if t.StepOf(t.Memory[i].At) >= 1 { // not weights or optimizer state
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil, 0
	}
	return ix.groupSites(idx, newOpFinder(t))
}

// memoryFix is memory-growth's fix, pointing at the largest site.
func memoryFix(kept []MemorySite) string {
	where := "the step"
	if len(kept) > 0 {
		where = kept[0].Site
	}
	return fmt.Sprintf("find what keeps each step's tensors alive (largest: %s): store losses and metrics as Python numbers "+
		"(loss.item(), after the step, or every N steps) or detached tensors (.detach()), not the tensors themselves; do not append "+
		"outputs to a list across steps; clear caches you fill each step", where)
}
