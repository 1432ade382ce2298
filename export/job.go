package export

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/trace"
)

// job is a multi-rank run loaded with distributed.Load: its collectives
// matched across ranks once, for every rank's tables.
type job struct {
	name string
	run  *distributed.Run
	// calls[ri][ci] places collective ci of run.Ranks[ri] in
	// run.Collectives (coll -1 when unmatched).
	calls [][]callRef
	// cross are the run's cross-rank findings (a late rank, exposed
	// communication), ranked into each rank's findings table.
	cross []analyze.Finding
}

// callRef is one rank's kernel in a matched collective: the collective's
// index in Run.Collectives and the rank's index in its Participants.
type callRef struct{ coll, part int }

// jobRank is one input's place in its job.
type jobRank struct {
	job *job
	// index is the rank's index in job.run.Ranks.
	index int
	id    identity
	size  int64
}

// info is the rank columns' values for r.
func (r *jobRank) info() rankInfo {
	rk := r.job.run.Ranks[r.index]
	return rankInfo{job: r.job.name, rank: int32(rk.Rank), world: int32(r.job.run.WorldSize), from: rk.RankFrom}
}

// rankState is what the first pass over a job left of one rank: the
// values its rank columns were written with, its rows so far, its runs
// row and a light model for the tables written after matching.
type rankState struct {
	written bool
	info    rankInfo
	rows    map[string]int64
	row     RunRow
	light   *model
}

// Tables written while the job's ranks are read, and after they were
// matched.
var (
	firstPass = []string{TableKernels, TableOps, TableSteps, TableLedger, TableLedgerSegments, TableMemory}
	afterJob  = []string{TableCollectives, TableFindings, TableRuns}
)

// job exports the ranks of one job (inputs[idx]). It hashes every file
// and skips the job when every rank's tables are up to date. Otherwise
// distributed.Load reads the ranks and matches their collectives, handing
// each rank's full trace over as it is read (Options.Each): its kernels,
// ops, steps and findings tables are written then, so each file is read
// once. Once the run is assembled, each rank's collectives and runs tables
// follow. A rank whose number or world size the job settled differently
// from what its own trace said (no world_size in it, a rank taken from
// file order) is exported again from its file with the job's values. If
// the job cannot be loaded (one rank unreadable, two traces of one rank:
// several profiling cycles of each rank in one directory), its files are
// exported as lone traces, each Outcome saying why in Note; a re-run
// skips them while they stay up to date as lone traces.
func (ex *exporter) job(idx []int) {
	name := ex.inputs[idx[0]].Job
	ids, err := ex.jobIdentities(idx)
	if err != nil {
		ex.lone(idx, name, err)
		return
	}
	if ex.clashes(idx, ids) {
		return
	}
	// Up to date as a job, or as lone traces: a job exported alone
	// before, and unchanged since, still cannot be loaded.
	if ex.skipIfFresh(idx, func(k int) identity { return ids[k] }) ||
		ex.skipIfFresh(idx, func(k int) identity { return identity{ContentHash: ids[k].ContentHash} }) {
		return
	}
	paths := make([]string, len(idx))
	at := map[string]int{}
	for k, i := range idx {
		paths[k] = ex.inputs[i].Path
		at[ex.inputs[i].Path] = k
	}
	states := make([]rankState, len(idx))
	// Each rank read gets a worker's share of the memory cap, as a lone
	// trace does.
	load := ex.opt.Cross
	load.Parallel, load.Each, load.MaxMemory = ex.workers, ex.firstPass(name, idx, ids, at, states), ex.read.MaxMemory
	run, err := distributed.Load(paths, load)
	if err != nil {
		ex.lone(idx, name, err)
		return
	}
	ex.afterJob(name, idx, ids, at, states, run)
}

// lone exports the inputs of job name (idx) as lone traces, each
// Outcome saying why the job could not be matched across ranks.
func (ex *exporter) lone(idx []int, name string, why error) {
	note := fmt.Sprintf("job %s not matched across ranks (%v): exported as lone traces, without rank or collectives", name, why)
	parallel(ex.workers, len(idx), func(k int) {
		i := idx[k]
		ex.one(i, nil)
		if o := &ex.out[i]; o.Status == Exported {
			o.Note = note
		}
	})
}

// jobIdentities hashes every file of a job (idx): each rank's identity
// is its content hash and the hash of the whole job.
func (ex *exporter) jobIdentities(idx []int) ([]identity, error) {
	ids := make([]identity, len(idx))
	h := sha256.New()
	for k, i := range idx {
		hash, size, err := contentHash(ex.inputs[i].Path)
		if err != nil {
			return nil, err
		}
		ex.out[i] = Outcome{Input: ex.inputs[i], ContentHash: hash, InputBytes: size}
		ids[k].ContentHash = hash
		fmt.Fprintf(h, "%s\x00%s\x00", ex.inputs[i].Run, hash)
	}
	jobHash := "sha256:" + hex.EncodeToString(h.Sum(nil))
	for k := range ids {
		ids[k].JobHash = jobHash
	}
	return ids, nil
}

// firstPass is distributed.Load's Each for job name: as each rank's
// full trace is read, its kernels, ops, steps and findings tables are
// written (states[k] records what), so each file is read once. A rank
// whose number the job settles later is left to afterJob.
func (ex *exporter) firstPass(name string, idx []int, ids []identity, at map[string]int, states []rankState) func(*trace.Trace, *distributed.Rank) error {
	return func(t *trace.Trace, r *distributed.Rank) error {
		k, ok := at[r.Source]
		if !ok {
			return fmt.Errorf("%s: not one of job %s's files", r.Source, name)
		}
		if r.Rank < 0 || r.WorldSize <= 0 {
			return nil // the job settles them: written after it
		}
		i := idx[k]
		ex.prog.start(i)
		m, err := build(ex.inputs[i], t, ex.opt)
		if err != nil {
			return err
		}
		st := rankState{info: rankInfo{job: name, rank: int32(r.Rank), world: int32(r.WorldSize), from: r.RankFrom}}
		m.setRank(st.info)
		st.row = m.runRow(ex.inputs[i].source(), ids[k].ContentHash, ex.out[i].InputBytes)
		if st.rows, err = writeRun(ex.opt.Dir, ex.inputs[i], ids[k], m, &st.row, firstPass); err != nil {
			return err
		}
		st.written, st.light = true, m.light()
		states[k] = st
		ex.prog.reading(i, ex.out[i].InputBytes)
		return nil
	}
}

// afterJob writes, once the run is assembled, each rank's collectives and
// runs tables; a rank whose number or world size the job settled
// differently from what its first pass wrote is exported again.
func (ex *exporter) afterJob(name string, idx []int, ids []identity, at map[string]int, states []rankState, run *distributed.Run) {
	j := newJob(name, run)
	// Without re-reading ranks: the straggler's explanation (its evidence
	// and fix wording) is left to report and findings; its saving is the
	// same.
	j.cross = distributed.Analyze(run, nil, ex.opt.Cross).CrossRankFindings()
	ranks := make([]*jobRank, len(idx))
	for ri, r := range run.Ranks {
		k, ok := at[r.Source]
		if !ok {
			ex.lone(idx, name, fmt.Errorf("distributed.Load read %s, not one of its files", r.Source))
			return
		}
		ranks[k] = &jobRank{job: j, index: ri, id: ids[k], size: ex.out[idx[k]].InputBytes}
	}
	if i := slices.Index(ranks, nil); i >= 0 {
		ex.lone(idx, name, fmt.Errorf("distributed.Load did not read %s", ex.inputs[idx[i]].Path))
		return
	}
	var again []int
	for k, i := range idx {
		st := &states[k]
		if !st.written || st.info != ranks[k].info() {
			again = append(again, k)
			continue
		}
		ex.finish(i, st, ranks[k])
	}
	parallel(ex.workers, len(again), func(n int) {
		k := again[n]
		ex.one(idx[k], ranks[k])
	})
}

// clashes fails every input of idx, and reports true, when one of them
// would replace a run of the same name exported from another file
// (clash; never with Force): the job is exported whole or not at all.
func (ex *exporter) clashes(idx []int, ids []identity) bool {
	if ex.opt.Force {
		return false
	}
	var first error
	errs := make([]error, len(idx))
	for k, i := range idx {
		errs[k] = clash(ex.opt.Dir, ex.inputs[i], ids[k].ContentHash)
		if first == nil {
			first = errs[k]
		}
	}
	if first == nil {
		return false
	}
	for k, i := range idx {
		err := errs[k]
		if err == nil {
			err = fmt.Errorf("%s: not exported: job %s holds a rank that clashes (%w)", ex.inputs[i].Path, ex.inputs[i].Job, first)
		}
		ex.out[i].Status, ex.out[i].Err = Failed, err
		ex.prog.done(i)
	}
	return true
}

// skipIfFresh marks every input of idx skipped, and reports true, when
// all are up to date with the identity id gives (never with Force).
func (ex *exporter) skipIfFresh(idx []int, id func(k int) identity) bool {
	if ex.opt.Force {
		return false
	}
	for k, i := range idx {
		if !upToDate(ex.opt.Dir, ex.inputs[i].Run, id(k)) {
			return false
		}
	}
	for _, i := range idx {
		ex.out[i].Status, ex.out[i].OutputBytes = Skipped, outputBytes(ex.opt.Dir, ex.inputs[i].Run)
		ex.prog.done(i)
	}
	return true
}

// finish writes the collectives and runs tables of inputs[i], rank r of
// its job, whose other tables the first pass wrote (st).
func (ex *exporter) finish(i int, st *rankState, r *jobRank) {
	in, o := ex.inputs[i], &ex.out[i]
	defer ex.prog.done(i)
	defer func() {
		// A bug in a row builder must not take the other inputs down.
		if p := recover(); p != nil {
			removeRun(ex.opt.Dir, in.Run)
			o.Status, o.Err = Failed, fmt.Errorf("%s: internal error while exporting: %v", in.Path, p)
		}
	}()
	m := st.light
	m.setJobRank(r)
	m.rankColumns(&st.row)
	rows, err := writeRun(ex.opt.Dir, in, r.id, m, &st.row, afterJob)
	if err != nil {
		removeRun(ex.opt.Dir, in.Run)
		o.Status, o.Err = Failed, err
		return
	}
	maps.Copy(st.rows, rows)
	o.Status, o.Rows, o.OutputBytes = Exported, st.rows, outputBytes(ex.opt.Dir, in.Run)
}

// newJob indexes run's matched collectives by rank and kernel.
func newJob(name string, run *distributed.Run) *job {
	j := &job{name: name, run: run, calls: make([][]callRef, len(run.Ranks))}
	for ri, r := range run.Ranks {
		j.calls[ri] = make([]callRef, len(r.Collectives))
		for ci := range j.calls[ri] {
			j.calls[ri][ci] = callRef{coll: -1}
		}
	}
	for c := range run.Collectives {
		col := &run.Collectives[c]
		for p, ri := range col.Participants {
			j.calls[ri][col.Calls[p]] = callRef{coll: c, part: p}
		}
	}
	return j
}
