package jsonout

import (
	"bytes"
	"encoding/json"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// splitRow stands for a report's per-step row.
type splitRow struct {
	Name    string    `json:"name"`
	PerStep []float64 `json:"per_step"`
}

// splitDoc stands for a report: small members around large ones, a
// nested key named like a split one, and an omitempty member.
type splitDoc struct {
	Version int               `json:"version"`
	Steps   []splitRow        `json:"steps"`
	Nested  map[string]any    `json:"nested"`
	Ops     []splitRow        `json:"ops"`
	Extra   *splitRow         `json:"extra,omitempty"`
	Tail    map[string]string `json:"tail"`
}

// SplitJSON splits Steps and Ops off (the test's Splitter).
func (d *splitDoc) SplitJSON() (any, any, []string, []any) {
	c := *d
	c.Steps, c.Ops = nil, nil
	return d, &c, []string{"steps", "ops"}, []any{d.Steps, d.Ops}
}

// outer holds a Splitter embedded, as a run's report holds a Result.
type outer struct {
	*splitDoc
	Rank int `json:"rank"`
}

// TestWriteSplitMatchesEncoder checks a Splitter's output against the
// indenting Encoder's of the whole value: members full, empty and nil,
// a nested "steps" key with null, and the fallbacks (a key left out, a
// key whose rest is not null).
func TestWriteSplitMatchesEncoder(t *testing.T) {
	rows := []splitRow{{"a<&>", []float64{1, 2.5e-7, 1e21}}, {`q"\`, nil}, {"", []float64{}}}
	docs := []*splitDoc{
		{Version: 1, Steps: rows, Ops: rows[:1], Nested: map[string]any{"steps": nil, "ops": []any{}}, Tail: map[string]string{"k": "v"}},
		{Steps: []splitRow{}, Extra: &rows[0]},
		{},
	}
	for i, d := range docs {
		var got bytes.Buffer
		if err := Write(&got, d); err != nil {
			t.Fatal(err)
		}
		if want := encoderOutput(t, d); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("doc %d:\ngot  %s\nwant %s", i, got.Bytes(), want)
		}
	}
	d := docs[0]
	for _, v := range []any{outer{d, 3}, &outer{d, 4}} {
		var got bytes.Buffer
		if err := Write(&got, v); err != nil {
			t.Fatal(err)
		}
		if want := encoderOutput(t, v); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("embedded:\ngot  %s\nwant %s", got.Bytes(), want)
		}
	}
	for name, members := range map[string][]Member{
		"absent key": {{"steps", d.Steps}, {"missing", 1}},
		"not null":   {{"version", 2}},
	} {
		var got bytes.Buffer
		if err := WriteSplit(&got, d, d, members); err != nil {
			t.Fatal(err)
		}
		if want := encoderOutput(t, d); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: not written whole:\ngot  %s", name, got.Bytes())
		}
	}
}

// bigMarshaled is a slice type with its own marshaller: written whole,
// not element by element.
type bigMarshaled []int

func (b bigMarshaled) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]int{"n": len(b)}) }

// TestWriteSplitChunks: long slices (steps, a row per step) are encoded
// and indented in chunks side by side, each element one level deeper, and
// the output is the Encoder's byte for byte; a slice with its own
// marshaller is written whole.
func TestWriteSplitChunks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	var rows []splitRow
	for i := range 1000 {
		r := splitRow{Name: strings.Repeat("k<", i%3)}
		switch i % 4 {
		case 0:
			r.PerStep = []float64{float64(i), 1e-9 * float64(i)}
		case 1:
			r.PerStep = []float64{}
		}
		rows = append(rows, r)
	}
	for _, n := range []int{2*minChunkElems - 1, 2 * minChunkElems, 2*minChunkElems + 1, 1000} {
		d := &splitDoc{Version: n, Steps: rows[:n], Ops: rows[n/2:], Nested: map[string]any{"steps": rows[:3]}, Tail: map[string]string{}}
		var got bytes.Buffer
		if err := Write(&got, d); err != nil {
			t.Fatal(err)
		}
		if want := encoderOutput(t, d); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("%d rows: output differs from the Encoder's at byte %d", n, firstDiff(got.Bytes(), want))
		}
	}
	p, err := encodePart(bigMarshaled(make([]int, 1000)))
	if err != nil || p.chunks != nil || string(p.whole) != "{\"n\":1000}\n" {
		t.Errorf("a slice with its own marshaller: chunks %d, whole %q, err %v", len(p.chunks), p.whole, err)
	}
}

// firstDiff is the first byte at which a and b differ.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// FuzzWriteSplit splits every other top-level member off any JSON object
// and checks the output against the indenting Encoder's of the whole.
func FuzzWriteSplit(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"a":null}],"b":{},"c":"x\"y"}`, `{"steps":[[],{}],"k":null,"z":[1e-7]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v map[string]any
		if json.Unmarshal(data, &v) != nil || v == nil {
			return
		}
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
		keys := slices.Sorted(maps.Keys(v))
		for _, k := range keys {
			// Arrays long enough to be encoded and indented in chunks.
			if a, ok := v[k].([]any); ok && len(a) > 0 {
				for len(a) < 3*minChunkElems {
					a = append(a, a...)
				}
				v[k] = a
			}
		}
		rest := map[string]any{}
		var members []Member
		for i, k := range keys {
			if i%2 == 0 {
				rest[k] = nil
				members = append(members, Member{k, v[k]})
			} else {
				rest[k] = v[k]
			}
		}
		var got bytes.Buffer
		if err := WriteSplit(&got, v, rest, members); err != nil {
			t.Fatal(err)
		}
		if want := encoderOutput(t, v); !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("input %q:\ngot  %s\nwant %s", data, got.Bytes(), want)
		}
	})
}
