package main

import (
	"flag"

	"github.com/tracelens/tracelens/ingest"
)

// declareTraceFlags declares, once for every command that reads traces
// (info, top, findings, report, diff, tui, export, annotate, mcp, demo),
// the options that decide what is read and analyzed, so each command takes
// them with the same names, help and meaning for traces and run
// directories alike:
//
//   - --max-memory caps the process (e.setMaxMemory: the budget that the
//     watchdog, the analysis, readTrace, loadRun and every loader built
//     from e check);
//   - --step-range names the steps (e.stepRange, applied by loadTrace);
//   - --comm-kernel adds communication kernels for runs (e.run, loadRun);
//   - --enable/--disable select the analyzers and cross-rank checks
//     (parseFlags turns them into e.cfg and e.run's checks; every
//     analysis a command starts takes e.cfg).
func declareTraceFlags(e *env, fs *flag.FlagSet) {
	fs.Func("max-memory", "cap the process's memory at `SIZE` (e.g. 8GB; default: half of physical or cgroup memory): reading, the model, the analysis, the output, a run's ranks and the TUI; exit 2 naming the file and the byte offset or stage when it would pass 1.15× of it, or when one JSON value (a string, an event) needs more than a quarter of it", func(s string) error {
		n, err := ingest.ParseByteSize(s)
		e.setMaxMemory(n)
		return err
	})
	fs.StringVar(&e.stepRange, "step-range", "", "take the host ranges named `NAME` (NVTX or record_function) as the steps")
	fs.StringVar(&e.run.commKernel, "comm-kernel", "", "for runs: also count kernels matching `REGEX` as communication (custom collectives; NCCL and RCCL kernels always count)")
	fs.StringVar(&e.run.enableArg, "enable", "", "run only these comma-separated `ANALYZERS` (see 'tracelens analyzers')")
	fs.StringVar(&e.run.disableArg, "disable", "", "skip these comma-separated `ANALYZERS`")
}
