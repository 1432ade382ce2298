package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readTraceEvents decodes a Chrome trace file (gzip or not) and returns
// its events, numbers kept as written.
func readTraceEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s does not parse as JSON: %v", path, err)
	}
	return doc.TraceEvents
}

// checkAnnotated checks an annotated trace against its input: every
// original event first and unchanged, a findings track with a span per
// finding, and each arrow from a finding's span to a kernel event.
func checkAnnotated(t *testing.T, in, out string, findings int) (arrows int) {
	t.Helper()
	orig, got := readTraceEvents(t, in), readTraceEvents(t, out)
	if len(got) < len(orig) || !reflect.DeepEqual(got[:len(orig)], orig) {
		t.Fatalf("%s: the original %d events are not all there unchanged (%d events)", out, len(orig), len(got))
	}
	added := got[len(orig):]
	var pid any
	spans := map[string]bool{}
	starts := map[any]map[string]any{}
	for _, ev := range added {
		if ev["ph"] == "M" && ev["name"] == "process_name" && ev["args"].(map[string]any)["name"] == findingsTrack {
			pid = ev["pid"]
		}
	}
	if pid == nil {
		t.Fatalf("%s: no process named %q", out, findingsTrack)
	}
	type key struct{ pid, tid, ts string }
	kernels := map[key]bool{}
	for _, ev := range orig {
		if ev["ph"] == "X" {
			kernels[key{jsonText(ev["pid"]), jsonText(ev["tid"]), jsonText(ev["ts"])}] = true
		}
	}
	for _, ev := range added {
		switch ev["ph"] {
		case "X":
			if ev["pid"] != pid || ev["args"].(map[string]any)["fix"] == "" {
				t.Errorf("finding event off the track or without a fix: %v", ev)
			}
			spans[jsonText(ev["args"].(map[string]any)["number"])] = true
		case "s":
			starts[jsonText(ev["id"])] = ev
		case "f":
			s := starts[jsonText(ev["id"])]
			if s == nil || s["pid"] != pid || ev["bp"] != "e" {
				t.Errorf("arrow end %v has no start on the findings track", ev)
			}
			if !kernels[key{jsonText(ev["pid"]), jsonText(ev["tid"]), jsonText(ev["ts"])}] {
				t.Errorf("arrow end %v is not at a kernel event's pid/tid/ts", ev)
			}
			arrows++
		}
	}
	if len(spans) != findings {
		t.Errorf("%d findings have a span on the track, want %d", len(spans), findings)
	}
	return arrows
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAnnotateAddsFindingsTrackAndArrows(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		in, out    string
		wantArrows bool
	}{
		{fixture("eggroll_hooks.json.gz"), "hooks.json", true},
		{fixture("recorded/dataloader_mlp.json.gz"), "dataloader.json.gz", true},
		{fixture("jax_eggroll.perfetto.json.gz"), "jax.json", false},
	} {
		out := filepath.Join(dir, c.out)
		var stdout, stderr bytes.Buffer
		if code := runMain(&env{stdout: &stdout, stderr: &stderr}, []string{"annotate", "-o", out, c.in}); code != 0 {
			t.Fatalf("annotate %s: exit %d: %s", c.in, code, stderr.String())
		}
		if strings.HasSuffix(out, ".gz") {
			if b, _ := os.ReadFile(out); !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
				t.Errorf("%s is not gzip", out)
			}
		}
		var fs bytes.Buffer
		if code := runMain(&env{stdout: &fs, stderr: &stderr}, []string{"findings", "--format", "json", c.in}); code != 0 {
			t.Fatal(stderr.String())
		}
		var r struct{ Findings []json.RawMessage }
		if err := json.Unmarshal(fs.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		arrows := checkAnnotated(t, c.in, out, len(r.Findings))
		if c.wantArrows != (arrows > 0) {
			t.Errorf("%s: %d arrows to kernels, want some: %v", c.in, arrows, c.wantArrows)
		}
	}
}

func TestAnnotateInputsAndRefusals(t *testing.T) {
	dir := t.TempDir()
	in, err := os.ReadFile(fixture("recorded/sincos_eager.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "stdin.json")
	var stdout, stderr bytes.Buffer
	if code := runMain(&env{stdin: bytes.NewReader(in), stdout: &stdout, stderr: &stderr}, []string{"annotate", "-o", out, "-"}); code != 0 {
		t.Fatalf("annotate -: exit %d: %s", code, stderr.String())
	}
	checkAnnotatedFindings(t, fixture("recorded/sincos_eager.json.gz"), out)
	same := filepath.Join(dir, "same.json.gz")
	if err := os.WriteFile(same, in, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"annotate", "-o", same, same}, "refusing to write the output"},
		{[]string{"annotate", same}, "missing -o"},
		{[]string{"annotate", "-o", filepath.Join(dir, "x.json")}, "missing TRACE"},
		{[]string{"annotate", "-o", filepath.Join(dir, "x.json"), filepath.Join(dir, "absent.json")}, "absent.json"},
	} {
		stderr.Reset()
		if code := runMain(&env{stdout: &stdout, stderr: &stderr}, c.args); code != exitUsageOrBad || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", c.args, code, stderr.String(), c.want)
		}
	}
	if b, _ := os.ReadFile(same); !bytes.Equal(b, in) {
		t.Error("the refused run changed its input")
	}
}

// checkAnnotatedFindings checks out against in with in's finding count.
func checkAnnotatedFindings(t *testing.T, in, out string) {
	t.Helper()
	var fs, stderr bytes.Buffer
	if code := runMain(&env{stdout: &fs, stderr: &stderr}, []string{"findings", "--format", "json", in}); code != 0 {
		t.Fatal(stderr.String())
	}
	var r struct{ Findings []json.RawMessage }
	if err := json.Unmarshal(fs.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	checkAnnotated(t, in, out, len(r.Findings))
}

func TestMicrosToNanosIsExact(t *testing.T) {
	for s, want := range map[string]int64{"4485344487239.559": 4485344487239559, "12": 12000, "1.5": 1500, "0.0004": 0, "0.0005": 1, "-2.25": -2250, "1e3": 1000000} {
		got, err := microsToNanos(s)
		if err != nil || got != want {
			t.Errorf("microsToNanos(%q) = %d, %v; want %d", s, got, err, want)
		}
		if s == "4485344487239.559" && micros(4485344487239559) != s {
			t.Errorf("micros does not write %s back", s)
		}
	}
}
