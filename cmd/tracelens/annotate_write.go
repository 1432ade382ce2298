package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/trace"
)

// findingsTrack names the process annotate adds: one thread per finding.
const findingsTrack = "tracelens findings"

// flowIDBase keeps annotate's flow ids clear of the profiler's own (Kineto
// numbers its launch arrows by correlation id).
const flowIDBase = 1 << 40

// endpoint is where a kernel's event is in the input: its pid, tid and ts
// exactly as written there.
type endpoint struct {
	pid, tid, ts json.RawMessage
}

// annotator copies a trace's events and collects what the findings'
// events need: the kernels' endpoints and a pid no event uses.
type annotator struct {
	marks  []mark
	wanted map[kernelRef]bool
	names  map[string]bool
	found  map[kernelRef]endpoint
	maxPid int64
	events int
	// arrows counts the flows written (added).
	arrows int
}

func newAnnotator(marks []mark) *annotator {
	a := &annotator{marks: marks, wanted: map[kernelRef]bool{}, names: map[string]bool{}, found: map[kernelRef]endpoint{}}
	for _, m := range marks {
		for _, k := range m.kernels {
			a.wanted[k], a.names[k.name] = true, true
		}
	}
	return a
}

// see notes what the findings' events need of one original event.
func (a *annotator) see(raw []byte) {
	a.events++
	res := gjson.GetManyBytes(raw, "pid", "name", "ph", "ts", "tid")
	if p := res[0]; p.Type == gjson.Number {
		a.maxPid = max(a.maxPid, p.Int())
	}
	if !a.names[res[1].String()] || res[2].String() != "X" || res[3].Type != gjson.Number {
		return
	}
	ns, err := microsToNanos(res[3].Raw)
	if err != nil {
		return
	}
	k := kernelRef{name: res[1].String(), start: trace.Time(ns)}
	if _, seen := a.found[k]; a.wanted[k] && !seen {
		a.found[k] = endpoint{pid: json.RawMessage(res[0].Raw), tid: json.RawMessage(res[4].Raw), ts: json.RawMessage(res[3].Raw)}
	}
}

// added returns the events annotate adds, in order: the track's names,
// then per mark its span and its arrows (counted in a.arrows).
func (a *annotator) added() []json.RawMessage {
	pid := a.maxPid + 1
	var out []json.RawMessage
	add := func(v map[string]any) {
		b, err := marshalNoEscape(v)
		if err == nil {
			out = append(out, b)
		}
	}
	add(map[string]any{"ph": "M", "name": "process_name", "pid": pid, "args": map[string]any{"name": findingsTrack}})
	add(map[string]any{"ph": "M", "name": "process_sort_index", "pid": pid, "args": map[string]any{"sort_index": -1}})
	named := map[int]bool{}
	for _, m := range a.marks {
		if !named[m.number] {
			named[m.number] = true
			add(map[string]any{"ph": "M", "name": "thread_name", "pid": pid, "tid": m.number, "args": map[string]any{"name": fmt.Sprintf("%d. %s", m.number, m.f.ID)}})
		}
		ts := json.RawMessage(micros(m.span.Start))
		add(map[string]any{"ph": "X", "cat": "tracelens", "name": m.f.Title, "pid": pid, "tid": m.number, "ts": ts,
			"dur": json.RawMessage(micros(trace.Time(m.span.Dur()))), "args": markArgs(m)})
		for _, k := range m.kernels {
			ep, ok := a.found[k]
			if !ok {
				continue
			}
			a.arrows++
			id := flowIDBase + a.arrows
			add(map[string]any{"ph": "s", "cat": "tracelens", "name": "finding", "id": id, "pid": pid, "tid": m.number, "ts": ts, "bp": "e"})
			add(map[string]any{"ph": "f", "cat": "tracelens", "name": "finding", "id": id, "pid": ep.pid, "tid": ep.tid, "ts": ep.ts, "bp": "e"})
		}
	}
	return out
}

// markArgs are a finding event's args: what a user reads on clicking it.
func markArgs(m mark) map[string]any {
	f := m.f
	saving := fmt.Sprintf("~%s per step (%s of the step)", analyze.FormatUs(f.SavingUs), analyze.FormatShare(f.Share))
	switch {
	case f.NoTimeCost():
		saving = "no time: the cost is device memory"
	case f.SavingFrom == analyze.FromOneOff:
		saving = fmt.Sprintf("one-time cost ~%s", analyze.FormatUs(f.OneOffUs))
	}
	args := map[string]any{"id": f.ID, "number": m.number, "severity": f.Severity, "confidence": f.Confidence,
		"saving": saving, "saving_us": f.SavingUs, "fix": f.Fix, "where": m.where}
	if m.inSpan > 0 {
		args["kernel_launches_here"] = m.inSpan
		args["arrows"] = fmt.Sprintf("to the first %d of them", len(m.kernels))
	}
	return args
}

// micros writes t nanoseconds as the trace's decimal microseconds.
func micros(t trace.Time) string {
	sign := ""
	if t < 0 {
		sign, t = "-", -t
	}
	return fmt.Sprintf("%s%d.%03d", sign, t/1000, t%1000)
}

// microsToNanos reads a JSON number of microseconds as integer
// nanoseconds, exactly for decimals (digits past nanoseconds rounded half
// away from zero), as the reader does; exponent forms through float64.
func microsToNanos(s string) (int64, error) {
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		return int64(f*1e3 + 0.5), err
	}
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, err
	}
	frac += "000"
	f, err := strconv.ParseInt(frac[:3], 10, 64)
	if err != nil {
		return 0, err
	}
	n := w*1000 + f
	if len(frac) > 3 && frac[3] >= '5' {
		n++
	}
	if neg {
		n = -n
	}
	return n, nil
}

// marshalNoEscape is json.Marshal that keeps < > & as they are (kernel
// names are full of them).
func marshalNoEscape(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// writeAnnotated copies the Chrome trace JSON at in (gzip or not) to out
// (gzip when it ends in .gz) with the marks' events appended to its
// event array, every original event byte for byte. It writes next to out
// and renames into place, so a failure leaves no half file. It returns
// the number of arrows written.
func writeAnnotated(in, out string, marks []mark) (int, error) {
	src, err := os.Open(in)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	br := bufio.NewReaderSize(src, 1<<20)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", in, err)
		}
		defer zr.Close()
		r = zr
	}
	tmp, err := createOutput(out)
	if err != nil {
		return 0, fmt.Errorf("writing %s: %w", out, err)
	}
	bw := bufio.NewWriterSize(tmp, 1<<20)
	var w io.Writer = bw
	var zw *gzip.Writer
	if strings.HasSuffix(out, ".gz") {
		zw = gzip.NewWriter(bw)
		w = zw
	}
	a := newAnnotator(marks)
	if err := copyTrace(json.NewDecoder(r), w, a); err != nil {
		tmp.commit(err) // removes the temporary file
		return 0, fmt.Errorf("%s: %w", in, err)
	}
	if zw != nil {
		err = zw.Close()
	}
	if err = tmp.commit(errors.Join(err, bw.Flush())); err != nil {
		return 0, fmt.Errorf("writing %s: %w", out, err)
	}
	return a.arrows, nil
}

// copyTrace copies the trace JSON dec reads to w, the top-level object's
// members (or a bare event array) as written, appending a's events to the
// event array.
func copyTrace(dec *json.Decoder, w io.Writer, a *annotator) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if tok == json.Delim('[') {
		io.WriteString(w, "[")
		if err := copyEvents(dec, w, a); err != nil {
			return err
		}
		_, err = io.WriteString(w, "]")
		return err
	}
	if tok != json.Delim('{') {
		return errors.New("not a Chrome trace: want a JSON object or an event array")
	}
	io.WriteString(w, "{")
	found := false
	for i := 0; dec.More(); i++ {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := key.(string)
		k, _ := marshalNoEscape(name)
		if i > 0 {
			io.WriteString(w, ",")
		}
		w.Write(k)
		io.WriteString(w, ":")
		if name == "traceEvents" && !found {
			found = true
			if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
				return errors.New("traceEvents is not an array")
			}
			io.WriteString(w, "[")
			if err := copyEvents(dec, w, a); err != nil {
				return err
			}
			io.WriteString(w, "]")
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("reading %q: %w", name, err)
		}
		w.Write(raw)
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	if !found {
		return errors.New("no traceEvents array: not a Chrome trace")
	}
	_, err = io.WriteString(w, "}\n")
	return err
}

// copyEvents copies the events of an array whose '[' dec has read, then
// appends a's events; it reads the closing ']' and leaves writing it to
// the caller.
func copyEvents(dec *json.Decoder, w io.Writer, a *annotator) error {
	n := 0
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("event %d: %w", n, err)
		}
		if n > 0 {
			io.WriteString(w, ",\n")
		}
		if _, err := w.Write(raw); err != nil {
			return err
		}
		a.see(raw)
		n++
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("after event %d: %w", n, err)
	}
	for _, ev := range a.added() {
		if n > 0 {
			io.WriteString(w, ",\n")
		}
		if _, err := w.Write(ev); err != nil {
			return err
		}
		n++
	}
	return nil
}
