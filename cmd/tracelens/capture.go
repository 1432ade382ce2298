package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tracelens/tracelens/capture"
)

const captureArgs = "[--list] WORKLOAD [-o TRACE.json.gz] [--steps N] [--size SIZE] [--check] [--timing auto|cupti|events] [--cupti-api calls|all] [--cupti-cost N] [--no-per-launch-timing]"

func captureCommand() command {
	return command{name: "capture", args: captureArgs, summary: "run a GPU workload (GEMM, fusion, launch overhead, memcpy) and write its trace (needs a -tags cuda build)", run: runCapture,
		examples: []string{
			"tracelens capture --list",
			"tracelens capture gemm-tiled -o gemm.json.gz --steps 10",
		}}
}

func runCapture(e *env, args []string) error {
	fs := newFlags("capture")
	list := fs.Bool("list", false, "list the workloads and exit")
	out := fs.String("o", "", "trace file to write (gzip when it ends in .gz; default WORKLOAD.json.gz)")
	steps := fs.Int("steps", 5, "recorded steps (ProfilerStep#N)")
	warmup := fs.Int("warmup", 2, "unrecorded warm-up steps before them")
	size := fs.String("size", "", "workload size (see --list; default: the write-up's size)")
	check := fs.Bool("check", false, "first verify the workload's output against a CPU reference at a small size")
	noPerLaunch := fs.Bool("no-per-launch-timing", false, "time whole steps only: no events around each launch (for launch-overhead work)")
	leadUs := fs.Int("lead-us", 20, "hold the GPU this many microseconds at each step's start so the host queues ahead (0: off)")
	device := fs.Int("device", 0, "CUDA device ordinal")
	timing := fs.String("timing", "auto", "per-launch timing: cupti (CUPTI activity records; libcupti.so found by soname, or CUPTI_PATH), events (two CUDA events per launch), auto (cupti, else events)")
	cuptiAPI := fs.String("cupti-api", "calls", "which driver and runtime API calls CUPTI records: calls (launches, copies, sets and waits: the least host time per call) or all (every call, as Kineto records them)")
	costRounds := fs.Int("cupti-cost", 0, "with CUPTI timing, then measure CUPTI's host cost per launch: N pairs of unrecorded steps with its records off and on, paired in this process (0: off)")
	dump := fs.String("dump-activity", "", "also write the recorded steps' raw CUPTI activity buffers to this file (JSON, gzip when .gz; test data)")
	pos, err := parseFlags(e, fs, captureArgs, args)
	if err != nil {
		return err
	}
	if *list {
		return writeWorkloadList(e.stdout)
	}
	if len(pos) != 1 {
		return usageError{"want one WORKLOAD (tracelens capture --list shows them)"}
	}
	w, ok := capture.Lookup(pos[0])
	if !ok {
		return usageError{fmt.Sprintf("unknown workload %q (tracelens capture --list shows them)", pos[0])}
	}
	if *steps < 1 || *warmup < 0 || *leadUs < 0 || *costRounds < 0 {
		return usageError{"--steps must be at least 1, --warmup, --lead-us and --cupti-cost at least 0"}
	}
	switch *timing {
	case "auto", capture.TimingCUPTI, capture.TimingEvents:
	default:
		return usageError{fmt.Sprintf("--timing %q: want auto, cupti or events", *timing)}
	}
	if *cuptiAPI != "calls" && *cuptiAPI != "all" {
		return usageError{fmt.Sprintf("--cupti-api %q: want calls or all", *cuptiAPI)}
	}
	if *costRounds > 0 && (*timing == capture.TimingEvents || *noPerLaunch) {
		return usageError{"--cupti-cost needs CUPTI timing (not --timing events or --no-per-launch-timing)"}
	}
	if *dump != "" && (*timing == capture.TimingEvents || *noPerLaunch) {
		return usageError{"--dump-activity needs CUPTI timing (not --timing events or --no-per-launch-timing)"}
	}
	if !capture.CUDAEnabled {
		return exitError{code: exitUsageOrBad, err: capture.ErrNoCUDA}
	}
	path := *out
	if path == "" {
		path = w.Name + ".json.gz"
	}
	opt := capture.DefaultOptions(w.Name)
	opt.Size, opt.Steps, opt.Warmup, opt.Check = *size, *steps, *warmup, *check
	opt.PerLaunchTiming = !*noPerLaunch
	opt.LeadNs = int64(*leadUs) * int64(time.Microsecond)
	opt.Pid = os.Getpid()
	opt.KeepActivity = *dump != ""
	opt.CUPTICostRounds = *costRounds
	return captureRun(e, *device, opt, path, *timing, capture.ForWorkload(w, *cuptiAPI == "all"), *dump)
}

// openActivity loads CUPTI for --timing cupti or auto. In auto mode a
// missing CUPTI is a note on stderr and event timing, not an error.
func openActivity(e *env, opt capture.Options, timing string, cfg capture.CUPTIConfig) (capture.ActivitySource, error) {
	if !opt.PerLaunchTiming || timing == capture.TimingEvents {
		return nil, nil
	}
	src, err := capture.OpenCUPTI(os.Getenv("CUPTI_PATH"), cfg)
	if err == nil {
		return src, nil
	}
	if timing == capture.TimingCUPTI {
		return nil, exitError{code: exitUsageOrBad, err: fmt.Errorf("capture %s: --timing cupti: %w (set CUPTI_PATH to libcupti.so or its folder)", opt.Workload, err)}
	}
	fmt.Fprintf(e.stderr, "tracelens capture: no CUPTI, timing with CUDA events instead (%v)\n", err)
	return nil, nil
}

func captureRun(e *env, device int, opt capture.Options, path, timing string, cfg capture.CUPTIConfig, dump string) (err error) {
	// CUPTI first: it must be recording before the CUDA context exists.
	src, err := openActivity(e, opt, timing, cfg)
	if err != nil {
		return err
	}
	if src == nil && opt.CUPTICostRounds > 0 {
		fmt.Fprintf(e.stderr, "tracelens capture: no CUPTI, so its cost per launch (--cupti-cost) is not measured\n")
	}
	if src != nil {
		defer func() {
			if cerr := src.Close(); cerr != nil && err == nil {
				err = exitError{code: exitUsageOrBad, err: fmt.Errorf("capture %s: stop CUPTI: %w", opt.Workload, cerr)}
			}
		}()
	}
	d, err := capture.Open(device)
	if err != nil {
		return exitError{code: exitUsageOrBad, err: fmt.Errorf("capture %s: open CUDA device %d: %w", opt.Workload, device, err)}
	}
	defer func() {
		if cerr := d.Close(); cerr != nil && err == nil {
			err = exitError{code: exitUsageOrBad, err: fmt.Errorf("capture %s: close CUDA context: %w", opt.Workload, cerr)}
		}
	}()
	res, err := capture.Run(d, src, capture.NewHostClock(), opt)
	if err != nil {
		return exitError{code: exitUsageOrBad, err: fmt.Errorf("capture %w", err)}
	}
	if err := res.Trace.WriteFile(path); err != nil {
		return exitError{code: exitUsageOrBad, err: fmt.Errorf("capture %s: %w", opt.Workload, err)}
	}
	if dump != "" {
		if err := capture.WriteActivityDump(dump, res.ActivityDump()); err != nil {
			return exitError{code: exitUsageOrBad, err: fmt.Errorf("capture %s: %w", opt.Workload, err)}
		}
	}
	if err := res.WriteSummary(e.stdout); err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "trace written to %s\n", path)
	return err
}

func writeWorkloadList(w io.Writer) error {
	var errs []error
	for _, wl := range capture.Workloads() {
		_, err := fmt.Fprintf(w, "%-26s %s\n%-26s   size %s, default %s\n", wl.Name, wl.Summary, "", wl.SizeHelp, wl.DefaultSize)
		errs = append(errs, err)
	}
	if !capture.CUDAEnabled {
		_, err := fmt.Fprintf(w, "\nThis build has no CUDA support: %v\n", capture.ErrNoCUDA)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
