package diff

import (
	"strings"
	"testing"
)

// TestParseGate reads the --gate syntax and refuses what it cannot gate.
func TestParseGate(t *testing.T) {
	g, err := ParseGate("step, ledger:host_sync,category:gemm,kernel:ampere_sgemm")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range g {
		got = append(got, x.String())
	}
	if s := strings.Join(got, ","); s != "step,ledger:host_sync,category:gemm,kernel:ampere_sgemm" {
		t.Errorf("parsed %q", s)
	}
	for _, bad := range []string{"", "ledger:nope", "category", "kernel:", "steps", "step:x"} {
		if _, err := ParseGate(bad); err == nil {
			t.Errorf("ParseGate(%q): no error", bad)
		}
	}
}

// TestGateOnPairs gates recorded pairs run backwards (the fixed run as
// base): the step and the ledger line the fix removed trip, an unknown
// kernel fails rather than passes, and the forward direction passes.
func TestGateOnPairs(t *testing.T) {
	base, next := analyzePairSide(t, "sync_gradnorm", "base"), analyzePairSide(t, "sync_gradnorm", "new")
	fwd, err := Compare(base, next, Options{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := Compare(next, base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	targets, _ := ParseGate("step,ledger:host_sync")
	if f, _ := fwd.GateOn(targets, 5); len(f) != 0 {
		t.Errorf("the fix trips the gate: %q", f)
	}
	f, untested := back.GateOn(targets, 5)
	if len(f) != 2 {
		t.Errorf("the regression trips %d gates, want 2: %q", len(f), f)
	}
	for _, u := range untested {
		t.Logf("untested: %s", u)
	}
	missing, _ := ParseGate("kernel:no_such_kernel_anywhere")
	if f, _ := fwd.GateOn(missing, 5); len(f) != 1 || !strings.Contains(f[0], "no kernel row") {
		t.Errorf("a misspelt kernel: %q", f)
	}
}
