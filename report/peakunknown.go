package report

import (
	"fmt"

	"github.com/tracelens/tracelens/analyze"
)

// unknownMark is what a number shows when the device's peak is unknown
// (a device not in the peak table): an unknown peak is not 0, and a
// share of it is not 0.0% (issue 27: "6496 TFLOP/s (0.0 % of peak)").
const unknownMark = "–"

// ofPeak is a roofline number that needs the device's peak (a peak, a
// share of it, a ridge point), written with format, or "–" when the
// peak behind it is unknown (not positive).
func ofPeak(peak float64, format func() string) string {
	if !(peak > 0) {
		return unknownMark
	}
	return format()
}

// peakCells are a roofline row's ridge, bound, peak and % of peak cells.
func peakCells(row analyze.RooflineRow) (ridge, bound, peak, eff string) {
	ridge = ofPeak(row.PeakTFLOPS*row.PeakGBps, func() string { return fmt.Sprintf("%.0f", row.Ridge) })
	bound = row.Bound
	if bound == "" {
		bound = unknownMark
	}
	peak = ofPeak(row.PeakTFLOPS, func() string { return fmt.Sprintf("%.0f", row.PeakTFLOPS) })
	eff = ofPeak(row.PeakTFLOPS, func() string { return pct(row.Efficiency) })
	return ridge, bound, peak, eff
}

// rooflineHeadline is the summary's bullet for the heaviest roofline
// row; without a known peak it gives the rate alone.
func rooflineHeadline(row analyze.RooflineRow) string {
	if !(row.PeakTFLOPS > 0) {
		return fmt.Sprintf("**%s %s reaches %s TFLOP/s** (%s FLOP/byte; the device's peak is unknown).",
			Code(row.Op), Code(row.Shape), sig(row.TFLOPS), sig(row.Intensity))
	}
	return fmt.Sprintf("**%s %s reaches %s TFLOP/s, %s of peak** (%s bound, %s FLOP/byte).",
		Code(row.Op), Code(row.Shape), sig(row.TFLOPS), pct(row.Efficiency), Text(row.Bound), sig(row.Intensity))
}

// bandwidthNote is the roofline's DRAM bandwidth, or says it and the
// peaks are unknown (shown as "–").
func bandwidthNote(gbps float64) string {
	if !(gbps > 0) {
		return "unknown for this device: its peaks show as " + unknownMark
	}
	return fmt.Sprintf("%.0f GB/s", gbps)
}
