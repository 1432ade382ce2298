package distributed

// Nsight Systems exports that hold several processes' GPU work (MPI
// ranks profiled into one report): each process is a rank of the run.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

// isMultiProcess reports whether path is an Nsight Systems export whose
// CUDA streams belong to several processes: a run in one file.
func isMultiProcess(path string) bool { return ingest.NsysProcesses(path) >= 2 }

// pidSuffix marks the Source of a rank that is one process of an export.
const pidSuffix = "@pid="

// readProcessRanks reads an export's processes as ranks (ingest's
// ReadProcesses numbers them), each compacted as a rank file is, and
// handed to each (if set) first.
func readProcessRanks(path string, extra *regexp.Regexp, workers int, maxMemory int64, each func(*trace.Trace, *Rank) error) (rs []*Rank, err error) {
	ts, err := ingest.ReadProcesses(path, ingest.Options{Workers: workers, MaxMemory: maxMemory})
	if err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			rs, err = nil, fmt.Errorf("%s: internal error while summarising a process: %v", path, p)
		}
	}()
	size := ingest.JSONSize(path)
	for _, t := range ts {
		src := path
		if pid := t.Meta.Other["pid"]; pid != "" && len(ts) > 1 {
			src = path + pidSuffix + pid
		}
		r := compact(t, newCommScanner(), src, size/int64(len(ts)), extra)
		if n, err := strconv.Atoi(t.Meta.Other["rank"]); err == nil && len(ts) > 1 {
			r.Rank, r.RankFrom = n, "nsys process ("+t.Meta.Other["rank_from"]+")"
		}
		if each != nil {
			if err := each(t, r); err != nil {
				return nil, err
			}
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// readProcessTrace reads the full model of a rank whose Source names one
// process of an export (path@pid=N); ok is false for any other source.
func readProcessTrace(source string, workers int, maxMemory int64) (t *trace.Trace, ok bool, err error) {
	i := strings.LastIndex(source, pidSuffix)
	if i < 0 {
		return nil, false, nil
	}
	path, pid := source[:i], source[i+len(pidSuffix):]
	ts, err := ingest.ReadProcesses(path, ingest.Options{Workers: workers, MaxMemory: maxMemory})
	if err != nil {
		return nil, true, err
	}
	for _, t := range ts {
		if t.Meta.Other["pid"] == pid {
			return t, true, nil
		}
	}
	return nil, true, fmt.Errorf("%s: no GPU work of process %s", path, pid)
}
