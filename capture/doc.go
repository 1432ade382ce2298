// Package capture runs small GPU workloads through the CUDA driver API and
// writes what happened as a Kineto-compatible Chrome trace, so the rest of
// tracelens (report, top, diff, tui) reads it like any torch.profiler trace.
//
// GPU work is timed one of three ways, named in the trace's
// tracelens_capture.timing_mode:
//
//   - cupti (the default when libcupti loads): CUPTI's Activity API, the
//     source Kineto uses, records every kernel, memcpy, memset and driver or
//     runtime API call with GPU timestamps and correlation ids (only the
//     record kinds the workload issues are enabled: each costs host time in
//     every launch; --cupti-cost measures CUPTI's cost per launch, paired
//     in the same process). CUPTI is
//     loaded at run time (dlopen by soname, CUPTI_PATH overrides); its
//     records are decoded in pure Go, so the conversion is tested on
//     recorded buffers without a GPU. CUPTI's clock is aligned with the host
//     monotonic clock at every step, and each API record is matched to the
//     launch that made it by time, to carry its annotations.
//   - events (without CUPTI): every launch and copy is bracketed by two CUDA
//     events, the event clock calibrated against the host clock every step.
//     Events add 1-2.5 µs to each kernel and, when the GPU waits on the
//     host, a start event fires before the launch arrives, so short kernels
//     read long; a short GPU-side lead at each step's start (--lead-us)
//     keeps a GPU-bound step's first launches exact.
//   - steps (--no-per-launch-timing): one pair of events per step, for
//     launch-overhead work.
//
// Launches are grouped under ProfilerStep#N and named annotations, as
// torch.profiler does. fixtures/capture/README.md has what each mode
// measured against Nsight Compute, and its cost per launch.
//
// The CUDA driver sits behind the Driver interface and CUPTI behind
// ActivitySource. The real implementations (gorgonia.org/cu plus a little
// cgo for pinned memory, error names, and cuBLAS and CUPTI found at run time
// with dlopen) are built only with the build tag "cuda" (capture/BUILD.md);
// everything else, and all the tests, build without it.
package capture
