package distributed

import (
	"bytes"
	"io"
	"strconv"
	"strings"

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
	bs       int // backslashes just before the current position in a string
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

	hits      []int
	names     interner
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
	return &commScanner{first: true, byCorr: map[int64]commArgs{}, byExtID: map[int64]commArgs{}, names: interner{}}
}

// structural marks the bytes the scanner must look at outside strings.
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// Write consumes the next piece of JSON text.
func (s *commScanner) Write(p []byte) (int, error) {
	start := 0 // where the captured object's bytes in p begin
	if s.capture == 0 {
		start = -1
	}
	i := 0
	if s.first {
		i = s.detectForm(p)
	}
	// Where the needle occurs in p (one SIMD search): only events holding
	// one are parsed.
	s.hits = s.hits[:0]
	for off := 0; ; {
		j := bytes.Index(p[off:], needle)
		if j < 0 {
			break
		}
		s.hits = append(s.hits, off+j)
		off += j + len(needle)
	}
	hit := 0
	for i < len(p) {
		if s.inString {
			i = s.skipString(p, i)
			continue
		}
		// Outside strings only quotes and brackets matter.
		for i < len(p) && !structural[p[i]] {
			i++
		}
		if i == len(p) {
			break
		}
		switch c := p[i]; c {
		case '"':
			s.inString = true
			s.bs = 0
			if s.depth == 1 && !s.topArray {
				s.inKey1 = true
				s.key1 = s.key1[:0]
			}
		case '{', '[':
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
				for hit < len(s.hits) && s.hits[hit] < start {
					hit++
				}
				inside := hit < len(s.hits) && s.hits[hit] < i
				switch {
				case len(s.buf) > 0 || s.overflow: // began in an earlier piece
					s.keep(p[start : i+1])
					s.finish(s.buf, s.captureD || bytes.Contains(s.buf, needle))
				default:
					s.finish(p[start:i+1], s.captureD || inside)
				}
				s.capture, start = 0, -1
			}
			s.depth--
		}
		i++
	}
	if s.capture != 0 && start >= 0 {
		s.keep(p[start:])
	}
	return len(p), nil
}

// detectForm notes whether the document is an object or the Chrome array
// form, from its first non-space byte.
func (s *commScanner) detectForm(p []byte) int {
	for i, c := range p {
		if c > ' ' {
			s.first = false
			s.topArray = c == '['
			return i
		}
	}
	return len(p)
}

// skipString moves past string text from i: to just after the closing
// quote (leaving the string), or to the end of p. A quote is escaped when
// an odd number of backslashes precedes it; s.bs carries a run of
// backslashes across pieces.
func (s *commScanner) skipString(p []byte, i int) int {
	for {
		j := bytes.IndexByte(p[i:], '"')
		if j < 0 {
			if s.inKey1 {
				s.key1 = append(s.key1, p[i:]...)
			}
			s.bs = trailing(p[i:], s.bs)
			return len(p)
		}
		if s.inKey1 {
			s.key1 = append(s.key1, p[i:i+j]...)
		}
		n := trailing(p[i:i+j], s.bs)
		s.bs = 0
		if n%2 == 1 { // escaped quote: part of the string
			if s.inKey1 {
				s.key1 = append(s.key1, '"')
			}
			i += j + 1
			continue
		}
		s.inString, s.inKey1 = false, false
		return i + j + 1
	}
}

// trailing counts the backslashes at the end of b, adding carry when b is
// all backslashes (the run started in an earlier piece).
func trailing(b []byte, carry int) int {
	n := 0
	for n < len(b) && b[len(b)-1-n] == '\\' {
		n++
	}
	if n == len(b) {
		n += carry
	}
	return n
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

// finish handles one complete captured object; want says whether it
// holds the needle (or is distributedInfo).
func (s *commScanner) finish(ev []byte, want bool) {
	defer func() { s.buf, s.overflow = s.buf[:0], false }()
	if !want || s.overflow {
		return
	}
	if s.captureD {
		s.dist = bytes.Clone(ev)
		return
	}
	e := gjson.ParseBytes(ev)
	args := e.Get("args")
	a := parseCommArgs(args, s.names)
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
	// Peer is the global rank a send goes to or a recv comes from; -1
	// for collectives and when the trace does not say.
	Peer int
}

// parseCommArgs reads the arguments; strings are interned through in so
// that they hold neither the event's text nor the trace's memory.
func parseCommArgs(args gjson.Result, in interner) commArgs {
	a := commArgs{
		Collective: in.of(args.Get("Collective name").Str),
		InNelems:   args.Get("In msg nelems").Int(),
		OutNelems:  args.Get("Out msg nelems").Int(),
		GroupSize:  int(args.Get("Group size").Int()),
		DType:      in.of(args.Get("dtype").Str),
		GroupName:  in.of(scalar(args.Get("Process Group Name"))),
		GroupDesc:  in.of(args.Get("Process Group Description").Str),
		GroupRanks: in.of(scalar(args.Get("Process Group Ranks"))),
		Seq:        -1,
		Peer:       -1,
	}
	a.Peer = peerOf(args, a.GroupRanks)
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

// peerOf reads a send's "Dst Rank" or a recv's "Src Rank", a rank of the
// op's process group, as a global rank: through the group's ranks when
// the op lists them, else the group's "Global rank start" and "Global
// rank stride". -1 when absent or out of range.
func peerOf(args gjson.Result, groupRanks string) int {
	v := args.Get("Dst Rank")
	if !v.Exists() {
		v = args.Get("Src Rank")
	}
	if !v.Exists() || v.Type != gjson.Number {
		return -1
	}
	local := v.Int()
	if local < 0 || local > 1<<24 {
		return -1
	}
	if ranks := gjson.Parse(groupRanks); ranks.IsArray() {
		if r := ranks.Array(); local < int64(len(r)) && r[local].Type == gjson.Number {
			return int(r[local].Int())
		}
		return -1
	}
	start, stride := args.Get("Global rank start").Int(), args.Get("Global rank stride").Int()
	if stride == 0 {
		stride = 1
	}
	g := start + stride*local
	if g < 0 || g > 1<<24 {
		return -1
	}
	return int(g)
}

// interner keeps one private copy of each distinct string. A rank's
// summary outlives its trace: a string that shares memory with the trace
// or with a parsed event would keep that memory alive for the whole run.
type interner map[string]string

func (in interner) of(s string) string {
	if c, ok := in[s]; ok {
		return c
	}
	c := strings.Clone(s)
	in[c] = c
	return c
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
