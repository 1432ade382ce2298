package ingest

import "runtime/debug"

// CollectorLimit sets the process's garbage collector up to work within
// limit bytes (a soft memory limit, proportional collection off) and
// returns the function that restores the previous settings; limit ≤ 0
// changes nothing. The collector's settings are process-wide: this and
// Options.GCLimit (the same scope, for one read) are the only places in
// tracelens that change them, so that callers reading many traces
// (distributed's runs) hold one scope around their work instead of each
// setting and restoring them, out of order, on their own.
func CollectorLimit(limit int64) (restore func()) {
	return newGCScope(limit).restore
}

// gcScope sets the collector up for one read and restores it afterwards.
type gcScope struct {
	limit             int64 // current soft limit; 0: not managed
	oldLimit, oldPerc int64
}

func newGCScope(limit int64) *gcScope {
	g := &gcScope{}
	if limit > 0 {
		g.limit = limit
		g.oldLimit = debug.SetMemoryLimit(limit)
		g.oldPerc = int64(debug.SetGCPercent(-1))
	}
	return g
}

// grow raises the soft limit to twice the model once the model passes half
// of it, so the live heap never sits at the limit.
func (g *gcScope) grow(model int64) {
	if g.limit > 0 && model > g.limit/2 {
		g.limit = 2 * model
		debug.SetMemoryLimit(g.limit)
	}
}

func (g *gcScope) restore() {
	if g.limit > 0 {
		debug.SetGCPercent(int(g.oldPerc))
		debug.SetMemoryLimit(g.oldLimit)
	}
}
