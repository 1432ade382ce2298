package analyze

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestOverheadConstantsMatchFit checks OverheadPerOpUs and
// OverheadPerFrameUs against the least-squares fit that
// fixtures/recorded/expect/overhead.py recorded.
func TestOverheadConstantsMatchFit(t *testing.T) {
	b, err := os.ReadFile("../fixtures/recorded/expect/overhead.json")
	if err != nil {
		t.Fatal(err)
	}
	var fit struct {
		PerOpUs    float64 `json:"per_op_us"`
		PerFrameUs float64 `json:"per_frame_us"`
	}
	if err := json.Unmarshal(b, &fit); err != nil {
		t.Fatal(err)
	}
	if math.Abs(fit.PerOpUs-OverheadPerOpUs) > 0.005 || math.Abs(fit.PerFrameUs-OverheadPerFrameUs) > 0.005 {
		t.Errorf("constants %.2f/%.2f µs, fit %.2f/%.2f µs", OverheadPerOpUs, OverheadPerFrameUs, fit.PerOpUs, fit.PerFrameUs)
	}
}
