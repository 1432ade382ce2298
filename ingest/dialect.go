package ingest

// Telling the dialects apart and what each writes differently: the top-level
// metadata, Kineto or JAX, loosely categorised events, B/E pairs, GPU
// process and stream names.

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/tracelens/tracelens/trace"
)

func (m *merger) metadata(top map[string][]byte) {
	md := &m.t.Meta
	md.Other = map[string]string{}
	for k, raw := range top {
		v := gjson.ParseBytes(raw)
		switch k {
		case "schemaVersion":
			md.SchemaVersion = int(v.Int())
		case "cuda_driver_version":
			md.CUDADriverVersion = int(v.Int())
		case "cuda_runtime_version":
			md.CUDARuntimeVersion = int(v.Int())
		case "cupti_version":
			md.CUPTIVersion = int(v.Int())
		case "baseTimeNanoseconds":
			md.BaseTimeNanoseconds, _ = strconv.ParseInt(v.Raw, 10, 64)
		case "displayTimeUnit":
			md.DisplayTimeUnit = v.Str
		case "traceName":
			md.TraceName = v.Str
		case "deviceProperties":
			v.ForEach(func(_, d gjson.Result) bool {
				md.Devices = append(md.Devices, trace.DeviceProperties{
					ID:                 int(d.Get("id").Int()),
					Name:               d.Get("name").Str,
					TotalGlobalMem:     d.Get("totalGlobalMem").Int(),
					ComputeMajor:       int(d.Get("computeMajor").Int()),
					ComputeMinor:       int(d.Get("computeMinor").Int()),
					NumSMs:             int(d.Get("numSms").Int()),
					MaxThreadsPerSM:    int(d.Get("maxThreadsPerMultiprocessor").Int()),
					RegsPerSM:          int(d.Get("regsPerMultiprocessor").Int()),
					SharedMemPerSM:     d.Get("sharedMemPerMultiprocessor").Int(),
					MaxThreadsPerBlock: int(d.Get("maxThreadsPerBlock").Int()),
				})
				return true
			})
		default:
			if v.Type != gjson.JSON && len(raw) < 1024 {
				md.Other[k] = scalarText(v)
			}
		}
	}
	if fw, ok := md.Other["framework"]; ok {
		md.Framework = fw
	}
	if _, ok := top["tracelens_capture"]; ok {
		md.Framework = trace.FrameworkCapture
	}
	switch {
	case len(m.loose) > 0 && len(m.t.GPU) == 0:
		md.Format = "perfetto"
		if m.looksJAX() {
			md.Format, md.Framework = "jax", "JAX"
		}
	case hasCat(m.t, "Kernel") || hasCat(m.t, "Operator") || hasCat(m.t, "Runtime"):
		md.Format = "kineto-legacy"
	case m.looksKineto(top):
		md.Format = "kineto"
	default:
		// Chrome trace JSON from some other writer (or JSON that merely
		// has the shape): calling it PyTorch's would be a guess.
		md.Format = "chrome"
	}
	if md.Framework == "" && strings.HasPrefix(md.Format, "kineto") {
		md.Framework = "PyTorch"
	}
}

// kinetoCats are the categories Kineto writes; one of them, or a key only
// Kineto puts at the top level, marks a trace as PyTorch's.
var kinetoCats = []string{"kernel", "cpu_op", "cuda_runtime", "cuda_driver", "python_function", "gpu_memcpy",
	"gpu_memset", "user_annotation", "gpu_user_annotation", "ac2g", "cpu_instant_event", "python_annotation"}

func (m *merger) looksKineto(top map[string][]byte) bool {
	for _, k := range []string{"schemaVersion", "deviceProperties", "distributedInfo", "cupti_version", "tracelens_capture"} {
		if _, ok := top[k]; ok {
			return true
		}
	}
	for _, c := range kinetoCats {
		if hasCat(m.t, c) {
			return true
		}
	}
	return false
}

func hasCat(t *trace.Trace, c string) bool {
	for _, cc := range t.Categories {
		if cc.Category == c {
			return true
		}
	}
	return false
}

func (m *merger) looksJAX() bool {
	for _, e := range m.meta {
		if e.kind == "process_name" && (strings.HasPrefix(e.name, "/device:") || strings.HasPrefix(e.name, "/host:")) {
			return true
		}
	}
	return false
}

// names applies process/thread metadata to the thread table.
func (m *merger) names() {
	for _, e := range m.meta {
		if e.kind == "thread_name" && e.thread >= 0 && int(e.thread) < len(m.t.Threads) {
			m.t.Threads[e.thread].Name = e.name
		}
	}
}

// classifyLoose turns category-less events (Perfetto/JAX) into model
// events: those on a GPU process or a "Stream #N" thread are GPU activity,
// host events with a correlation id are launch API calls, "$file:line fn"
// names are Python frames, and the rest are host ops.
func (m *merger) classifyLoose() {
	if len(m.loose) == 0 {
		return
	}
	procName := map[string]string{}
	for _, e := range m.meta {
		if e.kind == "process_name" {
			procName[e.pid] = e.name
		}
	}
	t := m.t
	for _, e := range m.loose {
		th := t.Threads[e.thread]
		pname := procName[th.PID]
		dev, isGPU := gpuProcess(pname)
		stream, isStream := streamThread(th.Name)
		switch {
		case isGPU || isStream:
			if !isStream {
				stream = streamNumber(th.TID)
			}
			g := trace.GPUActivity{Span: e.Span, Kind: trace.Kernel, Device: dev, Stream: stream, Launch: trace.None, Occupancy: -1}
			if e.hasCorr {
				g.Correlation = e.correlation
			}
			lower := strings.ToLower(e.Name)
			switch {
			case e.memcpy || strings.HasPrefix(lower, "memcpy"):
				g.Kind = trace.Memcpy
				g.Copy, g.Src, g.Dst, g.Bytes = parseXLAMemcpy(e.Name, e.details)
			case strings.HasPrefix(lower, "memset"):
				g.Kind = trace.Memset
			default:
				parseKernelDetails(&g, e.details)
			}
			t.GPU = append(t.GPU, g)
		case e.hasCorr:
			t.APICalls = append(t.APICalls, trace.APICall{Span: e.Span, Thread: e.thread, Correlation: e.correlation,
				Driver: strings.HasPrefix(e.Name, "cu") && !strings.HasPrefix(e.Name, "cuda"), Op: trace.None, Frame: trace.None, FirstGPU: trace.None})
		case strings.HasPrefix(e.Name, "$"):
			t.Frames = append(t.Frames, trace.PyFrame{Span: trace.Span{Name: jaxFrameName(e.Name), Start: e.Start, End: e.End}, Thread: e.thread, Parent: trace.None})
		default:
			t.Ops = append(t.Ops, trace.Op{Span: e.Span, Thread: e.thread, Parent: trace.None, Frame: trace.None})
		}
	}
	m.loose = nil
}

// pairBeginEnd turns B/E pairs into spans: per thread, in file order, an E
// closes the innermost open B (Chrome's rule). The spans are classified
// like other category-less events (by process and thread names).
func (m *merger) pairBeginEnd() {
	if len(m.be) == 0 {
		return
	}
	open := map[trace.Index][]beginEnd{}
	for _, e := range m.be {
		if e.begin {
			open[e.thread] = append(open[e.thread], e)
			continue
		}
		stack := open[e.thread]
		if len(stack) == 0 {
			m.skipAt("E event without a matching B", e.off)
			continue
		}
		b := stack[len(stack)-1]
		open[e.thread] = stack[:len(stack)-1]
		if e.ts < b.ts {
			m.skipAt("E event before its B", e.off)
			continue
		}
		m.loose = append(m.loose, looseEvent{Span: trace.Span{Name: b.name, Start: b.ts, End: e.ts}, thread: b.thread,
			correlation: b.correlation, hasCorr: b.hasCorr})
	}
	for _, stack := range open {
		for _, b := range stack {
			m.skipAt("B event never ended", b.off)
		}
	}
	m.be = nil
}

// gpuProcess recognises "/device:GPU:0" (JAX/XLA) process names.
func gpuProcess(name string) (int32, bool) {
	rest, ok := strings.CutPrefix(name, "/device:GPU:")
	if !ok {
		return 0, false
	}
	n, _ := strconv.Atoi(leadingDigits(rest)) // "/device:GPU:" alone is GPU 0
	return int32(n), true
}

// streamThread recognises "Stream #14(Compute)" thread names.
func streamThread(name string) (int32, bool) {
	rest, ok := strings.CutPrefix(name, "Stream #")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(leadingDigits(rest))
	return int32(n), err == nil
}

// leadingDigits is the run of ASCII digits s starts with.
func leadingDigits(s string) string {
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	return s[:end]
}

// jaxFrameName turns "$contextlib.py:132 __enter__" into Kineto's
// "contextlib.py(132): __enter__" so consumers see one frame syntax.
func jaxFrameName(name string) string {
	s := strings.TrimPrefix(name, "$")
	loc, fn, ok := strings.Cut(s, " ")
	if !ok {
		return s
	}
	colon := strings.LastIndexByte(loc, ':')
	if colon < 0 {
		return s
	}
	if _, err := strconv.Atoi(loc[colon+1:]); err != nil {
		return s
	}
	return loc[:colon] + "(" + loc[colon+1:] + "): " + fn
}

// parseKernelDetails reads XLA's "regs:16 static_shared:0 dynamic_shared:0
// grid:1,1,1 block:1,1,1 occ_pct:1.5625".
func parseKernelDetails(g *trace.GPUActivity, details string) {
	for _, f := range strings.Fields(details) {
		k, v, ok := strings.Cut(f, ":")
		if !ok {
			continue
		}
		switch k {
		case "regs":
			n, _ := strconv.Atoi(v)
			g.Registers = int32(n)
		case "static_shared", "dynamic_shared":
			n, _ := strconv.Atoi(v)
			g.SharedMem += int32(n)
		case "grid", "block":
			d := &g.Grid
			if k == "block" {
				d = &g.Block
			}
			for i, p := range strings.SplitN(v, ",", 3) {
				n, _ := strconv.Atoi(p)
				d[i] = int32(n)
			}
		case "occ_pct":
			f, _ := strconv.ParseFloat(v, 64)
			g.Occupancy = float32(f)
		}
	}
}

// parseXLAMemcpy reads "MemcpyH2D" with "kind_src:pinned kind_dst:device
// size:4 dest:0 async:1".
func parseXLAMemcpy(name, details string) (trace.CopyKind, trace.MemKind, trace.MemKind, int64) {
	var kind trace.CopyKind
	switch {
	case strings.Contains(name, "H2D"):
		kind = trace.HtoD
	case strings.Contains(name, "D2H"):
		kind = trace.DtoH
	case strings.Contains(name, "D2D"):
		kind = trace.DtoD
	case strings.Contains(name, "P2P"):
		kind = trace.PtoP
	}
	var src, dst trace.MemKind
	var size int64
	for _, f := range strings.Fields(details) {
		k, v, _ := strings.Cut(f, ":")
		switch k {
		case "kind_src":
			src = memKind(v)
		case "kind_dst":
			dst = memKind(v)
		case "size":
			size, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return kind, src, dst, size
}
