package jsonout

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
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
		keys := slices.Sorted(maps.Keys(v))
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
