package report

import (
	"io"
	"testing"
)

// The report must come out "in a second" (issue 6): these time rendering
// alone, on the largest fixture, with analysis done once up front.

func BenchmarkMarkdown(b *testing.B) {
	in := load(b, "nanobragg_compile.json.gz")
	b.ResetTimer()
	for b.Loop() {
		if err := Markdown(io.Discard, []Input{in}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHTML(b *testing.B) {
	in := load(b, "nanobragg_compile.json.gz")
	b.ResetTimer()
	for b.Loop() {
		if err := HTML(io.Discard, []Input{in}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
