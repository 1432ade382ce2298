package findingtext

import (
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
)

// Each kind of saving gets its own wording; none quotes a step saving the
// fix cannot deliver.
func TestSaving(t *testing.T) {
	for _, c := range []struct {
		f    analyze.Finding
		want string
	}{
		{analyze.Finding{SavingUs: 1770, Share: 0.89}, "saves ~1.77ms per step (89.0% of the step)"},
		{analyze.Finding{SavingUs: 1000, GPUSavingUs: 3000, Share: 0.1}, "saves ~1.00ms per step (10.0% of the step; 3.00ms of GPU time)"},
		{analyze.Finding{GPUSavingUs: 313}, "saves ~0 of the step while the host is the bottleneck (313µs of GPU time)"},
		{analyze.Finding{SavingFrom: analyze.FromOneOff, OneOffUs: 2e6}, "one-time cost ~2.00s (paid once per process"},
	} {
		if got := Saving(&c.f, "per step"); !strings.HasPrefix(got, c.want) {
			t.Errorf("Saving(%+v) = %q, want %q", c.f, got, c.want)
		}
	}
	f := analyze.Finding{Title: "gemm \x1b[31mred\x1b[0m", Fix: "use \x07cuBLAS"}
	if strings.ContainsAny(Title(&f)+Fix(&f), "\x1b\x07") {
		t.Errorf("control characters reach the terminal: %q %q", Title(&f), Fix(&f))
	}
}
