package diff

import (
	"strings"
	"testing"
)

// TestSubjectGoneResolves: a finding whose op no longer runs in NEW is
// resolved though the traced ledger lines it named grew. sync_accum's and
// sync_clip's fixes drop every .item() (aten::item 8 → 0 and 5 → 0 calls
// in the compared steps) and cut the untraced step 12 % and 8 % (CUDA
// events), while the profiled host, no longer waiting, sets a longer
// traced step: host-sync's lines gave back less than nothing.
func TestSubjectGoneResolves(t *testing.T) {
	for _, pair := range []string{"sync_accum", "sync_clip"} {
		r := comparePair(t, pair)
		var got *FindingChange
		for i := range r.Findings.Resolved {
			if f := &r.Findings.Resolved[i]; f.ID == "host-sync" {
				got = f
			}
		}
		if got == nil || !got.SubjectGone || got.Subject != "aten::item" {
			t.Errorf("%s: host-sync resolved with its op gone: %+v; unreported %+v", pair, got, r.Findings.Unreported)
			continue
		}
		if got.DeliveredUs >= 0 {
			t.Errorf("%s: the traced lines delivered %.1f µs; this test wants a pair where they did not", pair, got.DeliveredUs)
		}
		var text strings.Builder
		if err := WriteText(&text, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "aten::item no longer runs") || !strings.Contains(text.String(), "resolved (op gone)") {
			t.Errorf("%s: the text does not say the op is gone:\n%s", pair, text.String())
		}
	}
	// A finding whose op still runs in NEW is not gone: every persisting
	// finding of every recorded pair keeps SubjectGone false.
	for pair := range readPairs(t) {
		r := comparePair(t, pair)
		for _, f := range append(r.Findings.Persisting, r.Findings.Unreported...) {
			if f.SubjectGone {
				t.Errorf("%s: %s %s persisting or unreported with its op gone", pair, f.ID, f.Subject)
			}
		}
	}
}
