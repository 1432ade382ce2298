package ingest

import (
	"runtime/debug"
	"testing"
)

// TestCollectorLimitRestores: the scope sets the soft limit with
// proportional collection off, and its restore puts both back.
func TestCollectorLimitRestores(t *testing.T) {
	before := debug.SetMemoryLimit(-1) // -1 reads without changing
	restore := CollectorLimit(before / 2)
	if got := debug.SetMemoryLimit(-1); got != before/2 {
		t.Errorf("limit in scope = %d, want %d", got, before/2)
	}
	if pct := debug.SetGCPercent(-1); pct != -1 {
		debug.SetGCPercent(pct)
		t.Errorf("GC percent in scope = %d, want -1 (off)", pct)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after restore = %d, want %d", got, before)
	}
	pct := debug.SetGCPercent(100)
	debug.SetGCPercent(pct)
	if pct == -1 {
		t.Error("GC percent still off after restore")
	}
	CollectorLimit(0)() // no budget: nothing to set or restore
}
