package ingest

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tracelens/tracelens/trace"
)

// fields of one event, viewed in the batch buffer.
type fields struct {
	ph, cat, name string
	pid, tid      string
	ts, dur       string
	id            string
	args          string
	// argsWalked says that argv[:argc] are the members of args, walked
	// by objectFields; otherwise forArgs walks args itself.
	argsWalked    bool
	argc          int
	argv          [maxArgMembers]argMember
	nameNotString bool
	hasTs, hasDur bool
	durNotNumber  bool
	tsNotNumber   bool
}

func scalarText(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	return v.Raw
}

func (w *worker) event(r *chunkResult, s string, off int64) {
	if len(s) == 0 || s[0] != '{' {
		w.skip(r, "event is not a JSON object", off)
		return
	}
	if badEscapeIn(r, s, off) {
		return
	}
	var f fields
	if w.slow || !fastFields(s, &f) {
		if at, want := misshapenMember(s); at >= 0 {
			if r.err == nil {
				found := "the event's end"
				if at < len(s) {
					found = fmt.Sprintf("%q", s[at])
				}
				r.err = &SyntaxError{Offset: off + int64(at), Msg: fmt.Sprintf("expected %s in an event, found %s", want, found)}
			}
			return
		}
		f = fields{}
		slowFields(s, &f)
	}
	w.dispatch(r, &f, off)
}

// badEscapeIn reports whether the event text s (at byte off of the
// input) holds an invalid escape, recording the first as r's error: gjson
// decoded "\q" by cutting the string short there, and a kernel name
// silently lost its tail. A bytewise search finds most events free of
// backslashes at once.
func badEscapeIn(r *chunkResult, s string, off int64) bool {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return false
	}
	at := badEscape(s, i)
	if at < 0 {
		return false
	}
	if r.err == nil {
		r.err = &SyntaxError{Offset: off + int64(at), Msg: fmt.Sprintf("invalid escape %s in a string (JSON allows \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)", s[at:min(at+2, len(s))])}
	}
	return true
}

// slowFields is the gjson reading of an event's fields: the reference the
// fast path must match, and what reads events the fast path declines.
func slowFields(s string, f *fields) {
	gjson.Parse(s).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "ph":
			f.ph = v.Str
		case "cat":
			f.cat = v.Str
		case "name":
			if v.Type == gjson.String {
				f.name = v.Str
			} else {
				f.nameNotString = true
			}
		case "pid":
			f.pid = scalarText(v)
		case "tid":
			f.tid = scalarText(v)
		case "ts":
			f.hasTs = true
			if v.Type == gjson.Number {
				f.ts = v.Raw
			} else {
				f.tsNotNumber = true
			}
		case "dur":
			f.hasDur = true
			if v.Type == gjson.Number {
				f.dur = v.Raw
			} else {
				f.durNotNumber = true
			}
		case "id":
			f.id = scalarText(v)
		case "args":
			if v.Type == gjson.JSON {
				f.args = v.Raw
			}
		}
		return true
	})
}

// dispatch models the event by its phase.
func (w *worker) dispatch(r *chunkResult, f *fields, off int64) {
	switch f.ph {
	case "X":
		w.complete(r, f, off)
	case "M":
		w.metadata(r, f)
	case "s", "f", "t":
		if f.cat == "ac2g" || f.cat == "async_cpu_to_gpu" || f.cat == "async" {
			w.flow(r, f, off)
		} else {
			w.countCat(r, "flow:"+f.cat)
			w.skip(r, "flow events other than ac2g", off)
		}
	case "i", "I":
		w.instant(r, f, off)
	case "B", "E":
		w.beginEnd(r, f, off)
	case "":
		w.skip(r, "event without ph", off)
	default:
		w.skip(r, "phase "+f.ph+" not modelled", off)
	}
}

// complete models an "X" (complete) event by its category once its
// times are checked; each modelled category has a method of its own.
func (w *worker) complete(r *chunkResult, f *fields, off int64) {
	cat := f.cat
	if cat == "" {
		w.countCat(r, "(none)")
	} else {
		w.countCat(r, cat)
	}
	span, reason := completeSpan(f)
	if reason != "" {
		w.skip(r, reason, off)
		return
	}
	switch cat {
	case "kernel", "Kernel":
		w.gpu(r, f, span, trace.Kernel)
	case "gpu_memcpy", "Memcpy":
		w.gpu(r, f, span, trace.Memcpy)
	case "gpu_memset", "Memset":
		w.gpu(r, f, span, trace.Memset)
	case "cuda_runtime", "Runtime", "cuda_driver", "Driver":
		w.apiCall(r, f, span, cat == "cuda_driver" || cat == "Driver")
	case "cpu_op", "Operator", "operator":
		w.op(r, f, span)
	case "python_function":
		w.pyFrame(r, f, span)
	case "user_annotation", "python_annotation":
		a := trace.Annotation{Span: span}
		a.Name = w.intern(f.name)
		a.Thread = w.thread(f.pid, f.tid)
		r.annots = append(r.annots, a)
	case "gpu_user_annotation":
		w.gpuAnnotation(r, f, span)
	case "":
		w.loose(r, f, span)
	default:
		w.skip(r, "category "+cat+" not modelled", off)
	}
}

// completeSpan is a complete event's span (its name is left to the
// caller), or why the event is skipped: a name that is not a string, or a
// ts or dur that is missing, not a number, negative or out of range.
func completeSpan(f *fields) (trace.Span, string) {
	switch {
	case f.nameNotString:
		return trace.Span{}, "name is not a string"
	case !f.hasTs || f.tsNotNumber:
		return trace.Span{}, "ts missing or not a number"
	case f.durNotNumber:
		return trace.Span{}, "dur not a number"
	}
	ts, err := parseMicrosToNanos(f.ts)
	if err != nil {
		return trace.Span{}, "ts out of range"
	}
	var dur int64
	if f.hasDur {
		if dur, err = parseMicrosToNanos(f.dur); err != nil {
			return trace.Span{}, "dur out of range"
		}
	}
	if dur < 0 {
		return trace.Span{}, "negative dur"
	}
	if ts > 0 && dur > maxTime-ts {
		// Both are within ±maxTime and ts > 0, so maxTime-ts cannot wrap (ts+dur
		// can: 2^62 + 2^62); an end past maxTime would let later
		// differences wrap.
		return trace.Span{}, "ts+dur out of range"
	}
	return trace.Span{Start: trace.Time(ts), End: trace.Time(ts + dur)}, ""
}
