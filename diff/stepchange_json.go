package diff

// jsonStepChange is StepChange in the JSON output: µs, lines in ledger
// order, their deltas summing to delta_us.
type jsonStepChange struct {
	BaseUs    float64          `json:"base_us"`
	NewUs     float64          `json:"new_us"`
	DeltaUs   float64          `json:"delta_us"`
	LoUs      float64          `json:"lo_us"`
	HiUs      float64          `json:"hi_us"`
	BaseBound string           `json:"base_bound"`
	NewBound  string           `json:"new_bound"`
	Lines     []jsonLineChange `json:"lines"`
}

type jsonLineChange struct {
	Line    string  `json:"line"`
	Text    string  `json:"text"`
	BaseUs  float64 `json:"base_us"`
	NewUs   float64 `json:"new_us"`
	DeltaUs float64 `json:"delta_us"`
	LoUs    float64 `json:"lo_us"`
	HiUs    float64 `json:"hi_us"`
}

func toJSONStepChange(c StepChange) jsonStepChange {
	out := jsonStepChange{BaseUs: c.BaseUs, NewUs: c.NewUs, DeltaUs: c.DeltaUs, LoUs: c.LoUs, HiUs: c.HiUs,
		BaseBound: c.BaseBound, NewBound: c.NewBound, Lines: make([]jsonLineChange, 0, len(c.Lines))}
	for _, l := range c.Lines {
		out.Lines = append(out.Lines, jsonLineChange(l))
	}
	return out
}
