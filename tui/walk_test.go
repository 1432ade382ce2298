package tui

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
)

// tmuxKey spells a bubbletea key name the way tmux send-keys takes it.
func tmuxKey(k string) string {
	named := map[string]string{
		"up": "Up", "down": "Down", "left": "Left", "right": "Right",
		"pgup": "PPage", "pgdown": "NPage", "home": "Home", "end": "End",
		"enter": "Enter", "esc": "Escape", "tab": "Tab", "shift+tab": "BTab",
		"shift+left": "S-Left", "shift+right": "S-Right", " ": "Space",
	}
	if n, ok := named[k]; ok {
		return n
	}
	if c, ok := strings.CutPrefix(k, "ctrl+"); ok {
		return "C-" + c
	}
	return k
}

// styled captures the pane with its colours (capture-pane -e).
func (s *tmuxSession) styled() string { return s.tmux("capture-pane", "-p", "-e", "-t", s.name) }

// settled captures the screen once two captures 20 ms apart agree, so a
// check reads a whole frame, not one being drawn.
func (s *tmuxSession) settled() string {
	s.t.Helper()
	prev := ""
	for range 100 {
		time.Sleep(20 * time.Millisecond)
		cur := s.capture()
		if cur == prev {
			return cur
		}
		prev = cur
	}
	return prev
}

// sgrColour matches an SGR sequence that sets a foreground colour (basic,
// bright or 256-colour).
var sgrColour = regexp.MustCompile(`\x1b\[[0-9;]*(3[0-7]|9[0-7]|38;5;[0-9]+)m`)

// sgrAny matches any SGR sequence (colour, attribute or reset).
var sgrAny = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// checkFrame asserts what every frame of the UI has: the tab bar with the
// current tab, the status line, and the process still running.
func checkFrame(t *testing.T, s *tmuxSession, screen, what string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "[") {
		t.Fatalf("%s: no tab bar:\n%s", what, screen)
	}
	last := lines[len(lines)-1]
	if !strings.Contains(last, "q quit") && !strings.Contains(last, "Enter keeps") && !strings.Contains(last, "any key closes help") {
		t.Fatalf("%s: no status line:\n%s", what, screen)
	}
	if strings.Contains(screen, "panic") || strings.Contains(screen, "goroutine ") {
		t.Fatalf("%s: the UI crashed:\n%s", what, screen)
	}
}

// TestTmuxWalkEveryKey runs the binary in a 120×40 tmux on a real trace
// and on a diff, visits every screen and presses every key the help
// lists on each (except the quitting ones, pressed last), checking each
// frame, then checks that colour reaches the terminal.
func TestTmuxWalkEveryKey(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed (apt-get install tmux); the end-to-end terminal test needs it")
	}
	if testing.Short() {
		t.Skip("end-to-end terminal test skipped in -short mode")
	}
	t.Parallel() // mostly waiting for frames, as the other terminal tests
	bin := buildBinary(t)
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	km := newKeyMap()
	in := textinput.New()
	var keys []string
	for _, sec := range km.helpSections(&in) {
		for _, col := range sec.columns {
			for _, b := range col {
				for _, k := range b.Keys() {
					switch k {
					case "q", "ctrl+c", "ctrl+u":
						// Quitting is checked last; ctrl+u is the prompt's.
					default:
						keys = append(keys, k)
					}
				}
			}
		}
	}
	screens := []struct {
		key, tab string
		want     []string // what the screen must show on a real trace
	}{
		{"1", "[1 Overview]", []string{"Step times", "Step split", "TOP FINDINGS"}},
		{"2", "[2 Kernels]", []string{"KERNEL", "CATEGORY"}},
		{"3", "[3 Ops]", []string{"OP", "CALLS"}},
		{"4", "[4 Findings]", []string{"FINDING", "SEVERITY"}},
		{"5", "[5 Timeline]", []string{"gpu0 s7", "cpu1 ops", "cpu2 ops", " py ", "steps", " ranges "}},
		{"6", "[6 Diff]", nil},
		{"7", "[7 Ranks]", nil},
	}
	// Each run walks the keys on the screens that are its own: a trace
	// all of them, a diff screen 6, a run screen 7.
	walks := map[string]string{"diff": "6", "run": "7"}
	for _, run := range []struct {
		name  string
		args  []string
		first string
	}{
		{"trace", []string{abs("../fixtures/recorded/train_sync_pageable.json.gz")}, "[1 Overview]"},
		{"diff", []string{abs("../fixtures/eggroll_hooks.json.gz"), abs("../fixtures/eggroll_direct.json.gz")}, "[6 Diff]"},
		{"run", []string{abs("../fixtures/runs/ddp_host_straggler")}, "[7 Ranks]"},
	} {
		t.Run(run.name, func(t *testing.T) {
			t.Parallel() // separate tmux servers
			s := startTmux(t, bin, "", run.args...)
			s.waitFor("first frame", run.first)
			for _, sc := range screens {
				// Esc closes a detail view an earlier key opened there.
				s.keys(sc.key, "Escape")
				want := sc.want
				if run.name != "trace" {
					want = nil // the trace run checks the screens' content
				}
				checkFrame(t, s, s.waitFor(sc.tab, append([]string{sc.tab}, want...)...), sc.tab)
				if only, ok := walks[run.name]; ok && sc.key != only {
					continue
				}
				for _, k := range keys {
					s.keys(tmuxKey(k))
					what := sc.tab + " after " + k
					checkFrame(t, s, s.settled(), what)
					// Leave prompts, help and detail views, and come back.
					s.keys("Escape", "Escape", sc.key)
					checkFrame(t, s, s.waitFor(what+", back", sc.tab), what+", back")
				}
			}
			// Colour reaches the terminal: the overview's bars and the
			// diff's marks carry foreground colours.
			s.keys("1")
			s.waitFor("overview", "[1 Overview]")
			if styled := s.styled(); !sgrColour.MatchString(styled) {
				t.Errorf("overview has no colour:\n%q", styled)
			}
			walkEnd(t, s, run.name)
		})
	}
}

// walkEnd checks what a run's walk ends on: the straggler coloured and a
// drill into rank 0 on a run, the diff's coloured ▼ on a diff; then q.
func walkEnd(t *testing.T, s *tmuxSession, run string) {
	if run == "run" {
		s.keys("7")
		s.waitFor("ranks", "[7 Ranks]", "Straggler: rank 1")
		if styled := s.styled(); !sgrColour.MatchString(styled[strings.Index(styled, "Straggler"):]) {
			t.Errorf("the straggler is not coloured:\n%q", styled)
		}
		// Leave a run finding the walk opened (Esc closes it, Esc
		// leaves the findings list; one key per send, since Esc
		// and the next key together read as Alt), then drill
		// into rank 0: every screen shows it.
		for range 2 {
			s.keys("Escape")
			s.settled()
		}
		s.waitFor("the rank table", "Enter shows this rank")
		s.keys("g", "Enter")
		s.waitFor("rank 0", "[1 Overview]", "rank 0: rank0.pt.trace.json.gz")
	}
	if run == "diff" {
		s.keys("6")
		s.waitFor("diff", "[6 Diff]", "▼ step wall")
		styled := s.styled()
		// The colour in force at the row is the last SGR before it:
		// tmux leaves out a repeated one, so the row's own may be a
		// line or more above it.
		i := strings.Index(styled, "▼ step wall")
		sgrs := sgrAny.FindAllString(styled[:max(i, 0)], -1)
		if i < 0 || len(sgrs) == 0 || !sgrColour.MatchString(sgrs[len(sgrs)-1]) {
			t.Errorf("the diff's ▼ is not coloured:\n%q", styled)
		}
	}
	s.keys("q")
	if st := s.exitStatus(); st != "0" {
		t.Fatalf("exit status %s after q", st)
	}
}
