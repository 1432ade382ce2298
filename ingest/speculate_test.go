package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/tracelens/tracelens/trace"
)

// TestSpeculativeSplitGivesTheSerialModel: on every real fixture, batches
// cut without scanning (checked by the workers) give exactly the model the
// serial scan gives, plain and gzipped, with batches small enough that
// most are speculative.
func TestSpeculativeSplitGivesTheSerialModel(t *testing.T) {
	speculated, direct := 0, 0
	for _, path := range sampledFixtures(t) {
		raw := gunzip(t, path)
		want, err := Read(bytes.NewReader(raw), path, Options{serial: true, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range [][]byte{raw, gz(raw)} {
			for _, chunk := range []int{0, 8 << 10} {
				checkSpeculative(t, in, want, chunk, path)
			}
		}
		speculated += countSpeculated(t, raw)
		direct += countDirect(t, raw)
	}
	t.Logf("%d batches cut speculatively, %d read directly", speculated, direct)
	if speculated == 0 || direct == 0 {
		t.Errorf("%d batches cut speculatively, %d read directly: the test proves nothing", speculated, direct)
	}
}

// TestSpeculativeMissFallsBackToSerial: separators inside a string (a raw
// newline, which the scanner tolerates) or inside a nested value make a
// cut miss; the read starts over serially and gives the serial model.
func TestSpeculativeMissFallsBackToSerial(t *testing.T) {
	ev := func(name, args string) string {
		return "\n  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + name + "\", \"pid\": 1, \"tid\": 1,\n    \"ts\": 1, \"dur\": 2,\n    \"args\": " + args + "\n  }"
	}
	var evs []string
	for range 200 {
		evs = append(evs, ev("op", `{"External id": 1}`))
	}
	// Where the odd event falls in a buffer varies with the events before
	// it; padding after its separator makes that the buffer's last one,
	// where the scanner cuts.
	for kind, odd := range map[string]func(pad string) string{
		"in a string": func(pad string) string { return ev("x"+kinetoSep+pad, `{}`) },
		"nested":      func(pad string) string { return ev("nested", "[{\"a\": 1"+kinetoSep+"\"b\": \""+pad+"\"}]") },
	} {
		misses, directMisses := 0, 0
		for before := 150; before < 200; before++ {
			all := append(append(append([]string(nil), evs[:before]...), odd(strings.Repeat("y", 3000))), evs...)
			in := []byte("{\"traceEvents\": [" + strings.Join(all, ",") + "\n]}")
			if _, err := read(bytes.NewReader(in), int64(len(in)), Options{chunk: 4 << 10}); errors.Is(err, errMiss) {
				misses++
			}
			r := bytes.NewReader(in)
			if _, err := read(r, int64(len(in)), Options{chunk: 4 << 10, ra: r, seeker: r}); errors.Is(err, errMiss) {
				directMisses++
			}
			want, werr := Read(bytes.NewReader(in), "odd", Options{serial: true})
			got, gerr := Read(bytes.NewReader(in), "odd", Options{chunk: 4 << 10})
			if werr != nil || gerr != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %d events before: %v %v, models equal %v", kind, before, gerr, werr, reflect.DeepEqual(got, want))
			}
		}
		if misses == 0 || directMisses == 0 {
			t.Errorf("%s: %d cuts missed, %d with direct reads: the test proves nothing", kind, misses, directMisses)
		}
	}
}

// TestFusedCutChecksLikeTheScanner: the workers read a speculative batch's
// events while checking them (objectFields with the scanner's rules), so
// an event the scanner rejects (mismatched brackets in args, a stray byte
// between members, nesting one level too deep) or accepts oddly (a raw
// newline in a string, nesting at exactly the limit, escapes) must give
// what the serial scan gives: the same model, or an error at the same
// offset.
func TestFusedCutChecksLikeTheScanner(t *testing.T) {
	ev := func(body string) string {
		return "\n  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1,\n    \"ts\": 1, \"dur\": 2" + body + "\n  }"
	}
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	odd := map[string]string{
		"mismatched":   `, "args": {"a": [1}}`,
		"stray byte":   `, "args": {"a": 1} x`,
		"at the limit": `, "args": {"a": ` + deep(maxDepth-2) + `}`,
		"too deep":     `, "args": {"a": ` + deep(maxDepth-1) + `}`,
		"raw newline":  `, "args": {"a": "x` + "\n" + `y"}`,
		"escaped name": `, "args": {}, "name": "a\u00e9\"b"`,
		"bad number":   `, "args": {}, "ts": 01`,
		"bare word":    `, "args": {}, "x": tru`,
		"no colon":     `, "args" {}`,
		"many members": `, "args": {` + strings.Repeat(`"m": [1], `, maxArgMembers) + `"External id": 5}`,
		"args twice":   `, "args": {"External id": 5}, "args": {"External id": 6, "a": [}`,
		"args bad end": `, "args": {"External id": 5} "x": 1`,
	}
	for kind, body := range odd {
		var all []string
		for i := range 400 {
			b := `, "args": {"External id": 1}`
			if i == 200 {
				b = body
			}
			all = append(all, ev(b))
		}
		in := []byte("{\"traceEvents\": [" + strings.Join(all, ",") + "\n]}")
		want, werr := Read(bytes.NewReader(in), "odd", Options{serial: true})
		got, gerr := Read(bytes.NewReader(in), "odd", Options{chunk: 4 << 10, Workers: 2})
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Errorf("%s: serial error %v, speculative %v", kind, werr, gerr)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the speculative split's model differs from the serial scan's", kind)
		}
	}
}

// relayout writes the events of the Chrome trace raw in another writer's
// layout (with encoding/json and gjson, not the reader under test).
func relayout(t testing.TB, raw []byte, layout string) []byte {
	var evs []string
	gjson.GetBytes(raw, "traceEvents").ForEach(func(_, e gjson.Result) bool {
		var b bytes.Buffer
		var err error
		switch layout {
		case "kineto-old": // as Kineto writes events, joined by "," ("\n  },{")
			b.WriteString(e.Raw)
		case "one per line":
			err = json.Compact(&b, []byte(e.Raw))
		case "indented":
			err = json.Indent(&b, []byte(e.Raw), "    ", "  ")
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, b.String())
		return true
	})
	switch layout {
	case "kineto-old":
		return []byte("{\"traceEvents\": [" + strings.Join(evs, ",") + "]}")
	case "one per line":
		return []byte("{\"traceEvents\": [\n  " + strings.Join(evs, ",\n  ") + "\n]}\n")
	default:
		return []byte("{\n  \"traceEvents\": [\n    " + strings.Join(evs, ",\n    ") + "\n  ]\n}\n")
	}
}

// TestLearnedSeparatorGivesTheSerialModel: every real fixture's events
// laid out as other writers lay them out (older Kineto's "\n  },{",
// capture's one event per line, an indenting writer's) are cut at the
// separator the scanner learns from the first two events, in parallel,
// without a miss, and give exactly the serial scan's model.
func TestLearnedSeparatorGivesTheSerialModel(t *testing.T) {
	for _, layout := range []string{"kineto-old", "one per line", "indented"} {
		speculated, direct := 0, 0
		for _, path := range sampledFixtures(t) {
			in := relayout(t, gunzip(t, path), layout)
			want, err := Read(bytes.NewReader(in), path, Options{serial: true, Workers: 1})
			if err != nil {
				t.Fatalf("%s %s: %v", path, layout, err)
			}
			checkSpeculative(t, in, want, 8<<10, path+" "+layout)
			speculated += countSpeculated(t, in)
			direct += countDirect(t, in)
		}
		if least := 100 * len(sampledFixtures(t)) / len(fixturePaths(t)); speculated < least || direct < least {
			t.Errorf("%s: only %d batches cut speculatively, %d read directly: the layout is read serially", layout, speculated, direct)
		}
	}
}

// checkSpeculative reads in with the speculative split and checks the
// model is want. It calls read, not Read: a miss would start over
// serially and hide it.
func checkSpeculative(t *testing.T, in []byte, want *trace.Trace, chunk int, name string) {
	t.Helper()
	got, err := read(bytes.NewReader(in), int64(len(in)), Options{chunk: chunk, Workers: 3})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got.Source = want.Source
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s (chunk %d): the speculative split's model differs from the serial scan's", name, chunk)
	}
	// The same with the workers reading their batches themselves (what
	// Read does with a bytes.Reader or a file).
	r := bytes.NewReader(in)
	got, err = read(r, int64(len(in)), Options{chunk: chunk, Workers: 3, ra: r, seeker: r})
	if err != nil {
		t.Fatalf("%s, direct reads: %v", name, err)
	}
	got.Source = want.Source
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s (chunk %d): direct reads give a model other than the serial scan's", name, chunk)
	}
}

// countDirect is the number of batches of in that workers read themselves
// (see direct), in 8 KiB batches.
func countDirect(t *testing.T, in []byte) int {
	n := 0
	st := &streamer{r: bytes.NewReader(in), chunk: 8 << 10, free: make(chan []byte, 4), speculate: true}
	st.direct = &direct{ra: bytes.NewReader(in), size: int64(len(in)), note: func(int64) {},
		seek: func(off int64) error { st.r = bytes.NewReader(in[off:]); return nil }}
	st.emit = func(b *batch) bool {
		if b.src != nil {
			n++
		}
		return true
	}
	if err := st.run(); err != nil {
		t.Fatal(err)
	}
	return n
}

// countSpeculated is the number of batches of in that the scanner cuts
// without scanning, in 8 KiB buffers.
func countSpeculated(t *testing.T, in []byte) int {
	n := 0
	st := &streamer{r: bytes.NewReader(in), chunk: 8 << 10, free: make(chan []byte, 4), speculate: true}
	st.emit = func(b *batch) bool {
		if b.spans == nil {
			n++
		}
		return true
	}
	if err := st.run(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDirectBufferIsAllocatedOnce: regions end anywhere in the second
// half of a batch, so a worker that grew its buffer to each larger one
// allocated again and again (garbage the collector then ran for on 16
// cores); it allocates once, at the batch size.
func TestDirectBufferIsAllocatedOnce(t *testing.T) {
	in := bytes.Repeat([]byte("x"), 1000)
	w := newWorker(0, nil)
	var first *byte
	for _, n := range []int32{500, 600, 999, 700, 1000} {
		b, err := w.readRegion(&batch{src: bytes.NewReader(in), region: n, cutEnd: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(b.buf) != int(n) || b.cutEnd != n {
			t.Fatalf("region of %d bytes read as %d, cut at %d", n, len(b.buf), b.cutEnd)
		}
		if first == nil {
			first = &b.buf[0]
		} else if &b.buf[0] != first {
			t.Fatalf("a region of %d bytes was read into a new buffer", n)
		}
	}
}
