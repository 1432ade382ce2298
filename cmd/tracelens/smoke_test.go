package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBinarySmoke is the one test of the built binary (every other CLI
// test calls runMain in process): what only a real process shows — exit
// statuses as the shell sees them, standard input from a pipe, and an
// interrupt ending a command that waits on its input.
func TestBinarySmoke(t *testing.T) {
	bin := cliBinary(t)
	naive, cublas := fixture("fusedlinear_naive.json.gz"), fixture("fusedlinear_cublas.json.gz")
	gz, err := os.ReadFile(naive)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		stdin  []byte
		code   int
		stdout string // a part of standard output
		stderr string // a part of standard error
	}{
		{args: []string{"top", naive}, code: exitOK, stdout: "kernel"},
		{args: []string{"top", "-"}, stdin: gz, code: exitOK, stdout: "kernel"},
		{args: []string{"top", "no-such-trace.json"}, code: exitUsageOrBad, stderr: "no-such-trace.json"},
		{args: []string{"no-such-command"}, code: exitUsageOrBad, stderr: "unknown command"},
		{args: []string{"diff", "--fail-on-regression", "5%", cublas, naive}, code: exitGate, stderr: "regression gate tripped"},
	} {
		cmd := exec.Command(bin, c.args...)
		if c.stdin != nil {
			cmd.Stdin = bytes.NewReader(c.stdin)
		}
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		code := exitCode(t, cmd.Run())
		if code != c.code || !strings.Contains(o.String(), c.stdout) || !strings.Contains(e.String(), c.stderr) {
			t.Errorf("tracelens %s: exit %d (want %d), stdout %.200q (want %q), stderr %q (want %q)",
				strings.Join(c.args, " "), code, c.code, o.String(), c.stdout, e.String(), c.stderr)
		}
		if strings.Contains(e.String(), "goroutine ") {
			t.Errorf("tracelens %s: a Go stack trace reached the user:\n%s", strings.Join(c.args, " "), e.String())
		}
	}

	// mcp serves until its client hangs up or it is interrupted: SIGINT
	// with standard input still open ends it cleanly (exit 0), promptly.
	cmd := exec.Command(bin, "mcp")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	cmd.Stdout = io.Discard
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(300 * time.Millisecond) // let it install its handler
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if code := exitCode(t, err); code != exitOK {
			t.Errorf("mcp after SIGINT: exit %d, stderr %q; want 0", code, e.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Errorf("mcp still running 10 s after SIGINT")
	}
}

// exitCode is a finished command's exit status.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var xe *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &xe):
		return xe.ExitCode()
	}
	t.Fatal(err)
	return 0
}

// TestBinaryDiagnostics checks the environment variables main reads:
// TRACELENS_CPUPROFILE writes a gzipped pprof profile (an unwritable
// path is said and the command still runs) and TRACELENS_STAGES prints
// the read, the analysis's parts and the exit.
func TestBinaryDiagnostics(t *testing.T) {
	bin := cliBinary(t)
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	cmd := exec.Command(bin, "report", "--format", "json", fixture("fusedlinear_naive.json.gz"))
	cmd.Env = append(os.Environ(), "TRACELENS_CPUPROFILE="+prof, "TRACELENS_STAGES=1")
	var e bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &e
	if code := exitCode(t, cmd.Run()); code != exitOK {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	b, err := os.ReadFile(prof)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("TRACELENS_CPUPROFILE wrote %d bytes (err %v), want a gzipped pprof profile", len(b), err)
	}
	for _, want := range []string{"tracelens read returned at", "analyze metrics: steps", "analyze findings", "tracelens analysis returned at", "tracelens exit at"} {
		if !strings.Contains(e.String(), want) {
			t.Errorf("TRACELENS_STAGES: no %q in\n%s", want, e.String())
		}
	}
	cmd = exec.Command(bin, "info", fixture("fusedlinear_naive.json.gz"))
	cmd.Env = append(os.Environ(), "TRACELENS_CPUPROFILE="+filepath.Join(t.TempDir(), "no", "such", "dir.prof"))
	e.Reset()
	cmd.Stdout, cmd.Stderr = io.Discard, &e
	if code := exitCode(t, cmd.Run()); code != exitOK || !strings.Contains(e.String(), "running without the profile") {
		t.Errorf("unwritable TRACELENS_CPUPROFILE: exit %d, stderr %q; want 0 and a note", code, e.String())
	}
}
