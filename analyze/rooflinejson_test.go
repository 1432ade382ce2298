package analyze

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRooflineJSONUnknownPeak: a row of an unknown device writes its
// peaks, ridge and efficiency as null, not 0 (which read as "0.0% of
// peak"); a known device's row writes them as numbers, and names keep
// their < >.
func TestRooflineJSONUnknownPeak(t *testing.T) {
	unknown := RooflineRow{Op: "aten::mm", Kernel: "gemm<float>", TFLOPS: 6496, PeakSource: "unknown device"}
	b, err := marshalPlain(unknown) // as the CLI writes JSON: no HTML escapes
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"peak_tflops":null`, `"peak_gbps":null`, `"ridge":null`, `"efficiency":null`, `"tflops":6496`, `"kernel":"gemm<float>"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("unknown device: %s lacks %s", b, want)
		}
	}
	known := RooflineRow{Op: "aten::mm", TFLOPS: 400, PeakTFLOPS: 989, PeakGBps: 3350, Ridge: 295, Efficiency: 0.4}
	if b, err = marshalPlain(known); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"peak_tflops":989`, `"peak_gbps":3350`, `"ridge":295`, `"efficiency":0.4`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("known device: %s lacks %s", b, want)
		}
	}
	var back RooflineRow
	if err := json.Unmarshal(b, &back); err != nil || back.PeakTFLOPS != 989 || back.Efficiency != 0.4 {
		t.Errorf("read back %+v, %v", back, err)
	}
}
