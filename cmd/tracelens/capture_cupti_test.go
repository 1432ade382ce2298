package main

import (
	"strings"
	"testing"
)

// TestCaptureTimingFlags: --timing takes auto, cupti or events, and
// --dump-activity and --cupti-cost need CUPTI timing; all are usage errors before any
// device is opened.
func TestCaptureTimingFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gemm-naive", "--timing", "nvtx"}, `--timing "nvtx": want auto, cupti or events`},
		{[]string{"gemm-naive", "--timing", "events", "--dump-activity", "x.json"}, "--dump-activity needs CUPTI timing"},
		{[]string{"gemm-naive", "--no-per-launch-timing", "--dump-activity", "x.json"}, "--dump-activity needs CUPTI timing"},
		{[]string{"gemm-naive", "--cupti-api", "some"}, `--cupti-api "some": want calls or all`},
		{[]string{"launch-overhead", "--timing", "events", "--cupti-cost", "8"}, "--cupti-cost needs CUPTI timing"},
		{[]string{"launch-overhead", "--no-per-launch-timing", "--cupti-cost", "8"}, "--cupti-cost needs CUPTI timing"},
		{[]string{"launch-overhead", "--cupti-cost", "-1"}, "--cupti-cost at least 0"},
	} {
		_, errOut, code := runCaptureCLI(c.args...)
		if code != exitUsageOrBad || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "usage: tracelens capture") {
			t.Errorf("capture %q: code %d, stderr %q; want %q", c.args, code, errOut, c.want)
		}
	}
}
