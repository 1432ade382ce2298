package capture

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// expectedRecord is one record as testdata/cupti/expect.py decoded it.
type expectedRecord struct {
	Kind   ActivityKind `json:"kind"`
	Name   string       `json:"name"`
	Start  int64        `json:"start"`
	End    int64        `json:"end"`
	Corr   uint32       `json:"corr"`
	Stream uint32       `json:"stream"`
	Bytes  int64        `json:"bytes"`
	CBID   uint32       `json:"cbid"`
}

// expectedDump is what expect.py decoded from one dump: every record in
// buffer order, and per recorded step the GPU record durations of each
// correlation id (as decimal strings, JSON's keys).
type expectedDump struct {
	Records []expectedRecord     `json:"records"`
	Steps   []map[string][]int64 `json:"steps"`
}

func loadExpected(t *testing.T) map[string]expectedDump {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "cupti", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]expectedDump
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	if len(exp) == 0 {
		t.Fatal("expected.json lists no dumps")
	}
	return exp
}

func loadDump(t *testing.T, w string) (*ActivityDump, []Activity) {
	t.Helper()
	d, err := ReadActivityDump(filepath.Join("testdata", "cupti", w+".activity.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var acts []Activity
	for i := range d.Buffers {
		a, err := DecodeActivities(&d.Buffers[i], i)
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		acts = append(acts, a...)
	}
	return d, acts
}

// TestRecordedBuffersDecode decodes the CUPTI buffers recorded on an H200
// (CUDA 13.0 CUPTI, driver 580) and compares every record with the
// independent decoding of testdata/cupti/expect.py.
func TestRecordedBuffersDecode(t *testing.T) {
	for w, exp := range loadExpected(t) {
		_, acts := loadDump(t, w)
		if len(acts) != len(exp.Records) {
			t.Fatalf("%s: %d records, expect.py decoded %d", w, len(acts), len(exp.Records))
		}
		for j, a := range acts {
			got := expectedRecord{Kind: a.Kind, Start: a.Start, End: a.End, Corr: a.Correlation}
			if a.GPU() {
				got.Stream = a.Stream
				if a.Kind == ActKernel || a.Kind == ActConcurrentKernel {
					got.Name = a.Name
				} else {
					got.Bytes = a.Bytes
				}
			} else {
				got.Name, got.CBID = a.Name, a.CBID
			}
			if got != exp.Records[j] {
				t.Errorf("%s record %d:\n got %+v\nwant %+v", w, j, got, exp.Records[j])
			}
		}
	}
}

// TestRecordedBuffersConvert converts the recorded buffers step by step, in
// the windows the capture recorded, to trace events (no host calls known,
// as for records the session did not issue): each step's GPU records are
// exactly those expect.py found, with their durations and correlation ids,
// and a flow from their API event.
func TestRecordedBuffersConvert(t *testing.T) {
	wantNames := map[string][]string{
		"gemm-library":              {"sm80_xmma_gemm_", "bias_relu", "cudaLaunchKernelExC", "cuLaunchKernel", "cuCtxSynchronize"},
		"memcpy-pinned":             {"Memcpy HtoD (Pinned -> Device)", "cuMemcpyHtoD_v2"},
		"elementwise-chain-unfused": {"ew_sin", "ew_cos", "ew_add"},
		"lowrank-noise-unfused":     {"noise_rng", "noise_repeat", "noise_scale", "noise_sign"},
	}
	for w, exp := range loadExpected(t) {
		d, acts := loadDump(t, w)
		if len(d.Steps) == 0 || len(d.Steps) != len(exp.Steps) {
			t.Fatalf("%s: %d steps in the dump, expect.py saw %d", w, len(d.Steps), len(exp.Steps))
		}
		names := map[string]bool{}
		for si, st := range d.Steps {
			s := newSession(newFakeDriver(&fakeClock{}), nil, &fakeClock{}, DefaultOptions(w), 1)
			s.convertActivities(acts, cuptiCalibration{}, st.From, st.To, 1)
			got := map[string][]int64{}
			flows := map[int64]int{}
			for _, e := range s.events {
				names[e.Name] = true
				switch e.Ph {
				case "s":
					flows[e.ID]++
				case "f":
					flows[e.ID] += 10
				case "X":
					if e.Cat == "kernel" || e.Cat == "gpu_memcpy" || e.Cat == "gpu_memset" {
						c := strconv.FormatInt(argInt(t, e.Args, "correlation"), 10)
						got[c] = append(got[c], e.DurNs)
					}
				}
			}
			want := exp.Steps[si]
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("%s step %d: GPU events for %d calls, want %d", w, si, len(got), len(want))
			}
			for c, d := range want {
				if !slices.Equal(got[c], d) {
					t.Errorf("%s step %d: correlation %s durations %v, want %v", w, si, c, got[c], d)
				}
				id, _ := strconv.ParseInt(c, 10, 64)
				if flows[id] != 1+10*len(d) {
					t.Errorf("%s step %d: correlation %s has flow count %d, want 1 start and %d ends", w, si, c, flows[id], len(d))
				}
			}
		}
		for _, n := range wantNames[w] {
			found := false
			for name := range names {
				found = found || strings.HasPrefix(name, n)
			}
			if !found {
				t.Errorf("%s: no event named %s…", w, n)
			}
		}
		if names["capture_lead"] {
			t.Errorf("%s: the priming kernel is in the trace", w)
		}
	}
}

// argInt is an integer arg of a trace event.
func argInt(t *testing.T, args []Arg, key string) int64 {
	t.Helper()
	for _, a := range args {
		if a.Key == key {
			switch v := a.Val.(type) {
			case int:
				return int64(v)
			case int64:
				return v
			}
		}
	}
	t.Fatalf("no integer arg %q in %v", key, args)
	return 0
}
