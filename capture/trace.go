package capture

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Arg is one key of a trace event's args, kept in order so traces are
// byte-for-byte reproducible. Val is an int, int64, uint64, float64, string,
// bool or []int.
type Arg struct {
	Key string
	Val any
}

// TraceEvent is one Chrome trace event. Times are integer nanoseconds and are
// written as microseconds with three decimals, so no float rounding enters.
type TraceEvent struct {
	Ph   string // "X", "s", "f", "M"
	Cat  string
	Name string
	Pid  int
	Tid  int
	// TsNs and DurNs are host-clock nanoseconds (DurNs for "X" only).
	TsNs  int64
	DurNs int64
	// ID is the flow id of "s"/"f" events.
	ID   int64
	Args []Arg
}

// Trace is a whole captured trace: device, metadata and events.
type Trace struct {
	Device DeviceInfo
	// Extra are additional top-level keys (capture settings, measured
	// overheads), written after the Kineto ones.
	Extra  []Arg
	Events []TraceEvent
}

// formatMicros writes integer nanoseconds as microseconds with exactly three
// decimals: 1234567 -> "1234.567", -5 -> "-0.005".
func formatMicros(ns int64) string {
	neg := ns < 0
	u := uint64(ns)
	if neg {
		u = uint64(-ns)
	}
	s := strconv.FormatUint(u/1000, 10) + "." + fmt.Sprintf("%03d", u%1000)
	if neg {
		return "-" + s
	}
	return s
}

func writeJSONString(w *bufio.Writer, s string) {
	b, _ := json.Marshal(s) // marshaling a string cannot fail
	w.Write(b)
}

func writeValue(w *bufio.Writer, v any) error {
	switch x := v.(type) {
	case int:
		w.WriteString(strconv.Itoa(x))
	case int64:
		w.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		w.WriteString(strconv.FormatUint(x, 10))
	case float64:
		w.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case string:
		writeJSONString(w, x)
	case bool:
		w.WriteString(strconv.FormatBool(x))
	case []int:
		w.WriteByte('[')
		for i, n := range x {
			if i > 0 {
				w.WriteString(", ")
			}
			w.WriteString(strconv.Itoa(n))
		}
		w.WriteByte(']')
	case []Arg:
		return writeArgs(w, x)
	default:
		return fmt.Errorf("trace arg of unsupported type %T", v)
	}
	return nil
}

func writeArgs(w *bufio.Writer, args []Arg) error {
	w.WriteByte('{')
	for i, a := range args {
		if i > 0 {
			w.WriteString(", ")
		}
		writeJSONString(w, a.Key)
		w.WriteString(": ")
		if err := writeValue(w, a.Val); err != nil {
			return fmt.Errorf("arg %q: %w", a.Key, err)
		}
	}
	w.WriteByte('}')
	return nil
}

func writeEvent(w *bufio.Writer, e *TraceEvent) error {
	w.WriteString(`{"ph": `)
	writeJSONString(w, e.Ph)
	if e.Cat != "" {
		w.WriteString(`, "cat": `)
		writeJSONString(w, e.Cat)
	}
	w.WriteString(`, "name": `)
	writeJSONString(w, e.Name)
	fmt.Fprintf(w, `, "pid": %d, "tid": %d, "ts": %s`, e.Pid, e.Tid, formatMicros(e.TsNs))
	if e.Ph == "X" {
		w.WriteString(`, "dur": ` + formatMicros(e.DurNs))
	}
	if e.Ph == "s" || e.Ph == "f" {
		fmt.Fprintf(w, `, "id": %d`, e.ID)
		if e.Ph == "f" {
			w.WriteString(`, "bp": "e"`)
		}
	}
	if e.Args != nil {
		w.WriteString(`, "args": `)
		if err := writeArgs(w, e.Args); err != nil {
			return fmt.Errorf("event %q: %w", e.Name, err)
		}
	}
	w.WriteByte('}')
	return nil
}

// WriteJSON writes the trace as Kineto-style Chrome trace JSON.
func (t *Trace) WriteJSON(out io.Writer) error {
	w := bufio.NewWriterSize(out, 1<<16)
	d := t.Device
	w.WriteString("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    ")
	props := []Arg{
		{"id", d.ID}, {"name", d.Name}, {"totalGlobalMem", d.TotalGlobalMem},
		{"computeMajor", d.ComputeMajor}, {"computeMinor", d.ComputeMinor},
		{"maxThreadsPerBlock", d.MaxThreadsPerBlock}, {"maxThreadsPerMultiprocessor", d.MaxThreadsPerMultiprocessor},
		{"regsPerBlock", d.RegsPerBlock}, {"warpSize", d.WarpSize},
		{"sharedMemPerBlock", d.SharedMemPerBlock}, {"numSms", d.NumSms},
		{"regsPerMultiprocessor", d.RegsPerMultiprocessor}, {"sharedMemPerBlockOptin", d.SharedMemPerBlockOptin},
		{"sharedMemPerMultiprocessor", d.SharedMemPerMultiprocessor},
	}
	if err := writeArgs(w, props); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n  ],\n  \"cuda_driver_version\": %d,\n", d.DriverVersion)
	for _, a := range t.Extra {
		w.WriteString("  ")
		writeJSONString(w, a.Key)
		w.WriteString(": ")
		if err := writeValue(w, a.Val); err != nil {
			return fmt.Errorf("top-level key %q: %w", a.Key, err)
		}
		w.WriteString(",\n")
	}
	w.WriteString("  \"displayTimeUnit\": \"ms\",\n  \"traceEvents\": [\n")
	for i := range t.Events {
		w.WriteString("  ")
		if err := writeEvent(w, &t.Events[i]); err != nil {
			return err
		}
		if i < len(t.Events)-1 {
			w.WriteByte(',')
		}
		w.WriteByte('\n')
	}
	w.WriteString("  ]\n}\n")
	return w.Flush()
}

// WriteFile writes the trace to path, gzip-compressed when the name ends in
// ".gz".
func (t *Trace) WriteFile(path string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create trace: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	if !strings.HasSuffix(path, ".gz") {
		if err := t.WriteJSON(f); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	zw := gzip.NewWriter(f)
	if err := t.WriteJSON(zw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compress %s: %w", path, err)
	}
	return nil
}
