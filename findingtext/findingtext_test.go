package findingtext

import (
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
)

// Each kind of saving gets its own wording; none quotes a step saving the
// fix cannot deliver.
func TestSaving(t *testing.T) {
	host := &analyze.Result{StepStats: analyze.StepStats{Bottleneck: analyze.BottleneckHost}}
	peer := &analyze.Result{StepStats: analyze.StepStats{Bottleneck: analyze.BottleneckPeer}}
	for _, c := range []struct {
		r    *analyze.Result
		f    analyze.Finding
		want string
	}{
		{host, analyze.Finding{SavingUs: 1770, Share: 0.89}, "saves ~1.77ms per step (89.0% of the step)"},
		{host, analyze.Finding{SavingUs: 1000, GPUSavingUs: 3000, Share: 0.1}, "saves ~1.00ms per step (10.0% of the step; 3.00ms of GPU time)"},
		{host, analyze.Finding{GPUSavingUs: 313}, "saves ~0 of the step while the host is the bottleneck (313µs of GPU time)"},
		{peer, analyze.Finding{GPUSavingUs: 155}, "saves ~0 of the step while this rank waits for a peer rank (155µs of GPU time)"},
		{host, analyze.Finding{SavingFrom: analyze.FromOneOff, OneOffUs: 2e6}, "one-time cost ~2.00s (paid once per process"},
	} {
		if got := Saving(c.r, &c.f); !strings.HasPrefix(got, c.want) {
			t.Errorf("Saving(%+v) = %q, want %q", c.f, got, c.want)
		}
	}
	f := analyze.Finding{Title: "gemm \x1b[31mred\x1b[0m", Fix: "use \x07cuBLAS"}
	if strings.ContainsAny(Title(&f)+Fix(&f), "\x1b\x07") {
		t.Errorf("control characters reach the terminal: %q %q", Title(&f), Fix(&f))
	}
}
