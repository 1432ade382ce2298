package export

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/tracelens/tracelens/distributed"
)

// job is a multi-rank run loaded with distributed.Load: its collectives
// matched across ranks once, for every rank's tables.
type job struct {
	name string
	run  *distributed.Run
	// calls[ri][ci] places collective ci of run.Ranks[ri] in
	// run.Collectives (coll -1 when unmatched).
	calls [][]callRef
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

// loadJob prepares the ranks of one job (inputs[idx]) for export: it
// hashes every file, and unless every rank's tables are up to date it
// loads the run with distributed.Load, which reads the ranks and matches
// their collectives. It returns one jobRank per idx, nil for an input it
// settled itself in out (skipped, or failed because the job could not be
// loaded: every rank then fails with the job's error).
func loadJob(inputs []Input, idx []int, opt Options, workers int, out []Outcome) []*jobRank {
	ranks := make([]*jobRank, len(idx))
	h := sha256.New()
	fail := func(err error) []*jobRank {
		for _, i := range idx {
			removeRun(opt.Dir, inputs[i].Run)
			out[i] = Outcome{Input: inputs[i], Status: Failed, Err: err, ContentHash: out[i].ContentHash, InputBytes: out[i].InputBytes}
		}
		return make([]*jobRank, len(idx))
	}
	for k, i := range idx {
		hash, size, err := contentHash(inputs[i].Path)
		if err != nil {
			return fail(fmt.Errorf("job %s: %w", inputs[i].Job, err))
		}
		out[i] = Outcome{Input: inputs[i], ContentHash: hash, InputBytes: size}
		ranks[k] = &jobRank{id: identity{ContentHash: hash}, size: size}
		fmt.Fprintf(h, "%s\x00%s\x00", inputs[i].Run, hash)
	}
	jobHash := "sha256:" + hex.EncodeToString(h.Sum(nil))
	fresh := !opt.Force
	for k, i := range idx {
		ranks[k].id.JobHash = jobHash
		fresh = fresh && upToDate(opt.Dir, inputs[i].Run, ranks[k].id)
	}
	if fresh {
		for _, i := range idx {
			out[i].Status, out[i].OutputBytes = Skipped, outputBytes(opt.Dir, inputs[i].Run)
		}
		return make([]*jobRank, len(idx))
	}
	paths := make([]string, len(idx))
	for k, i := range idx {
		paths[k] = inputs[i].Path
	}
	run, err := distributed.Load(paths, distributed.Options{Parallel: workers})
	if err != nil {
		return fail(fmt.Errorf("job %s: %w", inputs[idx[0]].Job, err))
	}
	j := &job{name: inputs[idx[0]].Job, run: run, calls: make([][]callRef, len(run.Ranks))}
	bySource := map[string]int{}
	for ri, r := range run.Ranks {
		bySource[r.Source] = ri
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
	for k, i := range idx {
		ri, ok := bySource[inputs[i].Path]
		if !ok {
			return fail(fmt.Errorf("job %s: %s is not among the ranks distributed.Load read", j.name, inputs[i].Path))
		}
		ranks[k].job, ranks[k].index = j, ri
	}
	return ranks
}
