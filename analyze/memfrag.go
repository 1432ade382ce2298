package analyze

import (
	"fmt"
	"slices"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of memory-fragmentation.
const (
	// MemoryFragmentationMinBytes is the least memory the allocator must
	// hold unallocated (reserved − allocated) at the steady steps' peaks
	// (median) for memory-fragmentation to report it.
	MemoryFragmentationMinBytes = 32 << 20
	// MemoryFragmentationMinShare is the least share of the reserved
	// memory it must be there.
	MemoryFragmentationMinShare = 0.2
)

// MemoryFragmentation finds device memory the caching allocator holds but
// no tensor uses when the step needs the most.
var MemoryFragmentation = &Analyzer{
	Name: "memory-fragmentation",
	Doc: fmt.Sprintf("Reads the allocator's [memory] events (profile_memory=True) with its reserved total: at each steady step's peak of "+
		"allocated device memory, the reserved memory no tensor uses (reserved − allocated). Cached blocks that cannot serve the "+
		"step's largest requests (freed blocks smaller than the next, growing, request; holes between long-lived tensors) make the "+
		"allocator reserve new segments, so a program runs out of memory with much of it free. Reported when the median over the "+
		"steady steps is at least %s and %.0f%% of the reserved memory there. Saving model: none per step (the cost is memory).",
		FormatBytes(MemoryFragmentationMinBytes), MemoryFragmentationMinShare*100),
	Requires: []*Analyzer{Steps},
	Run:      runMemoryFragmentation,
}

// stepMemoryPeak is one step's peak of allocated device memory and the
// reserved total at it.
type stepMemoryPeak struct {
	step                int
	allocated, reserved int64
	found               bool
}

func runMemoryFragmentation(p *Pass) ([]Finding, error) {
	t := p.Trace
	peaks := stepMemoryPeaks(t)
	if peaks == nil {
		return nil, nil
	}
	var waste, reserved []float64
	tb := NewTable(Col("step", KindCount), Col("peak allocated", KindBytes), Col("reserved", KindBytes), Col("reserved − allocated", KindBytes))
	for _, pk := range peaks[FirstSteady(len(peaks)):] {
		if !pk.found {
			continue
		}
		w := pk.reserved - pk.allocated
		waste, reserved = append(waste, float64(max(w, 0))), append(reserved, float64(pk.reserved))
		tb.Add(Count(float64(t.Steps[pk.step].Number)), Bytes(float64(pk.allocated)), Bytes(float64(pk.reserved)), Bytes(float64(max(w, 0))))
	}
	if len(waste) == 0 {
		return nil, nil
	}
	w, res := median(slices.Clone(waste)), median(slices.Clone(reserved))
	if w < MemoryFragmentationMinBytes || res <= 0 || w < MemoryFragmentationMinShare*res {
		return nil, nil
	}
	ev := []Evidence{
		{Text: fmt.Sprintf("at each steady step's peak of allocated device memory the allocator holds %s (median) that no tensor uses, "+
			"%.0f%% of the %s it has reserved:", FormatBytes(w), w/res*100, FormatBytes(res)), Table: tb},
	}
	if m := p.Result.Memory; m != nil && len(m.Devices) > 0 {
		d := m.Devices[0]
		ev = append(ev, Evidence{Text: fmt.Sprintf("at the trace's peak (%s allocated) %s is reserved: %s unused; the most reserved at any time: %s",
			FormatBytes(float64(d.PeakAllocatedBytes)), FormatBytes(float64(d.ReservedAtPeakBytes)), FormatBytes(float64(d.FragmentationBytes)),
			FormatBytes(float64(d.MaxReservedBytes)))})
	}
	ev = append(ev, Evidence{Text: "saving model: none per step; the unused reserved memory is what the program cannot use when it needs the most (an out-of-memory error with memory free)"})
	return []Finding{{
		Title:      fmt.Sprintf("device memory fragmented: %s reserved but unused at the step's peak (%.0f%% of the reserved memory)", FormatBytes(w), w/res*100),
		Subject:    "memory fragmentation",
		Severity:   Medium,
		SavingFrom: FromOneOff,
		Measures: []Measure{
			{"reserved − allocated at the step's peak", Bytes(w)},
			{"reserved at the step's peak", Bytes(res)},
			{"share of the reserved memory", Percent(w / res)},
		},
		Evidence: ev,
		Fix: "let the allocator grow segments instead of adding new ones: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; keep shapes " +
			"steady or pad them to a few bucket sizes; preallocate buffers that grow (a KV cache at its full length, written in place, " +
			"instead of torch.cat per token); allocate long-lived tensors before the short-lived ones of the step, not between them; " +
			"torch.cuda.memory._record_memory_history() and memory_summary() show which blocks are split",
		Confidence: Medium,
	}}, nil
}

// stepMemoryPeaks returns, per step, its peak of allocated device memory
// (over all devices' events in it, the largest allocated total) with the
// reserved total of that event; nil when the trace records no reserved
// totals.
func stepMemoryPeaks(t *trace.Trace) []stepMemoryPeak {
	out := make([]stepMemoryPeak, len(t.Steps))
	hasReserved := false
	for i := range t.Memory {
		m := &t.Memory[i]
		if m.Device < 0 {
			continue
		}
		hasReserved = hasReserved || m.Reserved > 0
		st := t.StepOf(m.At)
		if st < 0 {
			continue
		}
		if pk := &out[st]; !pk.found || m.Allocated > pk.allocated {
			*pk = stepMemoryPeak{step: st, allocated: m.Allocated, reserved: m.Reserved, found: true}
		}
	}
	if !hasReserved || len(t.Steps) == 0 {
		return nil
	}
	return out
}
