package tui

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// tmuxSession drives the real binary in a detached tmux terminal on a
// private server socket, so the test touches no other tmux session.
type tmuxSession struct {
	t      *testing.T
	socket string
	name   string
	status string // file the shell writes the exit status to
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (s *tmuxSession) capture() string { return s.tmux("capture-pane", "-p", "-t", s.name) }

// waitFor polls the screen until it contains every string in want.
func (s *tmuxSession) waitFor(what string, want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		screen := s.capture()
		missing := ""
		for _, w := range want {
			if !strings.Contains(screen, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: screen never showed %q:\n%s", what, missing, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *tmuxSession) keys(keys ...string) {
	s.tmux(append([]string{"send-keys", "-t", s.name}, keys...)...)
}

// exitStatus waits for the binary to exit and returns its status.
func (s *tmuxSession) exitStatus() string {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(s.status); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("tracelens tui did not exit; screen:\n%s", s.capture())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startTmux runs "tracelens tui args..." in a 120×40 tmux terminal.
func startTmux(t *testing.T, bin string, env string, args ...string) *tmuxSession {
	dir := t.TempDir()
	s := &tmuxSession{t: t, socket: fmt.Sprintf("tracelens-e2e-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-")), name: "tui", status: filepath.Join(dir, "status")}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + a + "'"
	}
	// CI runners set CI, which termenv reads as "not a terminal" (no
	// colour); the tmux pane is a terminal, as a user's is, so the
	// program must not inherit it.
	// Nor $EDITOR: e must not start the user's editor in a test.
	cmd := fmt.Sprintf("unset CI EDITOR VISUAL; %s '%s' tui %s; echo $? > '%s'; sleep 60", env, bin, strings.Join(quoted, " "), s.status)
	s.tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", s.name, "sh", "-c", cmd)
	// Applications may set tmux's clipboard with OSC 52 (y checks it).
	s.tmux("set-option", "-s", "set-clipboard", "on")
	t.Cleanup(func() { exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	return s
}

// e2eBin is the tracelens binary the end-to-end tests build once (in
// TestMain's temporary directory), shared by the tests that run in
// parallel.
var e2eBin struct {
	dir  string
	once sync.Once
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tracelens-tui-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	e2eBin.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildBinary builds cmd/tracelens on first use.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(e2eBin.dir, "tracelens")
	e2eBin.once.Do(func() {
		if out, err := exec.Command("go", "build", "-o", bin, "../cmd/tracelens").CombinedOutput(); err != nil {
			e2eBin.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if e2eBin.err != nil {
		t.Fatal(e2eBin.err)
	}
	return bin
}

// TestTmuxEndToEnd runs the built binary in a real terminal (tmux): open a
// fixture, filter, open help, open a kernel, quit; the exit status must be
// 0 and the terminal must be back on the normal screen.
func TestTmuxEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (apt-get install tmux); the end-to-end terminal test needs it")
	}
	if testing.Short() {
		t.Skip("end-to-end terminal test skipped in -short mode")
	}
	// Mostly waiting for frames: the terminal tests overlap.
	t.Parallel()
	fixture, err := filepath.Abs("../fixtures/eggroll_hooks.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	s := startTmux(t, bin, "", fixture)
	s.waitFor("first frame", "[1 Overview]", "TOP FINDINGS", "NVIDIA H100")

	s.keys("2")
	s.waitFor("kernels screen", "[2 Kernels]", "gemmk1_kernel", "1/16 kernels")
	s.keys("/", "MulFunctor", "Enter")
	screen := s.waitFor("filter", `filter "MulFunctor"`, "1/2 kernels")
	if strings.Contains(screen, "gemmk1_kernel") {
		t.Errorf("filter MulFunctor still shows gemmk1_kernel:\n%s", screen)
	}

	s.keys("?")
	s.waitFor("help", "Keys", "shift+tab previous screen", "ctrl+c quit, even in the filter", "any key closes help")
	s.keys("Escape")
	s.waitFor("help closed", "1/2 kernels")

	s.keys("Enter")
	s.waitFor("kernel detail", "Duration histogram", "Launches per step", "MulFunctor", "kernel detail  Esc back")

	s.keys("q")
	if st := s.exitStatus(); st != "0" {
		t.Fatalf("tracelens tui exited with status %s, want 0", st)
	}
	// The alternate screen is gone: the terminal shows what it showed
	// before the UI started (here nothing), not the UI's last frame.
	if screen := s.capture(); strings.Contains(screen, "Duration histogram") {
		t.Errorf("terminal not restored after quit:\n%s", screen)
	}
}

// TestTmuxNoColorAndCtrlC checks that NO_COLOR leaves no colour or style
// escape on the screen, and that Ctrl-C quits with status 0.
func TestTmuxNoColorAndCtrlC(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (apt-get install tmux); the end-to-end terminal test needs it")
	}
	if testing.Short() {
		t.Skip("end-to-end terminal test skipped in -short mode")
	}
	// Mostly waiting for frames: the terminal tests overlap.
	t.Parallel()
	bin := buildBinary(t)
	s := startTmux(t, bin, "NO_COLOR=1", "embedded:eggroll_hooks.json.gz")
	s.waitFor("first frame", "[1 Overview]")
	s.keys("2")
	s.waitFor("kernels", "1/16 kernels")
	styled := s.tmux("capture-pane", "-p", "-e", "-t", s.name)
	if strings.Contains(styled, "\x1b[") {
		t.Errorf("NO_COLOR screen carries escape sequences: %q", styled)
	}
	s.keys("C-c")
	if st := s.exitStatus(); st != "0" {
		t.Fatalf("Ctrl-C: exit status %s, want 0", st)
	}
}

// TestCLIUsage runs `tracelens tui` wrongly: bad arguments and a standard
// output that is not a terminal are usage errors (exit 2) with a message.
func TestCLIUsage(t *testing.T) {
	bin := buildBinary(t)
	cases := []struct {
		args []string
		want string
	}{
		{nil, "expected TRACE, BASE NEW or a run's DIR, GLOB or rank files, got 0 arguments"},
		{[]string{"a", "b", "c"}, "expected TRACE, BASE NEW or a run's DIR, GLOB or rank files, got 3 arguments"},
		{[]string{"../fixtures/eggroll_hooks.json.gz"}, "needs a terminal on standard output"},
	}
	for _, c := range cases {
		cmd := exec.Command(bin, append([]string{"tui"}, c.args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var xe *exec.ExitError
		if !errors.As(err, &xe) || xe.ExitCode() != 2 {
			t.Errorf("tui %v: %v, want exit status 2", c.args, err)
		}
		if !strings.Contains(stderr.String(), c.want) || !strings.Contains(stderr.String(), "usage: tracelens tui") {
			t.Errorf("tui %v: stderr %q, want %q and the usage line", c.args, stderr.String(), c.want)
		}
	}
}

// TestTmuxUnreadableTrace: a trace that cannot be read ends the UI, restores
// the terminal, prints the reason and exits 2.
func TestTmuxUnreadableTrace(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (apt-get install tmux); the end-to-end terminal test needs it")
	}
	if testing.Short() {
		t.Skip("end-to-end terminal test skipped in -short mode")
	}
	// Mostly waiting for frames: the terminal tests overlap.
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"traceEvents": [{"ph": "X", "name": `), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startTmux(t, buildBinary(t), "", bad)
	if st := s.exitStatus(); st != "2" {
		t.Fatalf("unreadable trace: exit status %s, want 2; screen:\n%s", st, s.capture())
	}
	screen := s.waitFor("error message", "tracelens: "+bad)
	if strings.Contains(screen, "q quits") {
		t.Errorf("terminal not restored after the error:\n%s", screen)
	}
}

// TestTmuxIssue29Keys presses the keys issue 29 added in a real
// terminal: op detail from the Ops table, a link and Esc back to the
// same line, y copying through OSC 52 into tmux's buffer, e without
// $EDITOR, S, a regex filter with an invalid step, q closing help, the
// timeline filling the screen; then on a run, a run finding opened and
// every rank's lanes on the timeline.
func TestTmuxIssue29Keys(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (apt-get install tmux); the end-to-end terminal test needs it")
	}
	if testing.Short() {
		t.Skip("end-to-end terminal test skipped in -short mode")
	}
	// Mostly waiting for frames: the terminal tests overlap.
	t.Parallel()
	bin := buildBinary(t)
	s := startTmux(t, bin, "", "embedded:eggroll_hooks.json.gz")
	s.waitFor("first frame", "[1 Overview]")

	s.keys("3", "Enter")
	s.waitFor("op detail", "OP DETAIL", "aten::bmm", "Called from", "Input shapes", "[[2048, 1, 1], [2048, 1, 256]]",
		"capture_traces.py(84): eggroll_perturb_hook", "gemmk1_kernel", "op detail  line")
	s.keys("y")
	s.waitFor("copied", "copied the name: capture_traces.py(84): eggroll_perturb_hook")
	if buf := s.tmux("show-buffer"); buf != "capture_traces.py(84): eggroll_perturb_hook" {
		t.Errorf("tmux's buffer after y holds %q, want the source line", buf)
	}
	s.keys("e")
	s.waitFor("e without $EDITOR", "set $EDITOR to open capture_traces.py:84")

	// Follow the first kernel link and come back to the same line.
	s.keys("G", "Enter")
	s.waitFor("kernel from the op", "Duration histogram", "esc ← Ops")
	s.keys("Escape")
	screen := s.waitFor("back on the op", "OP DETAIL", "op detail  line 20/20", "gemvx::kernel")
	checkFrame(t, s, screen, "back on the op")
	s.keys("Escape")
	s.waitFor("ops table", "1/34 ops  sort gpu total  Enter opens")

	s.keys("2", "S")
	s.waitFor("reverse sort", "TOTAL▲", "vectorized_elementwis")
	s.keys("/", "^gem(mk1|v2T")
	s.waitFor("invalid regexp", "missing closing )", `(filter "^gem" kept)`)
	s.keys(")", "Enter")
	s.waitFor("regexp filter", `filter "^gem(mk1|v2T)"`, "/2 kernels  sort total")

	s.keys("?")
	s.waitFor("help", "any key closes help", "y copy the name (OSC 52)", "S     reverse the sort")
	s.keys("q")
	s.waitFor("q closes help", "/2 kernels  sort total")

	s.keys("5")
	screen = s.waitFor("timeline", "cpu1 ranges", "cpu1 py")
	rows := 0
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "|") && !strings.Contains(l, "|0ns") {
			rows++
		}
	}
	if rows < 30 {
		t.Errorf("the timeline fills %d of 40 rows with lanes, want at least 30:\n%s", rows, screen)
	}
	s.keys("q")
	if st := s.exitStatus(); st != "0" {
		t.Fatalf("exit status %s after q", st)
	}

	t.Run("run", func(t *testing.T) { tmuxRunKeys(t, bin) })
}

// tmuxRunKeys opens a run's finding and its timeline of every rank.
func tmuxRunKeys(t *testing.T, bin string) {
	abs, err := filepath.Abs("../fixtures/runs/ddp_host_straggler")
	if err != nil {
		t.Fatal(err)
	}
	r := startTmux(t, bin, "", abs)
	r.waitFor("ranks", "[7 Ranks]", "RUN FINDINGS")
	r.keys("Down", "Enter")
	r.waitFor("run finding", "RUN FINDING 1 OF 2", "Rank 1 makes the other ranks wait", "Evidence", "ranks 1")
	// Esc then 5 in one send-keys would reach the program as Alt-5.
	r.keys("Escape")
	r.waitFor("finding closed", "RUN FINDINGS", "run findings  Enter opens")
	r.keys("5")
	r.waitFor("every rank on the timeline", "2 ranks on one clock", "r0 gpu0 s7", "r1 gpu1 s7", "rank 1 GPU 1 stream 7")
	r.keys("q")
	if st := r.exitStatus(); st != "0" {
		t.Fatalf("exit status %s after q", st)
	}
}
