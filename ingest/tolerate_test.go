package ingest

import (
	"bytes"
	"strings"
	"testing"
)

// TestUnclosedArrayIsReadWithAWarning: Chrome's "JSON Array Format" left by
// a process that died before writing ']' (with or without a trailing
// comma) is read like Chrome's importer reads it, and the model says so.
func TestUnclosedArrayIsReadWithAWarning(t *testing.T) {
	second := strings.Replace(goodEvent, `"ts":10.5`, `"ts":20`, 1)
	for _, in := range []string{
		`[` + goodEvent + `,` + second,
		`[` + goodEvent + `,` + second + `,`,
		"[\n" + goodEvent + ",\n" + second + ",\n  \n",
	} {
		for _, form := range []string{"plain", "gzip"} {
			raw := []byte(in)
			if form == "gzip" {
				raw = gz(raw)
			}
			for _, chunk := range []int{0, 64} {
				tr, err := Read(bytes.NewReader(raw), "unclosed", Options{chunk: chunk})
				if err != nil {
					t.Fatalf("%s %q: %v", form, in, err)
				}
				if tr.Events != 2 || len(tr.GPU) != 2 {
					t.Errorf("%s %q: %d events, %d kernels; want 2 and 2", form, in, tr.Events, len(tr.GPU))
				}
				if len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "without its closing ']'") {
					t.Errorf("%s %q: warnings %q", form, in, tr.Warnings)
				}
			}
		}
	}
	tr, err := Read(strings.NewReader(`[`+goodEvent+`]`), "closed", Options{})
	if err != nil || len(tr.Warnings) != 0 {
		t.Errorf("a closed array: %v, warnings %q", err, tr.Warnings)
	}
}

// TestGzipTrailingGarbage: bytes after the gzip data are named with their
// compressed offset, as a warning when the JSON is whole and in the error
// when it is not; further gzip members are read on, as gzip -d does.
func TestGzipTrailingGarbage(t *testing.T) {
	whole := []byte(`[` + goodEvent + `]`)
	member := gz(whole)
	for _, tail := range [][]byte{[]byte("garbage\n"), make([]byte, 512), {0x1f}, []byte("\n")} {
		in := append(append([]byte(nil), member...), tail...)
		tr, err := Read(bytes.NewReader(in), "garbage", Options{})
		if err != nil {
			t.Fatalf("tail %q: %v", tail, err)
		}
		want := "after the gzip data at compressed byte " + itoa(len(member))
		if len(tr.GPU) != 1 || len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], want) {
			t.Errorf("tail %q: %d kernels, warnings %q; want 1 and %q", tail, len(tr.GPU), tr.Warnings, want)
		}
	}

	cut := len(whole) / 2
	twoMembers := append(gz(whole[:cut]), gz(whole[cut:])...)
	tr, err := Read(bytes.NewReader(twoMembers), "members", Options{})
	if err != nil || len(tr.GPU) != 1 || len(tr.Warnings) != 0 {
		t.Errorf("two gzip members: %v, warnings %q", err, tr.Warnings)
	}

	half := append(gz(whole[:cut]), "junk"...)
	_, err = Read(bytes.NewReader(half), "half", Options{})
	if err == nil || !strings.Contains(err.Error(), "unexpected end of input") || !strings.Contains(err.Error(), "not gzip data") {
		t.Errorf("truncated JSON with trailing garbage: %v", err)
	}
}

// TestJSONThatIsNotAProfilerTrace: valid Chrome-shaped JSON with no sign of
// a profiler is never labelled PyTorch's, and JSON none of whose entries
// is an event tracelens models is an error, not an empty profile.
func TestJSONThatIsNotAProfilerTrace(t *testing.T) {
	for _, in := range []string{
		`[1, 2, 3]`,
		`{"traceEvents": [{"a": 1}, {"b": 2}]}`,
		`{"name": "package", "traceEvents": [{"ph":"X","cat":"blink","name":"Paint","pid":1,"tid":1,"ts":1,"dur":2}]}`,
	} {
		_, err := Read(strings.NewReader(in), "notatrace", Options{})
		if err == nil || !strings.Contains(err.Error(), "not a profiler trace") {
			t.Errorf("%s: %v, want 'not a profiler trace'", in, err)
		}
	}
	// A generic Chrome trace with one modelled event is read, as "chrome".
	tr, err := Read(strings.NewReader(`[{"ph":"X","cat":"blink","name":"Paint","pid":1,"tid":1,"ts":1,"dur":2},
		{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":2,"args":{"Bytes":8}}]`), "chrome", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Meta.Format != "chrome" || tr.Meta.Framework != "" {
		t.Errorf("format %q framework %q, want chrome and none", tr.Meta.Format, tr.Meta.Framework)
	}
	for _, path := range fixturePaths(t) {
		tr, err := ReadFile(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if tr.Meta.Format == "chrome" {
			t.Errorf("%s: a real profiler trace labelled chrome", path)
		}
	}
}
