package analyze

// MarshalJSON writes the row with the figures that need the device's
// peaks as null when the device is unknown (PeakSource says so): a peak
// of 0, and an efficiency or ridge derived from it, would read as
// measured (an unknown device's "0.0% of peak", issue 27).
func (r RooflineRow) MarshalJSON() ([]byte, error) {
	type plain RooflineRow
	known := func(v float64) *float64 {
		if v > 0 {
			return &v
		}
		return nil
	}
	efficiency := known(r.PeakTFLOPS * r.PeakGBps)
	if efficiency != nil {
		*efficiency = r.Efficiency
	}
	return marshalPlain(struct {
		plain
		PeakTFLOPS *float64 `json:"peak_tflops"`
		PeakGBps   *float64 `json:"peak_gbps"`
		Ridge      *float64 `json:"ridge"`
		Efficiency *float64 `json:"efficiency"`
	}{plain(r), known(r.PeakTFLOPS), known(r.PeakGBps), known(r.Ridge), efficiency})
}
