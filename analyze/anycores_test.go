package analyze

import (
	"encoding/json"
	"runtime"
	"testing"
)

// TestFindingsSameOnAnyCores checks that the finding analyzers that work
// chunk by chunk side by side (fusion-candidate's chains and savings,
// hook-overhead's frame walk and op totals, compiled-comparisons' owned
// work, the op classes, allocator-churn's frame walk) give the same
// findings, byte for byte as JSON, on one core and on several, on traces
// where each of them reports.
func TestFindingsSameOnAnyCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, name := range []string{"capture/elementwise-chain-unfused.json.gz", "recorded/compiled_slower_pointwise.json.gz",
		"recorded/issue26/allocchurn_cnn.json.gz", "recorded/issue26/layout_convnet.json.gz", "eggroll_hooks.json.gz"} {
		tr := load(t, name)
		var want []byte
		for _, procs := range []int{1, 3, 8} {
			runtime.GOMAXPROCS(procs)
			r, err := Run(tr, Config{})
			if err != nil {
				t.Fatalf("%s at %d cores: %v", name, procs, err)
			}
			if len(r.Findings) == 0 {
				t.Fatalf("%s: no findings: the test would prove nothing", name)
			}
			got, err := json.Marshal(r.Findings)
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = got
			} else if string(got) != string(want) {
				t.Errorf("%s: the findings at %d cores differ from one core's", name, procs)
			}
		}
	}
}
