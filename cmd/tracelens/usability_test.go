package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
)

// runIn runs tracelens in process and returns stdout, stderr and the
// exit status.
func runIn(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	code := runMain(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}, args)
	return out.String(), errOut.String(), code
}

// Every command's -h shows its flags and examples, and `help CMD` is the
// same text.
func TestHelpShowsExamplesForEveryCommand(t *testing.T) {
	for _, c := range commands() {
		h, stderr, code := runIn(c.name, "-h")
		if code != 0 {
			t.Fatalf("%s -h: exit %d: %s", c.name, code, stderr)
		}
		if !strings.HasPrefix(h, "usage: tracelens "+c.name) || !strings.Contains(h, "\nexamples:\n  ") {
			t.Errorf("%s -h has no usage line or no examples:\n%s", c.name, h)
		}
		for _, x := range c.examples {
			if !strings.Contains(h, "  "+x+"\n") {
				t.Errorf("%s -h leaves out the example %q", c.name, x)
			}
		}
		help, _, code := runIn("help", c.name)
		if code != 0 || help != h {
			t.Errorf("help %s (exit %d) differs from %s -h", c.name, code, c.name)
		}
	}
	if _, stderr, code := runIn("help", "nosuch"); code != exitUsageOrBad || !strings.Contains(stderr, `"nosuch"`) {
		t.Errorf("help nosuch: exit %d, %q", code, stderr)
	}
	if out, _, code := runIn("help"); code != 0 || !strings.Contains(out, "tracelens help COMMAND") {
		t.Errorf("help: exit %d, %q", code, out)
	}
}

// The examples name only flags their command declares.
func TestExamplesUseRealFlags(t *testing.T) {
	flagRE := regexp.MustCompile(`\s--?([a-z][a-z0-9-]*)`)
	for _, c := range commands() {
		fs := commandFlags(c)
		for _, x := range c.examples {
			if !strings.HasPrefix(x, "tracelens "+c.name) {
				continue // a command of another tool (claude, duckdb)
			}
			for _, m := range flagRE.FindAllStringSubmatch(x, -1) {
				if fs.Lookup(m[1]) == nil {
					t.Errorf("example %q: %s has no flag -%s", x, c.name, m[1])
				}
			}
		}
	}
}

// The completion scripts offer every command and every flag each command
// declares; the bash script is valid bash.
func TestCompletionScriptsCoverEveryFlag(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		script, stderr, code := runIn("completion", shell)
		if code != 0 {
			t.Fatalf("completion %s: exit %d: %s", shell, code, stderr)
		}
		for _, c := range commands() {
			if !strings.Contains(script, c.name) {
				t.Errorf("%s completion lacks the command %s", shell, c.name)
			}
			commandFlags(c).VisitAll(func(f *flag.Flag) {
				want := dashed(f.Name)
				if shell == "fish" {
					want = "-l " + f.Name
					if len(f.Name) == 1 {
						want = "-s " + f.Name
					}
					want = "'__fish_seen_subcommand_from " + c.name + "' " + want
				}
				if !strings.Contains(script, want) {
					t.Errorf("%s completion lacks %s's flag %s", shell, c.name, want)
				}
			})
		}
		if shell == "bash" {
			path := filepath.Join(t.TempDir(), "tracelens.bash")
			if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
				t.Errorf("bash -n: %v: %s", err, out)
			}
		}
	}
	if _, stderr, code := runIn("completion", "powershell"); code != exitUsageOrBad || !strings.Contains(stderr, "unknown shell") {
		t.Errorf("completion powershell: exit %d, %q", code, stderr)
	}
}

// Completing in bash: commands at the first word, a command's flags after
// a dash.
func TestBashCompletionCompletes(t *testing.T) {
	script, _, _ := runIn("completion", "bash")
	complete := func(words ...string) string {
		t.Helper()
		prog := script + "\nCOMP_WORDS=(" + strings.Join(words, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) +
			"\n_tracelens\necho \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command("bash", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := complete("tracelens", "an"); got != "analyzers annotate" {
		t.Errorf("tracelens an<TAB>: %q", got)
	}
	if got := complete("tracelens", "top", "--f"); got != "--filter --format" {
		t.Errorf("tracelens top --f<TAB>: %q", got)
	}
	if got := complete("tracelens", "help", "mc"); got != "mcp" {
		t.Errorf("tracelens help mc<TAB>: %q", got)
	}
}

func TestTopFilterAndCSV(t *testing.T) {
	path := fixture("eggroll_hooks.json.gz")
	out, stderr, code := runIn("top", "--format", "csv", "-n", "0", "--filter", "(?i)gemm", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("top --format csv is not CSV: %v", err)
	}
	want := []string{"kernel", "autotune", "count", "total_us", "mean_us", "median_us", "p95_us", "min_us", "max_us", "share"}
	if len(rows) < 2 || strings.Join(rows[0], ",") != strings.Join(want, ",") {
		t.Fatalf("header %v, want %v (%d rows)", rows[0], want, len(rows))
	}
	js, _, _ := runIn("top", "--format", "json", "-n", "0", path)
	var all topJSON
	if err := json.Unmarshal([]byte(js), &all); err != nil {
		t.Fatal(err)
	}
	var gemms []analyze.KernelTiming
	for _, k := range all.Kernels {
		if strings.Contains(strings.ToLower(k.Name), "gemm") {
			gemms = append(gemms, k)
		}
	}
	if len(rows)-1 != len(gemms) || len(gemms) == len(all.Kernels) {
		t.Fatalf("--filter gemm kept %d rows; %d of %d kernels are GEMMs", len(rows)-1, len(gemms), len(all.Kernels))
	}
	for i, k := range gemms {
		r := rows[i+1]
		total, _ := strconv.ParseFloat(r[3], 64)
		if r[0] != k.Name || r[2] != strconv.Itoa(k.Count) || total != k.TotalUs {
			t.Errorf("csv row %v, json %+v", r, k)
		}
	}
	text, _, _ := runIn("top", "-n", "1", "--filter", "(?i)gemm", path)
	if !strings.Contains(text, "--filter (?i)gemm: "+strconv.Itoa(len(gemms))+" of "+strconv.Itoa(len(all.Kernels))+" kernels match") ||
		!strings.Contains(text, strconv.Itoa(len(gemms)-1)+" more kernels") {
		t.Errorf("top --filter text:\n%s", text)
	}
	if _, stderr, code := runIn("top", "--filter", "(", path); code != exitUsageOrBad || !strings.Contains(stderr, "bad --filter") {
		t.Errorf("top --filter '(': exit %d, %q", code, stderr)
	}
	run, stderr, code := runIn("top", "--format", "csv", "--filter", "nccl", fixture("runs/multirank_ddp"))
	if code != 0 || !strings.HasPrefix(run, "kernel,count,") || !strings.Contains(run, "nccl") || strings.Count(run, "\n") < 2 {
		t.Errorf("top --format csv on a run: exit %d %s\n%s", code, stderr, run)
	}
}

func TestAnalyzersShortByDefault(t *testing.T) {
	out, _, code := runIn("analyzers")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := len(analyze.All()) + len(distributed.Checks())
	if len(lines) != want+2 {
		t.Errorf("analyzers printed %d lines, want one per analyzer and check (%d) and a footer", len(lines), want)
	}
	for i, a := range analyze.All() {
		if !strings.HasPrefix(lines[i], a.Name+" ") || len([]rune(lines[i])) > analyzersLineWidth {
			t.Errorf("line %d %q: want %s and a summary within %d columns", i, lines[i], a.Name, analyzersLineWidth)
		}
	}
	long, _, _ := runIn("analyzers", "--long")
	if len(long) < 4*len(out) {
		t.Errorf("--long (%d bytes) is not the full prose next to the short list (%d bytes)", len(long), len(out))
	}
}
