package diff_test

import (
	"fmt"
	"log"

	"github.com/tracelens/tracelens/diff"
	"github.com/tracelens/tracelens/fixtures"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

func read(name string) *trace.Trace {
	r, err := fixtures.Open(name)
	if err != nil {
		log.Fatal(err)
	}
	t, err := ingest.Read(r, name, ingest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	return t
}

// Compare the eggroll forward with Python hooks against the same forward
// without them, as the TUI's diff screen and `tracelens diff` do.
func ExampleCompareTraces() {
	r, err := diff.CompareTraces(read("eggroll_hooks.json.gz"), read("eggroll_direct.json.gz"), diff.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.SummaryLine())
	period := r.Metric(diff.StepTime)
	fmt.Printf("%s: significant %v, %d+%d steps\n", period.Name, period.Significant, len(period.Base.Values), len(period.New.Values))
	if f, _ := r.Gate(5); len(f) == 0 {
		fmt.Println("gate at 5%: passed")
	}
	// Output:
	// step period 2.03 ms → 1.39 ms (−31%, p=0.029) [profiler-limited, untraced est. −58%: see notes] · GPU busy 135 µs → 135 µs (~, p=0.343)
	// step period: significant true, 4+4 steps
	// gate at 5%: passed
}
