package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTUIBudgetRestoresTerminal: when the memory watchdog stops the
// process under the terminal UI (the TUI's analysis of 400 k kernels
// passes a 128 MB budget), the UI gives the terminal back first: the
// tmux pane leaves the alternate screen and mouse reporting, and the
// budget's message and exit status 2 follow. Before, the watchdog's exit
// left the terminal in the UI's modes.
func TestTUIBudgetRestoresTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end terminal test")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (apt-get install tmux); the terminal UI test needs it")
	}
	bin := cliBinary(t)
	dir := t.TempDir()
	kernels := filepath.Join(dir, "kernels.json")
	writeKernelSteps(t, kernels, 400_000, analysisOutgrows)
	status, errs := filepath.Join(dir, "status"), filepath.Join(dir, "stderr")
	socket := "tracelens-budget-" + filepath.Base(dir)
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	cmd := "unset CI; '" + bin + "' tui --max-memory 128MB '" + kernels + "' 2>'" + errs + "'; echo $? > '" + status + "'; sleep 60"
	tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "tui", "sh", "-c", cmd)
	t.Cleanup(func() { exec.Command("tmux", "-L", socket, "kill-server").Run() })
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(status); err == nil && strings.HasSuffix(string(b), "\n") {
			if code := strings.TrimSpace(string(b)); code != "2" {
				e, _ := os.ReadFile(errs)
				t.Fatalf("exit %s, want 2 (the budget); stderr: %s", code, e)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the UI did not stop for the budget:\n%s", tmux("capture-pane", "-p", "-t", "tui"))
		}
	}
	if modes := strings.TrimSpace(tmux("display-message", "-p", "-t", "tui", "#{alternate_on} #{mouse_any_flag}")); modes != "0 0" {
		t.Errorf("after the budget stop the terminal is still in the UI's modes (alternate screen, mouse): %q", modes)
	}
	if e, _ := os.ReadFile(errs); !strings.Contains(string(e), "--max-memory") {
		t.Errorf("stderr lacks the budget's message: %s", e)
	}
}
