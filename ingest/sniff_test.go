package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestContainersAndEncodingsNamed: a trace in UTF-16 or UTF-32, a zip,
// bzip2, zstd or xz file, and a gzip file of one byte are refused with a
// message that says what the file is and what to do (issue 27), not
// "invalid JSON at byte 0, found 'P'".
func TestContainersAndEncodingsNamed(t *testing.T) {
	const doc = `{"traceEvents":[]}`
	u16 := func(bom bool, big bool) []byte {
		var b []byte
		if bom {
			b = []byte{0xff, 0xfe}
			if big {
				b = []byte{0xfe, 0xff}
			}
		}
		for _, r := range utf16.Encode([]rune(doc)) {
			if big {
				b = append(b, byte(r>>8), byte(r))
			} else {
				b = append(b, byte(r), byte(r>>8))
			}
		}
		return b
	}
	u32 := func(big bool) []byte {
		var b []byte
		for _, r := range doc {
			if big {
				b = append(b, 0, 0, 0, byte(r))
			} else {
				b = append(b, byte(r), 0, 0, 0)
			}
		}
		return b
	}
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"UTF-16LE with BOM", u16(true, false), "UTF-16 (little-endian)"},
		{"UTF-16BE with BOM", u16(true, true), "UTF-16 (big-endian)"},
		{"UTF-16LE without BOM", u16(false, false), "UTF-16 (little-endian)"},
		{"UTF-32LE", u32(false), "UTF-32 (little-endian)"},
		{"UTF-32BE", u32(true), "UTF-32 (big-endian)"},
		{"zip", append([]byte("PK\x03\x04"), make([]byte, 40)...), "zip archive"},
		{"bzip2", []byte("BZh91AY&SY\x00\x00\x00"), "bzip2"},
		{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0}, "zstd"},
		{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0, 0}, "xz"},
		{"1-byte gzip", []byte{0x1f}, "gzip file cut short"},
	} {
		_, err := Read(bytes.NewReader(c.in), c.name, Options{})
		var fe *FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a FormatError saying %q", c.name, err, c.want)
		}
	}
}

// TestInvalidEscapeIsAnError: "\q" in a name is invalid JSON; gjson cut
// the name short there and the trace read without a word (issue 27).
// Valid escapes still read, plain and gzipped.
func TestInvalidEscapeIsAnError(t *testing.T) {
	ev := func(name string) string {
		return `[{"ph":"X","cat":"kernel","name":"` + name + `","pid":0,"tid":7,"ts":1,"dur":1}]`
	}
	gz := func(s string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(s))
		zw.Close()
		return b.Bytes()
	}
	for _, bad := range []string{`a\qb`, `a\u12`, `a\u12G4b`, `a\x41`, `a\'`} {
		for _, in := range [][]byte{[]byte(ev(bad)), gz(ev(bad))} {
			_, err := Read(bytes.NewReader(in), "esc", Options{})
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "invalid escape") || se.Offset != int64(strings.Index(ev(bad), `\`)) {
				t.Errorf("%s: %v, want a SyntaxError at the backslash", bad, err)
			}
		}
	}
	tr, err := Read(strings.NewReader(ev(`a\u00e9\n\"\\\/\t b`)), "ok", Options{})
	if err != nil || len(tr.GPU) != 1 || tr.GPU[0].Name != "aé\n\"\\/\t b" {
		t.Fatalf("valid escapes: %v", err)
	}
}

// TestInvalidEscapeInSkippedValue: the fast path skips what the model
// does not keep (an args key or value) without decoding it; an invalid
// escape there is still an error, at its byte, whichever way the events
// are read (the speculative split's fused walk accepted it: FuzzReadStream
// found a Kineto trace that read without a word split and failed serially).
func TestInvalidEscapeInSkippedValue(t *testing.T) {
	ev := func(i int, args string) string {
		return fmt.Sprintf(`{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":%d,"dur":1,"args":{%s}}`, i, i+1, args)
	}
	for _, bad := range []string{`"\ecord function id": 0`, `"External id": "a\qb"`, `"grid": [1, "\x"]`} {
		var events []string
		for i := range 200 {
			args := `"External id": 1`
			if i == 150 {
				args = bad
			}
			events = append(events, ev(i, args))
		}
		in := "[\n" + strings.Join(events, ",\n") + "\n]"
		want := int64(strings.Index(in, `\`))
		for _, o := range []Options{{}, {Workers: 1, serial: true}, {Workers: 3, chunk: 256}} {
			_, err := Read(strings.NewReader(in), "esc", o)
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "invalid escape") || se.Offset != want {
				t.Errorf("%s, %+v: %v, want a SyntaxError at byte %d", bad, o, err, want)
			}
		}
	}
}
