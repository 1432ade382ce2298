package jsonout

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// splitRow stands for a report's per-step row.
type splitRow struct {
	Name    string      `json:"name"`
	PerStep []float64   `json:"per_step"`
	Shares  []stepShare `json:"shares,omitempty"`
}

// stepShare stands for a report's figure per step.
type stepShare struct {
	Count int     `json:"count"`
	Us    float64 `json:"us"`
}

// splitDoc stands for a report: small members around large ones, maps
// (encoding/json's to write), an omitempty member.
type splitDoc struct {
	Version int               `json:"version"`
	Steps   []splitRow        `json:"steps"`
	Nested  map[string]any    `json:"nested"`
	Ops     []splitRow        `json:"ops"`
	Extra   *splitRow         `json:"extra,omitempty"`
	Tail    map[string]string `json:"tail"`
}

// outer holds a document embedded, as a run's report holds a Result,
// with a key of its own that hides the document's.
type outer struct {
	*splitDoc
	Rank  int        `json:"rank"`
	Steps []splitRow `json:"steps"`
}

// sameAsEncoder fails t where Write's output of v, into a buffer and
// into a plain writer, is not the indenting Encoder's.
func sameAsEncoder(t *testing.T, name string, v any) {
	t.Helper()
	want := encoderOutput(t, v)
	var got, other bytes.Buffer
	got.WriteString("before")
	if err := Write(&got, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := Write(struct{ io.Writer }{&other}, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if g := bytes.TrimPrefix(got.Bytes(), []byte("before")); !bytes.Equal(g, want) {
		t.Errorf("%s: output differs from the Encoder's at byte %d:\ngot  %.300s\nwant %.300s", name, firstDiff(g, want), g, want)
	}
	if !bytes.Equal(other.Bytes(), want) {
		t.Errorf("%s through a writer: output differs from the Encoder's at byte %d", name, firstDiff(other.Bytes(), want))
	}
}

// bigDoc is a document heavy enough to be cut into pieces: n steps and
// ops with a figure per step.
func bigDoc(n int) *splitDoc {
	rows := make([]splitRow, n)
	for i := range rows {
		r := splitRow{Name: strings.Repeat("k<", i%3)}
		switch i % 4 {
		case 0:
			r.PerStep = []float64{float64(i), 1e-9 * float64(i), float64(i) / 7}
		case 1:
			r.PerStep = []float64{}
		case 2:
			r.Shares = make([]stepShare, n)
			for j := range r.Shares {
				r.Shares[j] = stepShare{j, float64(j) * 0.125}
			}
		}
		rows[i] = r
	}
	return &splitDoc{Version: n, Steps: rows, Ops: rows[n/2:], Nested: map[string]any{"steps": rows[:min(3, n)]}, Tail: map[string]string{}}
}

// TestWriteMatchesEncoderOnDocuments checks documents shaped like a
// report, small and large, embedded in another struct, on one thread
// and on several (cut into pieces), against the indenting Encoder.
func TestWriteMatchesEncoderOnDocuments(t *testing.T) {
	rows := []splitRow{{"a<&>", []float64{1, 2.5e-7, 1e21}, nil}, {`q"\`, nil, []stepShare{}}, {"", []float64{}, []stepShare{{1, -0.5}}}}
	docs := []*splitDoc{
		{Version: 1, Steps: rows, Ops: rows[:1], Nested: map[string]any{"steps": nil, "ops": []any{}}, Tail: map[string]string{"k": "v"}},
		{Steps: []splitRow{}, Extra: &rows[0]},
		{},
		bigDoc(300),
		bigDoc(700),
	}
	for _, procs := range []int{1, 3, 8} {
		prev := runtime.GOMAXPROCS(procs)
		for i, d := range docs {
			sameAsEncoder(t, "doc", d)
			sameAsEncoder(t, "embedded", outer{splitDoc: d, Rank: i})
			sameAsEncoder(t, "embedded pointer", &outer{splitDoc: d, Rank: i, Steps: rows})
			sameAsEncoder(t, "documents", []*splitDoc{d, nil, d})
		}
		sameAsEncoder(t, "nil embedded", outer{Rank: 2})
		runtime.GOMAXPROCS(prev)
	}
}

// TestWriteCutsHeavyValues: a heavy document is cut into pieces for
// several threads, each a light one; a light document, or one thread,
// gives one piece.
func TestWriteCutsHeavyValues(t *testing.T) {
	d := bigDoc(2000)
	rv := reflect.ValueOf(d)
	c := codecs{}.of(rv.Type())
	total := weight(c, rv, 0)
	pieces, _, err := cut(c, rv, 4, math.MaxInt)
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) < 4*piecesPerThread/2 {
		t.Errorf("weight %d on 4 threads: %d pieces, want about %d", total, len(pieces), 4*piecesPerThread)
	}
	for _, p := range pieces {
		if p.weight > 2*total/(4*piecesPerThread)+1 {
			t.Errorf("a piece of weight %d, of %d in all", p.weight, total)
		}
	}
	for name, n := range map[string]int{"one thread": 1, "light": 4} {
		v := rv
		if name == "light" {
			v = reflect.ValueOf(bigDoc(20))
		}
		if pieces, _, _ := cut(c, v, n, math.MaxInt); len(pieces) != 1 {
			t.Errorf("%s: %d pieces, want 1", name, len(pieces))
		}
	}
}

// bigMarshaled is a slice type with its own marshaller: written by it,
// not element by element.
type bigMarshaled []int

func (b bigMarshaled) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]int{"n": len(b)}) }

// TestWriteKeepsMarshallers: a long slice with its own marshaller,
// inside a heavy document, is written by the marshaller.
func TestWriteKeepsMarshallers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	v := struct {
		Doc *splitDoc    `json:"doc"`
		Big bigMarshaled `json:"big"`
	}{bigDoc(1000), make(bigMarshaled, 100000)}
	sameAsEncoder(t, "marshaller", v)
	var b bytes.Buffer
	if err := Write(&b, v); err != nil || !bytes.Contains(b.Bytes(), []byte("\"big\": {\n    \"n\": 100000\n  }")) {
		t.Errorf("the slice's marshaller did not write it (err %v)", err)
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

// counted counts its marshaller's calls.
type counted struct{ calls *atomic.Int64 }

func (c counted) MarshalJSON() ([]byte, error) {
	c.calls.Add(1)
	return []byte(`"c<&>"`), nil
}

// TestStreamMarshalsOnce: streamed, a value with its own marshaller is
// encoded once (by the check, kept for the encoding), and the output is
// the Encoder's.
func TestStreamMarshalsOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var calls atomic.Int64
	type row struct {
		Us   float64 `json:"us"`
		Cell counted `json:"cell"`
	}
	rows := make([]row, 20000)
	for i := range rows {
		rows[i] = row{float64(i) / 8, counted{&calls}}
	}
	want := encoderOutput(t, rows)
	calls.Store(0)
	var got plainWriter
	if err := Write(&got, rows); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("output differs from the Encoder's at byte %d", firstDiff(got.Bytes(), want))
	}
	if n := calls.Load(); n != int64(len(rows)) {
		t.Errorf("%d marshaller calls for %d values", n, len(rows))
	}
}
