package main

import (
	"strings"
	"testing"
)

// TestCaptureTimingFlags: --timing takes auto, cupti or events, and
// --dump-activity needs CUPTI timing; both are usage errors before any
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
	} {
		_, errOut, code := runCaptureCLI(c.args...)
		if code != exitUsageOrBad || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "usage: tracelens capture") {
			t.Errorf("capture %q: code %d, stderr %q; want %q", c.args, code, errOut, c.want)
		}
	}
}
