package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

const goodEvent = `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10.5,"dur":2,"args":{"correlation":1,"stream":7}}`

func TestBadInputGivesClearErrors(t *testing.T) {
	fixture := gunzip(t, "../fixtures/fusedlinear_naive.json.gz")
	cases := []struct {
		name string
		in   []byte
		want string // substring of the error
	}{
		{"empty file", nil, "empty file"},
		{"only whitespace", []byte(" \n\t "), "invalid JSON at byte 4: unexpected end of input"},
		{"not JSON", []byte("hello world"), "invalid JSON at byte 0: expected a JSON object or array"},
		{"scalar", []byte("42"), "invalid JSON at byte 0"},
		{"object without events", []byte(`{"schemaVersion": 1}`), "no traceEvents array"},
		{"traceEvents not an array", []byte(`{"traceEvents": {"a": 1}}`), "traceEvents at byte 16 is not an array"},
		{"truncated in an event", []byte(`{"traceEvents": [` + goodEvent + `, {"ph": "X", "na`), "invalid JSON at byte"},
		{"object form truncated after comma", []byte(`{"traceEvents": [` + goodEvent + `,`), "unexpected end of input"},
		{"array form truncated in an event", []byte(`[` + goodEvent + `, {"ph":"X"`), "unexpected end of input"},
		{"array form with no event", []byte(`[`), "unexpected end of input"},
		{"missing bracket", []byte(`{"traceEvents": [` + goodEvent), "unexpected end of input inside traceEvents"},
		{"mismatched bracket", []byte(`[{"ph": "X"]]`), `'{' closed by ']'`},
		{"stray character", []byte(`[{"ph": "X", "dur": @}]`), `unexpected character '@'`},
		{"missing comma", []byte(`[` + goodEvent + goodEvent + `]`), "expected ',' or ']' in traceEvents"},
		{"trailing comma", []byte(`[` + goodEvent + `,]`), "trailing comma"},
		{"garbage after", []byte(`[` + goodEvent + `] x`), "unexpected data after the top-level value"},
		{"deep nesting", []byte(`[{"args":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}]`), "nesting deeper than 256 levels"},
		// A member without its value or key: gjson read on, the member
		// absent (a slice of no duration); the offset is the member's.
		{"key without a value", []byte(`[` + goodEvent + `, {"ph": "X", "ts": 1, "dur": }]`), `invalid JSON at byte 137: expected a value after "dur": in an event, found '}'`},
		{"key without a value, escaped name", []byte(`[{"ph": "X", "name": "a\n", "ts": 1, "dur": }]`), `invalid JSON at byte 44: expected a value after "dur": in an event, found '}'`},
		{"two commas in an event", []byte(`[{"ph": "X", "ts": 1,, "dur": 3}]`), `byte 21: expected a "key" in an event, found ','`},
		{"missing colon in an event", []byte(`[{"ph": "X", "ts" 1}]`), `byte 18: expected ':' after "ts" in an event, found '1'`},
		{"missing comma in an event", []byte(`[{"ph": "X" "ts": 1}]`), `byte 12: expected ',' or '}' after "ph"'s value in an event, found '"'`},
		{"trailing comma in an event", []byte(`[{"ph": "X", "ts": 1, }]`), `byte 22: expected a "key" in an event, found '}'`},
		{"gzip that is not gzip", append([]byte{0x1f, 0x8b}, []byte("definitely not deflate data")...), "not a valid gzip file"},
		{"truncated gzip", gz(fixture)[:2000], "corrupt gzip data"},
	}
	for _, n := range []int{1, 100, 1000, len(fixture) / 2, len(fixture) - 3} {
		cases = append(cases, struct {
			name string
			in   []byte
			want string
		}{"fixture truncated at " + itoa(n), fixture[:n], "invalid JSON at byte"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(c.in), c.name, Options{})
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestTruncationOffsetIsWhereInputEnds(t *testing.T) {
	in := []byte(`{"traceEvents": [` + goodEvent + `, {"ph": "X"`)
	_, err := Read(bytes.NewReader(in), "x", Options{})
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a SyntaxError", err)
	}
	if se.Offset != int64(len(in)) {
		t.Errorf("offset %d, want %d (end of input)", se.Offset, len(in))
	}
}

func TestWrongTypesAreCountedSkips(t *testing.T) {
	in := `{"traceEvents": [
	` + goodEvent + `,
	{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":"12"},
	{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":-3},
	{"ph":"X","cat":"kernel","name":null,"pid":0,"tid":7,"ts":1,"dur":3},
	{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"dur":3},
	{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":"soon","dur":3},
	17,
	{"cat":"kernel"},
	{"ph":"Q"}
	]}`
	tr, err := Read(strings.NewReader(in), "x", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Kernels() != 1 {
		t.Errorf("%d kernels, want the 1 valid one", tr.Kernels())
	}
	want := map[string]int{
		"dur not a number":           1,
		"negative dur":               1,
		"name is not a string":       1,
		"ts missing or not a number": 2,
		"event is not a JSON object": 1,
		"event without ph":           1,
		"phase Q not modelled":       1,
	}
	got := map[string]int{}
	for _, s := range tr.Skipped {
		got[s.Reason] = s.Count
	}
	for reason, n := range want {
		if got[reason] != n {
			t.Errorf("skipped %q: %d, want %d (all: %v)", reason, got[reason], n, tr.Skipped)
		}
	}
	if tr.Events != 9 {
		t.Errorf("events = %d, want 9", tr.Events)
	}
}

func TestHugeStringIsRead(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 100 MB")
	}
	name := strings.Repeat("x", 100<<20)
	in := `[{"ph":"X","cat":"kernel","name":"` + name + `","pid":0,"tid":7,"ts":1,"dur":2}, ` + goodEvent + `]`
	tr, err := Read(strings.NewReader(in), "x", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Kernels() != 2 || len(tr.GPU[0].Name) != len(name) && len(tr.GPU[1].Name) != len(name) {
		t.Errorf("got %d kernels", tr.Kernels())
	}
}

func TestFormsAndDialects(t *testing.T) {
	cases := []struct {
		name, in string
		check    func(t *testing.T, tr *trace.Trace)
	}{
		{"bare array", `[` + goodEvent + `]`, func(t *testing.T, tr *trace.Trace) {
			if tr.Kernels() != 1 || tr.GPU[0].Start != 10500 || tr.GPU[0].Dur() != 2000 {
				t.Errorf("got %+v", tr.GPU)
			}
		}},
		{"byte order mark", "\xef\xbb\xbf[" + goodEvent + `]`, func(t *testing.T, tr *trace.Trace) {
			if tr.Kernels() != 1 {
				t.Errorf("got %d kernels", tr.Kernels())
			}
		}},
		{"empty events", `{"traceEvents": []}`, func(t *testing.T, tr *trace.Trace) {
			if tr.Events != 0 || len(tr.Steps) != 0 {
				t.Errorf("got %d events, %d steps", tr.Events, len(tr.Steps))
			}
		}},
		{"legacy schema", `{"traceEvents": [
			{"ph":"X","cat":"Operator","name":"aten::mm","pid":1,"tid":"1","ts":100,"dur":50,"args":{"external id":5}},
			{"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":1,"tid":"1","ts":110,"dur":10,"args":{"external id":5}},
			{"ph":"s","cat":"async","name":"launch","id":77,"pid":1,"tid":"1","ts":110},
			{"ph":"X","cat":"Kernel","name":"sgemm","pid":0,"tid":"stream 7","ts":130,"dur":40,"args":{"device":0}},
			{"ph":"f","cat":"async","name":"launch","id":77,"pid":0,"tid":"stream 7","ts":130,"bp":"e"}]}`,
			func(t *testing.T, tr *trace.Trace) {
				if tr.Meta.Format != "kineto-legacy" {
					t.Errorf("format %q", tr.Meta.Format)
				}
				if tr.Kernels() != 1 || tr.GPU[0].Stream != 7 {
					t.Fatalf("kernels %+v", tr.GPU)
				}
				if tr.GPU[0].Launch == trace.None {
					t.Fatalf("legacy kernel not linked through its flow")
				}
				if op := tr.LaunchOp(0); op == trace.None || tr.Ops[op].Name != "aten::mm" {
					t.Errorf("launch op = %v", op)
				}
			}},
		{"exponent and long fraction", `[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1.5e3,"dur":0.0015}]`, func(t *testing.T, tr *trace.Trace) {
			if tr.GPU[0].Start != 1500000 || tr.GPU[0].Dur() != 2 {
				t.Errorf("start %d dur %d, want 1500000 and 2 (1.5 ns rounds half up)", tr.GPU[0].Start, tr.GPU[0].Dur())
			}
		}},
		{"escaped names", `[{"ph":"X","cat":"kernel","name":"a\"b\\c\u00e9","pid":0,"tid":7,"ts":1,"dur":1}]`, func(t *testing.T, tr *trace.Trace) {
			if tr.GPU[0].Name != "a\"b\\cé" {
				t.Errorf("name %q", tr.GPU[0].Name)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := Read(strings.NewReader(c.in), c.name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, tr)
		})
	}
}

func TestParseMicrosToNanos(t *testing.T) {
	cases := map[string]int64{
		"4485344487239.559": 4485344487239559,
		"0":                 0,
		"12":                12000,
		"1.5":               1500,
		"0.0004":            0,
		"0.0005":            1,
		"-2.25":             -2250,
		"7.1239":            7124,
		"1e3":               1000000,
	}
	for in, want := range cases {
		got, err := parseMicrosToNanos(in)
		if err != nil || got != want {
			t.Errorf("parseMicrosToNanos(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	// 2^62 ns is 4611686018427387.904 µs: the last value in range.
	cases["4611686018427387.904"] = 1 << 62
	cases["-4611686018427387.904"] = -(1 << 62)
	for _, bad := range []string{"", "-", ".5", "1.", "1x", "99999999999999999999", "1e300", "-1e300", "1e400",
		"4611686018427387.905", "4611686018427388", "9223372036854775.807", "9.3e15", "-9.3e15"} {
		if _, err := parseMicrosToNanos(bad); err == nil {
			t.Errorf("parseMicrosToNanos(%q) succeeded", bad)
		}
	}
}

func TestBeginEndPairsBecomeSpans(t *testing.T) {
	in := `{"traceEvents": [
	{"ph":"M","pid":1,"name":"process_name","args":{"name":"/device:GPU:0"}},
	{"ph":"M","pid":1,"tid":7,"name":"thread_name","args":{"name":"Stream #7(Compute)"}},
	{"ph":"M","pid":2,"name":"process_name","args":{"name":"/host:CPU"}},
	{"ph":"B","pid":2,"tid":3,"ts":10,"name":"train_step"},
	{"ph":"B","pid":2,"tid":3,"ts":11,"name":"cuLaunchKernel","args":{"correlation_id":"5"}},
	{"ph":"E","pid":2,"tid":3,"ts":13},
	{"ph":"B","pid":1,"tid":7,"ts":14,"name":"fusion_1","args":{"correlation_id":"5"}},
	{"ph":"E","pid":1,"tid":7,"ts":20.5},
	{"ph":"E","pid":2,"tid":3,"ts":30},
	{"ph":"E","pid":2,"tid":3,"ts":31},
	{"ph":"B","pid":2,"tid":3,"ts":40,"name":"never_ends"}
	]}`
	tr, err := Read(strings.NewReader(in), "be", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Kernels() != 1 || tr.GPU[0].Name != "fusion_1" || tr.GPU[0].Start != 14000 || tr.GPU[0].Dur() != 6500 || tr.GPU[0].Stream != 7 {
		t.Fatalf("kernel from B/E: %+v", tr.GPU)
	}
	if tr.GPU[0].Launch == trace.None || tr.APICalls[tr.GPU[0].Launch].Dur() != 2000 {
		t.Errorf("kernel not linked to its 2 µs launch call")
	}
	if op := tr.LaunchOp(0); op == trace.None || tr.Ops[op].Name != "train_step" || tr.Ops[op].Dur() != 20000 {
		t.Errorf("launch not nested in train_step")
	}
	got := map[string]int{}
	for _, s := range tr.Skipped {
		got[s.Reason] = s.Count
	}
	if got["E event without a matching B"] != 1 || got["B event never ended"] != 1 {
		t.Errorf("skips %v", tr.Skipped)
	}
}

// TestHugeTimesAreCountedSkips: timestamps and durations whose nanoseconds
// would not fit in int64, or whose end would wrap, are skipped and counted
// by reason, never turned into a negative span or a wrapped time.
func TestHugeTimesAreCountedSkips(t *testing.T) {
	ev := func(ts, dur string) string {
		return `{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":` + ts + `,"dur":` + dur + `}`
	}
	in := "[" + strings.Join([]string{
		ev("10", "2"),
		ev("1e300", "1"),
		ev("-1e300", "1"),
		ev("99999999999999999999999", "1"),
		ev("10", "1e300"),
		ev("10", "9223372036854775.807"),
		ev("4000000000000000", "1000000000000000"), // each in range, the end is not
		ev("4611686018427387.904", "0"),            // the last time in range
		`{"ph":"i","name":"[memory]","pid":0,"tid":1,"ts":1e300,"args":{"Bytes":1}}`,
		`{"ph":"B","name":"b","pid":0,"tid":1,"ts":-1e300}`,
	}, ",") + "]"
	tr, err := Read(strings.NewReader(in), "huge", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.GPU) != 2 || tr.GPU[0].Start != 10000 || tr.GPU[1].Start != 1<<62 {
		t.Fatalf("kept %+v, want the two kernels in range", tr.GPU)
	}
	got := map[string]int{}
	for _, s := range tr.Skipped {
		got[s.Reason] = s.Count
	}
	want := map[string]int{"ts out of range": 3, "dur out of range": 2, "ts+dur out of range": 1, "ts missing or not a number": 2}
	for r, n := range want {
		if got[r] != n {
			t.Errorf("skipped %q %d times, want %d (all: %v)", r, got[r], n, tr.Skipped)
		}
	}
	for i := range tr.GPU {
		if tr.GPU[i].End < tr.GPU[i].Start {
			t.Errorf("negative span %+v", tr.GPU[i])
		}
	}
}
