package analyze

import (
	"testing"
	"time"

	"github.com/tracelens/tracelens/fixtures/cputime"
)

// BenchmarkMetricPartsOnTrace runs the kernels, roofline, annotations,
// launches and categories metrics as sub-benchmarks over the trace at
// RUN_TRACE, with every fact computed once beforehand and the user-frame
// memo fresh each time (as each analysis starts with one): for profiling
// those parts on a big trace. Skipped without RUN_TRACE.
func BenchmarkMetricPartsOnTrace(b *testing.B) {
	t, _, ix := benchFactsAt(b, "RUN_TRACE")
	b.Logf("gpu %d api %d ops %d frames %d annotations %d", len(t.GPU), len(t.APICalls), len(t.Ops), len(t.Frames), len(t.Annotations))
	parts := []struct {
		name string
		fn   func()
	}{
		{"kernels", func() { ix.kernels(&Result{}) }},
		{"roofline", func() { ix.roofline() }},
		{"annotations", func() { ix.annotations() }},
		{"launches", func() { ix.launches(&Result{}) }},
		{"categories", func() { ix.categories(&Result{}) }},
	}
	for _, p := range parts {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			var cpu time.Duration
			for range b.N {
				b.StopTimer()
				ix.users = NewUserFrames(t)
				b.StartTimer()
				before := cputime.Used()
				p.fn()
				cpu += cputime.Used() - before
			}
			b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}
