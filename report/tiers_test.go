package report

import (
	"regexp"
	"strings"
	"testing"
)

// A finding's tier heading and its severity are one judgment, analyze's
// (issue 23: fusedlinear_cublas read "Tier 1: high impact" above
// "Severity medium"): on every fixture, each finding's **Severity**
// names the tier it is listed under.
func TestTierIsSeverity(t *testing.T) {
	tierRe := regexp.MustCompile(`^#+ Tier (\d): (high|medium|lower) impact$`)
	sevRe := regexp.MustCompile(`\*\*Severity\*\* (high|medium|low)`)
	want := map[string]string{"high": "high", "medium": "medium", "lower": "low"}
	for _, name := range allTraces() {
		tier, checked := "", 0
		for _, line := range strings.Split(markdown(t, load(t, name)), "\n") {
			if m := tierRe.FindStringSubmatch(line); m != nil {
				tier = want[m[2]]
				continue
			}
			if strings.HasPrefix(line, "## ") {
				tier = ""
			}
			if m := sevRe.FindStringSubmatch(line); m != nil && tier != "" {
				checked++
				if m[1] != tier {
					t.Errorf("%s: a finding of severity %s is listed under the %s tier", name, m[1], tier)
				}
			}
		}
		if in := load(t, name); len(in.Result.Findings) != checked {
			t.Errorf("%s: %d findings, %d checked under a tier", name, len(in.Result.Findings), checked)
		}
	}
}
