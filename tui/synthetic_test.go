package tui

import (
	"fmt"

	"github.com/tracelens/tracelens/trace"
)

// syntheticTrace builds a trace with kernels distinct kernel names, each
// launched launches times from its own op, over four profiler steps: the
// shape of a large real trace without its file.
func syntheticTrace(kernels, launches int) *trace.Trace {
	const us = trace.Time(1000)
	n := kernels * launches
	t := &trace.Trace{
		Source:  "synthetic.json",
		Meta:    trace.Metadata{Format: "kineto", Framework: "PyTorch", Devices: []trace.DeviceProperties{{ID: 0, Name: "Synthetic GPU", NumSMs: 132, ComputeMajor: 9}}},
		Threads: []trace.Thread{{PID: "1", TID: "1", Name: "python"}},
		Events:  3 * n,
	}
	t.Ops = make([]trace.Op, 0, n)
	t.APICalls = make([]trace.APICall, 0, n)
	t.GPU = make([]trace.GPUActivity, 0, n)
	for j := 0; j < n; j++ {
		k := j % kernels
		start := trace.Time(j) * 10 * us
		t.Ops = append(t.Ops, trace.Op{Span: trace.Span{Name: fmt.Sprintf("aten::op_%d", k%50), Start: start, End: start + 8*us},
			Thread: 0, Parent: trace.None, Frame: trace.None})
		t.APICalls = append(t.APICalls, trace.APICall{Span: trace.Span{Name: "cudaLaunchKernel", Start: start + 1*us, End: start + 3*us},
			Thread: 0, Correlation: int64(j + 1), Op: trace.Index(j), Frame: trace.None, FirstGPU: trace.Index(j)})
		t.GPU = append(t.GPU, trace.GPUActivity{
			Span: trace.Span{Name: fmt.Sprintf("void synth::kernel_%05d<float, %d>(float*, long)", k, k%7), Start: start + 5*us, End: start + 5*us + trace.Time(1+k%4)*us},
			Kind: trace.Kernel, Stream: 7, Correlation: int64(j + 1), Launch: trace.Index(j),
			Grid: [3]int32{int32(1 + k%64), 1, 1}, Block: [3]int32{256, 1, 1}, Registers: 32, Occupancy: -1,
		})
	}
	end := trace.Time(n) * 10 * us
	for s := 0; s < 4; s++ {
		t.Steps = append(t.Steps, trace.Step{Span: trace.Span{Name: fmt.Sprintf("ProfilerStep#%d", s+1), Start: end * trace.Time(s) / 4, End: end * trace.Time(s+1) / 4}, Number: s + 1})
		t.Annotations = append(t.Annotations, trace.Annotation{Span: t.Steps[s].Span, Thread: 0})
	}
	return t
}
