package tui

import (
	"fmt"

	"github.com/tracelens/tracelens/analyze"
)

// memoryLines are the overview's lines on device memory (analyze's
// timeline from [memory] events): per device a sparkline of allocated
// memory over the trace with the peak, reserved and fragmentation at it
// and the growth per step, then the site holding the most at the peak.
// None without [memory] events.
func memoryLines(r *analyze.Result, st *styles, w, labelW int) []string {
	m := r.Memory
	if m == nil {
		return nil
	}
	b := func(v int64) string { return analyze.FormatBytes(float64(v)) }
	var out []string
	for _, d := range m.Devices {
		vals := make([]float64, len(d.Points))
		for i, p := range d.Points {
			vals[i] = float64(p.AllocatedBytes)
		}
		vals = downsample(vals, min(max(w-labelW-90, 8), 24))
		var spark string
		for _, c := range sparks(vals) {
			spark += c
		}
		text := fmt.Sprintf(" peak %s", b(d.PeakAllocatedBytes))
		if d.PeakStep >= 0 {
			text += fmt.Sprintf(" (step #%d)", d.PeakStep)
		}
		if d.HasReserved {
			text += fmt.Sprintf(", reserved %s (%s not allocated)", b(d.ReservedAtPeakBytes), b(d.FragmentationBytes))
		}
		if len(m.StepStartAllocatedBytes) >= 3 {
			text += fmt.Sprintf(", %s/step growth", b(int64(m.GrowthPerStepBytes)))
		}
		label := "Memory"
		if len(m.Devices) > 1 {
			label = fmt.Sprintf("Memory %d", d.Device)
		}
		out = append(out, fit(label, labelW)+st.gpuLane.Render(spark)+cut(text, max(w-labelW-len(vals), 0)))
		if len(d.PeakLive) > 0 {
			s := d.PeakLive[0]
			out = append(out, cut(fmt.Sprintf("%-*s most live at the peak: %s from %s (%d blocks); %s from before the trace",
				labelW-1, "", b(s.Bytes), sanitize(s.Site), s.Blocks, b(d.PeakUnattributedBytes)), w))
		}
	}
	return out
}
