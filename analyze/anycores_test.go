package analyze

import "testing"

// TestFindingsSameOnAnyCores checks that the finding analyzers that work
// chunk by chunk side by side (fusion-candidate's chains and savings,
// hook-overhead's frame walk and op totals, compiled-comparisons' owned
// work, the op classes, allocator-churn's frame walk) give the same
// findings, byte for byte as JSON, on one core and on several, on traces
// where each of them reports.
func TestFindingsSameOnAnyCores(t *testing.T) {
	for _, name := range []string{"capture/elementwise-chain-unfused.json.gz", "recorded/compiled_slower_pointwise.json.gz",
		"recorded/issue26/allocchurn_cnn.json.gz", "recorded/issue26/layout_convnet.json.gz", "eggroll_hooks.json.gz"} {
		r := sameOnCores(t, name, load(t, name), []int{1, 3, 8}, "the findings", func(r *Result) any { return r.Findings })
		if len(r.Findings) == 0 {
			t.Fatalf("%s: no findings: the test would prove nothing", name)
		}
	}
}
