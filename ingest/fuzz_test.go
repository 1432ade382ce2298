package ingest

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/trace"
)

// FuzzRead feeds arbitrary bytes to the reader. It must never panic, and
// whatever it accepts must be a consistent model: links in range, spans
// ordered, sorted slices sorted.
func FuzzRead(f *testing.F) {
	// Seeds are valid prefixes of every real fixture: whole fixtures are
	// too big for the fuzzer to mutate and minimise at a useful rate.
	for _, path := range fixturePaths(f) {
		f.Add(validPrefix(gunzip(f, path), 3000))
	}
	f.Add([]byte(`[` + goodEvent + `]`))
	f.Add([]byte(`{"traceEvents": [{"ph":"X","cat":"Operator","name":"aten::mm","pid":1,"tid":"1","ts":100,"dur":50},
		{"ph":"s","cat":"async","id":77,"pid":1,"tid":"1","ts":110},{"ph":"X","cat":"Kernel","name":"k","pid":0,"tid":"stream 7","ts":130,"dur":40},
		{"ph":"f","cat":"async","id":77,"pid":0,"tid":"stream 7","ts":130}], "deviceProperties": [{"id":0,"name":"GPU"}]}`))
	f.Add([]byte(`[{"ph":"M","pid":1,"name":"process_name","args":{"name":"/device:GPU:0"}},{"ph":"X","pid":1,"tid":2,"ts":1,"dur":1,"name":"f","args":{"correlation_id":"3"}}]`))
	f.Add(gz([]byte(`[` + goodEvent + `]`)))
	for _, s := range hugeNumberSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`[{"ph":"B","pid":2,"tid":3,"ts":10,"name":"a"},{"ph":"B","pid":2,"tid":3,"ts":11,"name":"cuLaunchKernel","args":{"correlation_id":"5"}},{"ph":"E","pid":2,"tid":3,"ts":13},{"ph":"E","pid":2,"tid":3,"ts":9}]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		tr, err := Read(bytes.NewReader(in), "fuzz", Options{Workers: 2, chunk: 512})
		if err != nil {
			return
		}
		checkModel(t, tr)
	})
}

func checkModel(t *testing.T, tr *trace.Trace) {
	inRange := func(what string, i trace.Index, n int) {
		if i != trace.None && (i < 0 || int(i) >= n) {
			t.Fatalf("%s index %d out of range [0,%d)", what, i, n)
		}
	}
	for i := range tr.GPU {
		g := &tr.GPU[i]
		if g.End < g.Start {
			t.Fatalf("GPU activity %d ends before it starts", i)
		}
		inRange("launch", g.Launch, len(tr.APICalls))
		if i > 0 && tr.GPU[i-1].Device == g.Device && tr.GPU[i-1].Stream == g.Stream && tr.GPU[i-1].Start > g.Start {
			t.Fatalf("GPU activity not sorted at %d", i)
		}
	}
	for i := range tr.APICalls {
		a := &tr.APICalls[i]
		inRange("api op", a.Op, len(tr.Ops))
		inRange("api frame", a.Frame, len(tr.Frames))
		inRange("api thread", a.Thread, len(tr.Threads))
		inRange("api first gpu", a.FirstGPU, len(tr.GPU))
	}
	for i := range tr.Ops {
		o := &tr.Ops[i]
		inRange("op parent", o.Parent, len(tr.Ops))
		inRange("op frame", o.Frame, len(tr.Frames))
		if o.Parent == trace.Index(i) {
			t.Fatalf("op %d is its own parent", i)
		}
		if o.Parent != trace.None && !tr.Ops[o.Parent].Contains(o.Span) {
			t.Fatalf("op %d not inside its parent", i)
		}
	}
	for i := range tr.Frames {
		inRange("frame parent", tr.Frames[i].Parent, len(tr.Frames))
		tr.FrameStack(trace.Index(i)) // must terminate even on cyclic ids
	}
	for i := 1; i < len(tr.Steps); i++ {
		if tr.Steps[i-1].Start > tr.Steps[i].Start {
			t.Fatalf("steps not sorted")
		}
	}
}

// validPrefix cuts a trace after the last whole event within n bytes and
// closes the array and object, so the seed is a small valid trace.
func validPrefix(raw []byte, n int) []byte {
	if len(raw) <= n {
		return raw
	}
	cut := bytes.LastIndex(raw[:n], []byte("},"))
	if cut < 0 {
		return raw[:n]
	}
	out := append([]byte(nil), raw[:cut+1]...)
	return append(out, "]}"...)
}

// hugeNumberSeeds are events whose numbers do not fit the model's types:
// times past int64 nanoseconds, ids past int64, dimensions past int32.
var hugeNumberSeeds = []string{
	`[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1e300,"dur":1}]`,
	`[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":9223372036854775807,"dur":9223372036854775807}]`,
	`[{"ph":"X","cat":"kernel","name":"k","pid":-9223372036854775808,"tid":1e300,"ts":-4611686018427387.904,"dur":4611686018427387.904,
		"args":{"correlation":99999999999999999999,"grid":[1e300,-1e300,2147483648],"block":[4294967296],"shared memory":1e19,"bytes":-1e300,"est. achieved occupancy %":1e309}}]`,
	`[{"ph":"X","cat":"python_function","name":"f","pid":1,"tid":1,"ts":1,"dur":2,"args":{"Python id":1e20,"Python parent id":-9223372036854775808}},
	  {"ph":"X","cat":"python_function","name":"g","pid":1,"tid":1,"ts":1,"dur":1,"args":{"Python id":9223372036854775807,"Python parent id":1e20}}]`,
	`[{"ph":"i","name":"[memory]","pid":1,"tid":1,"ts":1e-300,"args":{"Device Id":1e300,"Device Type":1,"Bytes":1e300,"Total Allocated":-1e300}},
	  {"ph":"s","cat":"ac2g","id":1e300,"pid":1,"tid":1,"ts":1},{"ph":"B","pid":1,"tid":1,"ts":4e15},{"ph":"E","pid":1,"tid":1,"ts":-4e15}]`,
}

// FuzzReadStream reads the same bytes serially with gjson alone, with the
// speculative split and the fast path, and as a pipe or decompressor
// delivers them (short reads of any size, gzip, small batches, several
// workers): the model must be the same, or every read must fail.
func FuzzReadStream(f *testing.F) {
	for _, path := range fixturePaths(f)[:4] {
		f.Add(validPrefix(gunzip(f, path), 2000), uint16(7), true)
	}
	for i, s := range hugeNumberSeeds {
		f.Add([]byte(s), uint16(i*13+1), i%2 == 0)
	}
	// layouts whose separator the scanner learns (see learnSeparator)
	for _, layout := range []string{"kineto-old", "one per line", "indented"} {
		f.Add(validPrefix(relayout(f, gunzip(f, fixturePaths(f)[0]), layout), 3000), uint16(11), false)
	}
	f.Add([]byte(`[`+goodEvent+`,`+goodEvent), uint16(3), true)
	f.Add([]byte(`{"traceName":"`+strings.Repeat("x", 5000)+`","traceEvents":[`+goodEvent+`]}`), uint16(1), false)
	f.Fuzz(func(t *testing.T, in []byte, readSize uint16, zip bool) {
		// The reference is a whole in-memory read with gjson alone, so the
		// fuzzer also holds the fast path to gjson's model.
		want, wantErr := Read(bytes.NewReader(in), "fuzz", Options{Workers: 1, slow: true, serial: true})
		// An in-memory reader can be read again: the speculative split.
		spec, err := Read(bytes.NewReader(in), "fuzz", Options{Workers: 3, chunk: 256})
		if (err == nil) != (wantErr == nil) || err == nil && !reflect.DeepEqual(spec, want) {
			t.Fatalf("speculative split: %v; serial: %v (models equal: %v)", err, wantErr, reflect.DeepEqual(spec, want))
		}
		src := in
		if zip {
			src = gz(in)
		}
		r := &chunkedReader{bytes.NewReader(src), int(readSize%4096) + 1}
		got, err := Read(r, "fuzz", Options{Workers: 3, chunk: 256})
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("streamed: %v; whole: %v", err, wantErr)
		}
		if err != nil {
			return
		}
		checkModel(t, got)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("streaming gave a different model")
		}
	})
}
