package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/diff"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/report"
)

// pipelineSeeds are traces whose numbers are at the edge of what the
// model holds, with steps, launches and a GEMM op, so every analyzer and
// writer meets them: times and durations near int64 nanoseconds, FLOPs
// and bytes past float64's comfortable range, shapes past int32.
var pipelineSeeds = []string{
	`{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","computeMajor":9}],"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":9e15},
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":9e15,"dur":9e15},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":8e15,"args":{"Input Dims":[[2147483648,4294967296],[4294967296,9007199254740993]],"Input type":["c10::BFloat16","c10::BFloat16"],"External id":1,"flops":1e300}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2,"dur":1e15,"args":{"correlation":5,"External id":1}},
{"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_bf16bf16_bf16f32","pid":0,"tid":7,"ts":3,"dur":1e-3,"args":{"correlation":5,"device":0,"stream":7,"grid":[1e300,1,1],"block":[2147483648,1,1],"shared memory":0}},
{"ph":"X","cat":"kernel","name":"elementwise_kernel<double>","pid":0,"tid":7,"ts":9.1e15,"dur":8e15,"args":{"device":0,"stream":7}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":9.2e15,"dur":1,"args":{"device":0,"stream":7,"bytes":1e300}}]}`,
	`[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":9223372036854775,"dur":9223372036854775},
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":-9223372036854775,"dur":1}]`,
	`[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#0","pid":1,"tid":1,"ts":0,"dur":0},
{"ph":"X","cat":"kernel","name":"gemm_naive","pid":0,"tid":7,"ts":0,"dur":0},
{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":0,"dur":1e300}]`,
}

// corpusSeeds reads the []byte inputs of ingest's fuzz corpus (read-only):
// inputs that once broke the reader, now for the whole pipeline.
func corpusSeeds(f *testing.F) [][]byte {
	var out [][]byte
	for _, dir := range []string{"FuzzRead", "FuzzReadStream"} {
		paths, _ := filepath.Glob(filepath.Join("..", "..", "ingest", "testdata", "fuzz", dir, "*"))
		for _, p := range paths {
			file, err := os.Open(p)
			if err != nil {
				f.Fatal(err)
			}
			sc := bufio.NewScanner(file)
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				line := sc.Text()
				if q, ok := strings.CutPrefix(line, "[]byte("); ok {
					if s, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
						out = append(out, []byte(s))
					}
				}
			}
			file.Close()
		}
	}
	return out
}

// FuzzPipeline runs the whole pipeline on any input: ingest, analyze,
// and every writer (findings text and JSON, report Markdown, HTML and
// JSON, diff text, Markdown and JSON, the TUI's screens). Whatever ingest
// accepts must analyze without error, hold every invariant (analyze.Check;
// Run may only have withheld a roofline row above the peak), and render in
// every face without a panic or a hang.
func FuzzPipeline(f *testing.F) {
	for _, s := range pipelineSeeds {
		f.Add([]byte(s))
	}
	for _, s := range corpusSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// The ~140 seeds run side by side (fuzzing itself ignores this):
		// each is a whole pipeline, and together they were the package's
		// second-longest test.
		t.Parallel()
		tr, err := ingest.Read(bytes.NewReader(in), "fuzz.json", ingest.Options{})
		if err != nil {
			return
		}
		r, err := analyze.Run(tr, analyze.Config{})
		if err != nil {
			t.Fatalf("analyze: %v", err)
		}
		if err := analyze.Check(r); err != nil {
			t.Fatalf("invariants: %v", err)
		}
		for _, c := range r.Corrections {
			if !strings.HasPrefix(c, "roofline row ") {
				t.Errorf("correction: %s", c)
			}
		}
		writeFindings(io.Discard, r, evidenceCellWidth)
		if err := json.NewEncoder(io.Discard).Encode(r); err != nil {
			t.Fatalf("JSON: %v", err)
		}
		in1 := []report.Input{{Trace: tr, Result: r}}
		for name, write := range map[string]func(io.Writer, []report.Input, report.Options) error{"md": report.Markdown, "html": report.HTML} {
			if err := write(io.Discard, in1, report.Options{}); err != nil {
				t.Fatalf("report %s: %v", name, err)
			}
		}
		if err := report.JSON(io.Discard, in1); err != nil {
			t.Fatalf("report json: %v", err)
		}
		d, err := diff.Compare(r, r, diff.Options{})
		if err != nil {
			t.Fatalf("diff: %v", err)
		}
		for _, write := range []func(io.Writer, *diff.Result) error{diff.WriteText, diff.WriteMarkdown, diff.WriteJSON} {
			if err := write(io.Discard, d); err != nil {
				t.Fatalf("diff writer: %v", err)
			}
		}
		for _, keys := range [][]string{nil, {"2"}, {"3"}, {"4"}, {"5"}} {
			tuiScreen(t, tr, "fuzz.json", keys...)
		}
	})
}
