package report

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tracelens/tracelens/analyze"
)

// Formatting helpers. Durations are microseconds in analyze's Result and
// shown with trace.Duration's readable units.

// us, pct and count format figures the way every face does (analyze's
// formatters), so a figure reads the same in the report, findings and tui.
func us(v float64) string    { return analyze.FormatUs(v) }
func pct(f float64) string   { return analyze.FormatShare(f) }
func count(v float64) string { return analyze.FormatCount(v) }

// sig formats v with three significant digits for chart data.
func sig(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	switch {
	case strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "s"):
		return fmt.Sprintf("%d %ses", n, noun)
	case strings.HasSuffix(noun, "ity"):
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// upperFirst capitalises a sentence that starts with a plain lowercase
// word; identifiers (torch.compile, fp32, aten::mm) keep their spelling.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(r) {
		return s
	}
	word, _, _ := strings.Cut(s, " ")
	for _, c := range word {
		if !unicode.IsLetter(c) && c != ',' && c != ':' && c != '-' {
			return s
		}
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func codeJoin(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = Code(n)
	}
	return strings.Join(out, ", ")
}

// mermaidLabel makes a pie slice label safe inside mermaid's double quotes.
func mermaidLabel(s string) string {
	return strings.NewReplacer(`"`, "'", "\\", "/", "#", "").Replace(sanitize(s))
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
