package distributed

import (
	"bytes"
	"io"
	"strconv"

	"github.com/tidwall/gjson"
)

// commScanner watches the JSON text on its way into ingest and keeps the
// two things the trace model has no field for: the top-level
// distributedInfo object and the communication arguments ("Collective
// name", "In msg nelems", "Process Group Name", "Seq", ...) that Kineto
// writes on NCCL kernels and on record_param_comms ops. It tracks only
// the nesting depth and string state, byte by byte, so it costs a fraction
// of a parse and never holds more than one event.
type commScanner struct {
	depth    int
	inString bool
	escape   bool
	// topArray is true when the document is the Chrome array form
	// (events at depth 1).
	topArray bool
	first    bool // no byte seen yet
	// key1 is the last string seen directly inside the top-level object:
	// when a container opens there, it is that container's key.
	key1     []byte
	inKey1   bool
	capture  int  // depth at which the captured object opened, 0 = none
	captureD bool // the captured object is distributedInfo
	buf      []byte
	overflow bool

	dist      []byte
	byCorr    map[int64]commArgs
	byExtID   map[int64]commArgs
	oversized int
}

// maxEvent bounds the bytes kept for one event: longer ones (huge Python
// stacks in args) cannot be communication records and are skipped.
const maxEvent = 1 << 20

var needle = []byte(`"Collective name"`)

func newCommScanner() *commScanner {
	return &commScanner{first: true, byCorr: map[int64]commArgs{}, byExtID: map[int64]commArgs{}}
}

// Write consumes the next piece of JSON text.
func (s *commScanner) Write(p []byte) (int, error) {
	start := 0 // where the captured object's bytes in p begin
	if s.capture == 0 {
		start = -1
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if s.inString {
			if s.escape {
				s.escape = false
				continue
			}
			// Jump to the next quote or backslash: strings are most of a
			// trace's text.
			j := bytes.IndexAny(p[i:], "\"\\")
			if j < 0 {
				if s.inKey1 {
					s.key1 = append(s.key1, p[i:]...)
				}
				break // the string continues in the next piece
			}
			if s.inKey1 {
				s.key1 = append(s.key1, p[i:i+j]...)
			}
			i += j
			if p[i] == '\\' {
				s.escape = true
				continue
			}
			s.inString = false
			s.inKey1 = false
			continue
		}
		switch c {
		case '"':
			s.inString = true
			if s.depth == 1 && !s.topArray {
				s.inKey1 = true
				s.key1 = s.key1[:0]
			}
		case '{', '[':
			if s.first {
				s.topArray = c == '['
			}
			s.first = false
			if s.capture == 0 && c == '{' {
				switch {
				case s.topArray && s.depth == 1, !s.topArray && s.depth == 2:
					s.capture, start, s.captureD = s.depth+1, i, false
				case !s.topArray && s.depth == 1 && string(s.key1) == "distributedInfo":
					s.capture, start, s.captureD = s.depth+1, i, true
				}
			}
			s.depth++
		case '}', ']':
			if s.capture != 0 && s.depth == s.capture {
				s.keep(p[start : i+1])
				s.finish()
				s.capture, start = 0, -1
			}
			s.depth--
		default:
			if s.first && c > ' ' {
				s.first = false
			}
		}
	}
	if s.capture != 0 && start >= 0 {
		s.keep(p[start:])
	}
	return len(p), nil
}

func (s *commScanner) keep(b []byte) {
	if s.overflow {
		return
	}
	if len(s.buf)+len(b) > maxEvent {
		s.overflow = true
		s.oversized++
		return
	}
	s.buf = append(s.buf, b...)
}

// finish handles one complete captured object.
func (s *commScanner) finish() {
	ev := s.buf
	s.buf, s.overflow = s.buf[:0], false
	if s.captureD {
		s.dist = bytes.Clone(ev)
		return
	}
	if len(ev) == 0 || !bytes.Contains(ev, needle) {
		return
	}
	e := gjson.ParseBytes(ev)
	args := e.Get("args")
	a := parseCommArgs(args)
	cat := e.Get("cat").Str
	switch {
	case cat == "kernel" || cat == "Kernel":
		if c := args.Get("correlation"); c.Exists() {
			s.byCorr[c.Int()] = a
		}
	default:
		if x := args.Get("External id"); x.Exists() {
			s.byExtID[x.Int()] = a
		}
	}
}

// commArgs are the communication arguments of one collective call.
type commArgs struct {
	Collective string
	InNelems   int64
	OutNelems  int64
	GroupSize  int
	DType      string
	GroupName  string
	GroupDesc  string
	GroupRanks string
	Seq        int64 // -1 when the trace does not say
}

func parseCommArgs(args gjson.Result) commArgs {
	a := commArgs{
		Collective: args.Get("Collective name").Str,
		InNelems:   args.Get("In msg nelems").Int(),
		OutNelems:  args.Get("Out msg nelems").Int(),
		GroupSize:  int(args.Get("Group size").Int()),
		DType:      args.Get("dtype").Str,
		GroupName:  scalar(args.Get("Process Group Name")),
		GroupDesc:  args.Get("Process Group Description").Str,
		GroupRanks: scalar(args.Get("Process Group Ranks")),
		Seq:        -1,
	}
	for _, k := range []string{"Seq", "seq", "Sequence number"} {
		if v := args.Get(k); v.Exists() {
			if n, err := strconv.ParseInt(scalar(v), 10, 64); err == nil {
				a.Seq = n
				break
			}
		}
	}
	return a
}

// scalar returns a JSON value as text: strings unquoted, others verbatim.
func scalar(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	return v.Raw
}

// teeReader passes r's bytes to the scanner as they are read. Len reports
// the expected JSON size so that ingest sizes its model once (ingest reads
// it from in-memory inputs for the same reason).
type teeReader struct {
	r    io.Reader
	s    *commScanner
	size int64
}

func (t *teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.s.Write(p[:n])
	}
	return n, err
}

// Len is the expected size of the JSON text (a hint; 0 when unknown).
func (t *teeReader) Len() int { return int(t.size) }
