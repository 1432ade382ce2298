// Package capture runs small GPU workloads through the CUDA driver API and
// writes what happened as a Kineto-compatible Chrome trace, so the rest of
// tracelens (report, top, diff, tui) reads it like any torch.profiler trace.
//
// Timing works like CUPTI's activity records, with CUDA events instead of
// hardware callbacks: every launch and copy is bracketed by two events on
// its stream, the event clock is calibrated against the host monotonic
// clock at the start of every step, and each GPU record is linked to the
// host-side API call that issued it by a correlation id. Launches are grouped
// under ProfilerStep#N and named annotations. A whole-step mode records only
// one pair of events per step, for launch-overhead work.
//
// The CUDA driver sits behind the Driver interface. The real implementation
// (gorgonia.org/cu plus a little cgo for pinned memory, error names and a
// cuBLAS found at run time with dlopen) is built only with the build tag
// "cuda"; everything else, and all the tests, build without it.
package capture
