package jsonout

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// inner, deep and hidden are embedded in embedding: promoted fields,
// names that collide at one depth (dropped) or at two (the shallower
// wins), a tagged name beating an untagged one.
type inner struct {
	A int    `json:"a"`
	B string `json:"b"`
	C int
}

// deep is embedded one level further down.
type deep struct {
	inner
	A float64 `json:"deep_a"`
	D []int   `json:"d,omitempty"`
}

// hidden collides with inner on C (both untagged, same depth).
type hidden struct {
	C int
	E bool `json:"e,omitempty"`
}

// embedding exercises encoding/json's field rules.
type embedding struct {
	*deep
	hidden
	B    string `json:"b"`
	Skip int    `json:"-"`
	//lint:ignore SA5008 the name "-", as encoding/json reads it
	Dash int `json:"-,"`
	//lint:ignore SA5008 an invalid name, replaced by the field's
	Bad      int               `json:"a\\b"`
	Quoted   int               `json:"quoted,string"`
	Zero     int               `json:"zero,omitzero"`
	Empty    map[string]int    `json:"empty,omitempty"`
	Ptr      *int              `json:"ptr,omitempty"`
	Iface    any               `json:"iface"`
	Bytes    []byte            `json:"bytes"`
	Number   json.Number       `json:"number"`
	Array    [2]float32        `json:"array"`
	Uints    []uint16          `json:"uints"`
	Map      map[string][]int  `json:"map"`
	private  int               // unexported: left out
	Text     textual           `json:"text"`
	TextPtr  *textual          `json:"text_ptr"`
	Addr     addrMarshal       `json:"addr"`
	Addrs    []addrMarshal     `json:"addrs"`
	Nested   []map[string]bool `json:"nested"`
	EmptyArr [0]int            `json:"empty_arr,omitempty"`
}

// textual marshals as text.
type textual struct{ n int }

func (t textual) MarshalText() ([]byte, error) { return []byte("t" + strconv.Itoa(t.n) + "<&>"), nil }

// addrMarshal marshals through its pointer only: in a slice or behind a
// pointer (addressable), not in a struct held by value.
type addrMarshal struct{ N int }

func (a *addrMarshal) MarshalJSON() ([]byte, error) {
	return []byte(`{"addr": ` + strconv.Itoa(a.N) + `}`), nil
}

// node reaches itself.
type node struct {
	Name string  `json:"name"`
	Next *node   `json:"next"`
	Kids []*node `json:"kids"`
}

// TestWriteMatchesEncoderOnTypes checks Write against the indenting
// Encoder on Go's field rules and the kinds encoding/json writes itself.
func TestWriteMatchesEncoderOnTypes(t *testing.T) {
	n := 3
	full := embedding{
		deep:   &deep{inner: inner{1, "<in>", 2}, A: 2.5, D: []int{1}},
		hidden: hidden{3, true},
		B:      "outer", Skip: 1, Dash: 2, Bad: 3, Quoted: 4, Zero: 0,
		Empty: map[string]int{"x": 1}, Ptr: &n, Iface: []any{1.5, "s", nil, map[string]any{"k": 1e-7}},
		Bytes: []byte("bytes"), Number: "12.50", Array: [2]float32{1.1, 3e-7}, Uints: []uint16{7},
		Map: map[string][]int{"b": {2}, "a": nil}, private: 5, Text: textual{1}, TextPtr: &textual{2},
		Addr: addrMarshal{4}, Addrs: []addrMarshal{{5}, {6}}, Nested: []map[string]bool{{"t": true}, nil},
	}
	list := &node{Name: "a", Next: &node{Name: "b\u2028\u2029\x00\x1f\x7f\xff\"\\/\t\n\r\b\f"}, Kids: []*node{{Name: "c"}, nil}}
	values := []any{
		full, &full, []embedding{full, {}}, embedding{}, list, []*node{list, nil},
		[]float64{0, math.Copysign(0, -1), 1e21, 1e20, 1e-6, 9.99e-7, -123.456, 0.1, 1.0 / 3, 123456789012.5, 5e-324, math.MaxFloat64},
		[]float32{0, 1e21, 1e-6, 9.99e-7, 1.0 / 3, 16777216.5},
		struct{}{}, [0]int{}, []int(nil), map[string]int(nil), (*int)(nil), "x<&>", true, uint8(7), int64(-9),
		struct {
			A []struct{} `json:"a"`
			B *struct{}  `json:"b,omitempty"`
		}{A: []struct{}{{}, {}}},
	}
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for i, v := range values {
			sameAsEncoder(t, "value "+strconv.Itoa(i), v)
		}
		runtime.GOMAXPROCS(prev)
	}
}

// TestWriteFailsAsEncoder: a value encoding/json refuses (a NaN, an
// infinity, a marshaller's error, a pointer cycle) gives its error and
// writes nothing, on one thread or streamed in pieces.
func TestWriteFailsAsEncoder(t *testing.T) {
	cycle := &node{Name: "loop"}
	cycle.Next = cycle
	bad := func(at int, f float64) *splitDoc {
		d := bigDoc(2000)
		d.Steps[at].PerStep = []float64{1, f}
		return d
	}
	values := map[string]any{
		"nan":        math.NaN(),
		"inf":        []float64{1, math.Inf(-1)},
		"marshaller": []failing{{}},
		"cycle":      cycle,
		"nan late":   bad(1996, math.NaN()),
		"inf early":  bad(0, math.Inf(1)),
		"float32":    []float32{float32(math.Inf(1))},
	}
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for name, v := range values {
			_, want := json.Marshal(v)
			if want == nil {
				t.Fatalf("%s: encoding/json took it", name)
			}
			for _, w := range []io.Writer{&bytes.Buffer{}, &plainWriter{}} {
				err := Write(w, v)
				if err == nil || err.Error() != want.Error() {
					t.Errorf("%s: error %v, want %v", name, err, want)
				}
				if n := written(w); n != 0 {
					t.Errorf("%s: %d bytes written", name, n)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}

// failing's marshaller fails.
type failing struct{}

func (failing) MarshalJSON() ([]byte, error) { return nil, errors.New("no") }

// plainWriter is a writer that is not a buffer (stdout), counting what
// it is given.
type plainWriter struct{ bytes.Buffer }

// Write hides the buffer from Write's type switch.
func (p *plainWriter) Write(b []byte) (int, error) { return p.Buffer.Write(b) }

// written is how many bytes w holds.
func written(w io.Writer) int {
	switch w := w.(type) {
	case *bytes.Buffer:
		return w.Len()
	case *plainWriter:
		return w.Len()
	}
	return -1
}

// failAfter fails its writes after n bytes.
type failAfter struct{ n int }

func (f *failAfter) Write(b []byte) (int, error) {
	if f.n -= len(b); f.n < 0 {
		return 0, io.ErrShortWrite
	}
	return len(b), nil
}

// TestStreamStopsAtWriteError: a streamed Write returns the writer's
// error and writes nothing more.
func TestStreamStopsAtWriteError(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	f := &failAfter{n: 100000}
	if err := Write(f, bigDoc(2000)); err != io.ErrShortWrite {
		t.Errorf("error %v, want the writer's", err)
	}
}

// TestAppendFloat64MatchesStrconv checks the fast path for whole numbers
// and thousandths against encoding/json's formatting: random values on
// and off the grid, near the bounds, negative, and the grid's neighbours.
func TestAppendFloat64MatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	values := []float64{0, 1, -1, 0.001, -0.001, 0.0005, 0.999, 999999999999.999, 1e12, -1e12, 1e12 - 0.001, 1e15, 0.1, 0.2, 0.3, 2.675, 1.0005}
	for range 300000 {
		var f float64
		switch r.IntN(5) {
		case 0:
			f = float64(r.Int64N(2e15)-1e15) / 1000
		case 1:
			f = float64(r.Int64N(2000)-1000) / 1000
		case 2:
			f = r.NormFloat64() * math.Pow(10, float64(r.IntN(30)-10))
		case 3:
			f = math.Nextafter(float64(r.Int64N(2e12)-1e12)/1000, math.Inf(r.IntN(2)*2-1))
		default:
			f = float64(r.Int64N(1e9)) * math.Pow(10, float64(r.IntN(8)-4))
		}
		values = append(values, f)
	}
	for _, f := range values {
		got, err := appendFloat64(nil, f)
		want, _ := appendFloat(nil, f, 64)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%v (%b): got %s, want %s", f, math.Float64bits(f), got, want)
		}
		if enc, _ := json.Marshal(f); string(enc) != string(want) {
			t.Fatalf("%v: appendFloat %s, encoding/json %s", f, want, enc)
		}
	}
}

// FuzzAppendString checks appendString against encoding/json on any
// bytes, valid UTF-8 or not.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a<&>", "\u2028\u2029", "\xff\xfe", "\x00\x1f\x7f", `"\`, strings.Repeat("é", 3)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got)+"\n" != b.String() {
			t.Fatalf("%q: got %s, want %s", s, got, b.Bytes())
		}
	})
}
