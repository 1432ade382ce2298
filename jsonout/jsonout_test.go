package jsonout

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// encoderOutput is what Write promises to match.
func encoderOutput(t testing.TB, v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWriteMatchesEncoder checks Write against encoding/json's indenting
// Encoder on values with nesting, empty and nested-empty containers,
// escapes (quotes, backslashes before quotes, control characters,
// < > &), unicode, numbers and nulls.
func TestWriteMatchesEncoder(t *testing.T) {
	values := []any{
		nil, 1, -2.5e-7, "x", true, []int{}, map[string]any{},
		[]any{[]any{}, map[string]any{}, []any{[]any{}}},
		map[string]any{"a\\": "b\\\\\"c", "k<&>": []any{"\\", "\"", "\n\t\u0001", "é✓"}, "n": nil, "z": []float64{1, 2.5, 1e21}},
		struct {
			A []struct{ B, C string }
			D map[string][]int
		}{A: []struct{ B, C string }{{"x", `"q"`}, {`\`, ""}}, D: map[string][]int{"e": nil, "f": {}, "g": {1}}},
	}
	// Nested past the indent newline copies at once.
	deep := any(1)
	for range 24 {
		deep = map[string]any{"k": []any{deep, 2}}
	}
	values = append(values, deep)
	for i, v := range values {
		// Into a buffer (indented in place) and into any other writer.
		var got, other bytes.Buffer
		if err := Write(&got, v); err != nil {
			t.Fatal(err)
		}
		if err := Write(struct{ io.Writer }{&other}, v); err != nil {
			t.Fatal(err)
		}
		want := encoderOutput(t, v)
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("value %d:\ngot  %q\nwant %q", i, got.Bytes(), want)
		}
		if !bytes.Equal(other.Bytes(), want) {
			t.Errorf("value %d through a writer:\ngot  %q\nwant %q", i, other.Bytes(), want)
		}
	}
}

// TestWriteMatchesEncoderOnGoldens re-indents every JSON golden in the
// repository (reports, diffs, expected values) and compares with
// json.Indent.
func TestWriteMatchesEncoderOnGoldens(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../*/testdata/*.json", "../*/testdata/*/*.json", "../fixtures/recorded/expect/*.json"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found %d JSON files, want the repository's goldens", len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if json.Compact(&compact, raw) != nil {
			continue
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indented(compact.Bytes()); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: re-indented differs from json.Indent", f)
		}
	}
}

// indented is src indented whole.
func indented(src []byte) []byte {
	out, _ := appendIndented(nil, src, 0)
	return out
}

// FuzzIndent checks appendIndented against json.Indent on any valid JSON
// (compacted first, as Write's input is).
func FuzzIndent(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{"b":"\\\""}],"c":{}}`, `"x\\"`, `[[],[{}],null,true,-1.5e3]`, `{"\u00e9":"<&>"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var compact, want bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatal(err)
		}
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indented(compact.Bytes()); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("input %q:\ngot  %q\nwant %q", data, got, want.Bytes())
		}
	})
}

// BenchmarkWrite measures Write against the indenting Encoder on a value
// shaped like a report (many rows of numbers and names).
func BenchmarkWrite(b *testing.B) {
	type row struct {
		Name  string
		Us    float64
		Count int
		Per   []float64
	}
	rows := make([]row, 20000)
	for i := range rows {
		rows[i] = row{Name: "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float>>", Us: float64(i) * 1.25, Count: i, Per: []float64{1, 2, 3.5}}
	}
	b.Run("jsonout", func(b *testing.B) {
		for b.Loop() {
			_ = Write(io.Discard, rows)
		}
	})
	b.Run("encoder", func(b *testing.B) {
		for b.Loop() {
			enc := json.NewEncoder(io.Discard)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rows)
		}
	})
}
