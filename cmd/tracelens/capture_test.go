package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/capture"
)

func runCaptureCLI(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = runMain(&env{stdout: &o, stderr: &e}, append([]string{"capture"}, args...))
	return o.String(), e.String(), code
}

func TestCaptureCLI(t *testing.T) {
	out, _, code := runCaptureCLI("--list")
	if code != 0 || !strings.Contains(out, "gemm-naive") || !strings.Contains(out, "memcpy-pinned") {
		t.Fatalf("--list: code %d\n%s", code, out)
	}
	for _, args := range [][]string{{}, {"no-such-workload"}, {"gemm-naive", "--steps", "0"}, {"a", "b"}} {
		if _, errOut, code := runCaptureCLI(args...); code != exitUsageOrBad || !strings.Contains(errOut, "usage: tracelens capture") {
			t.Errorf("capture %q: code %d, stderr %q", args, code, errOut)
		}
	}
	if !capture.CUDAEnabled {
		_, errOut, code := runCaptureCLI("gemm-naive")
		if code != exitUsageOrBad || !strings.Contains(errOut, "-tags cuda") {
			t.Fatalf("without CUDA: code %d, stderr %q", code, errOut)
		}
	}
}
