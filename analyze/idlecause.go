package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/interval"
	"github.com/tracelens/tracelens/trace"
)

// What the host was doing while the GPU sat idle, from the host activity
// that covers a gap. The fix depends on it: DataLoader workers help only
// when the host was loading data.
const (
	CauseDataLoading = "data loading"
	CauseOptimizer   = "optimizer step"
	CauseBuiltin     = "built-in call"
	CauseSync        = "synchronisation"
	CauseCompiled    = "torch.compile wrapper"
	CauseRange       = "user range"
	CauseHostCode    = "host code"
	CauseNewShape    = "per-shape set-up"
)

// clashes reports whether s overlaps a picked candidate by more than half
// of s.
func clashes[T interface{ getSpan() trace.Span }](s trace.Span, picked []T) bool {
	for _, p := range picked {
		ps := p.getSpan()
		lo, hi := max(s.Start, ps.Start), min(s.End, ps.End)
		if hi > lo && 2*trace.Duration(hi-lo) > s.Dur() {
			return true
		}
	}
	return false
}

// hostCand is a range that may explain a GPU idle gap, and what kind of
// host work it is.
type hostCand struct {
	name    string
	cause   string
	span    trace.Span
	overlap trace.Duration
}

func (c hostCand) getSpan() trace.Span { return c.span }

// dataWords name data loading in a function or range name, as whole
// words: "load_batch", "get_data" and "__next__" are data loading,
// "batched_forward" and "batch_norm" are not.
var dataWords = map[string]bool{"data": true, "dataset": true, "dataloader": true, "loader": true, "load": true, "batch": true,
	"fetch": true, "collate": true, "preprocess": true, "augment": true, "next": true, "prefetch": true, "prefetcher": true}

func dataName(name string) bool {
	if strings.Contains(strings.ToLower(name), "dataloader") {
		return true
	}
	words := nameWords(name)
	for i, w := range words {
		if w == "norm" && i > 0 && words[i-1] == "batch" {
			return false // batch_norm
		}
	}
	for _, w := range words {
		if dataWords[w] {
			return true
		}
	}
	return false
}

// nameWords splits an identifier into lower-case words at anything not a
// letter and where camelCase turns upper ("loadBatch" → load, batch).
func nameWords(name string) []string {
	var words []string
	var w []rune
	prevLower := false
	flush := func() {
		if len(w) > 0 {
			words = append(words, strings.ToLower(string(w)))
			w = w[:0]
		}
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z':
			w = append(w, r)
			prevLower = true
		case r >= 'A' && r <= 'Z':
			if prevLower {
				flush()
			}
			w = append(w, r)
			prevLower = false
		default:
			flush()
			prevLower = false
		}
	}
	flush()
	return words
}

// builtinFrame returns the callee of a Python frame without a source
// location ("<built-in function sleep>" → "sleep"), or "".
func builtinFrame(name string) string {
	rest, ok := strings.CutPrefix(name, "<built-in ")
	if !ok {
		return ""
	}
	rest = strings.TrimSuffix(rest, ">")
	for _, p := range []string{"function ", "method "} {
		if r, ok := strings.CutPrefix(rest, p); ok {
			rest = r
		}
	}
	if i := strings.Index(rest, " of "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// libraryCause names host work inside a library that explains a gap:
// PyTorch's DataLoader or torch.optim.
func libraryCause(file string) string {
	switch {
	case strings.Contains(file, "torch/utils/data/"):
		return CauseDataLoading
	case strings.Contains(file, "torch/optim/"):
		return CauseOptimizer
	}
	return ""
}

// hostActivity returns what the host was doing during gap (inside step):
// user Python functions, built-in calls (time.sleep: no file:line),
// DataLoader and torch.optim frames, record_function ranges (even longer
// than the gap: a user's "data" range around a slow loader), top-level
// ops and sync calls that overlap it most, at most two that do not
// overlap each other, each with its cause. Functions and ops much longer
// than the gap (the step function itself) do not name it.
func (ix *index) hostActivity(gap, step trace.Span, loop trace.Index) []hostCand {
	gc := &gapCands{gap: gap, step: step, loop: loop}
	ix.frameCands(gc)
	ix.rangeCands(gc, step)
	ix.opAndSyncCands(gc)
	gc.unrecordedCand()
	return pickCands(gc.cands)
}

// unrecordedCand considers the longest part of the gap in which the
// loop's thread ran nothing the profiler recorded (no op, API call, Python
// frame or range but the step's own; the candidate walks above marked
// what it did, cover): host work between ops, the Python that converts a
// .tolist() or builds a batch, which a trace without stacks shows as a
// hole. Named after the op before it, it keeps the gap from being
// credited to the op that merely ends it (the next step's first
// aten::linear, after a .tolist() of 1024 rows).
func (gc *gapCands) unrecordedCand() {
	if gc.loop == trace.None {
		return
	}
	hole := largestHole(gc.gap, interval.Union(gc.covered))
	if hole.Dur() == 0 {
		return
	}
	name := "host work with no op recorded"
	var before trace.Time
	for _, o := range gc.ends {
		if o.end <= hole.Start && o.end > before {
			before, name = o.end, "host work with no op recorded, after "+o.name
		}
	}
	gc.consider(name, CauseHostCode, hole, false)
}

// loopThread is the host thread that runs the step loop: the one that
// records the ProfilerStep ranges, else the one with the most top-level
// ops (the autograd engine's thread launches the backward's kernels, often
// more than the loop does, but runs no step); None without ops.
func (ix *index) loopThread() trace.Index {
	t := ix.t
	for i := range t.Annotations {
		if a := &t.Annotations[i]; !a.GPU && strings.HasPrefix(a.Name, "ProfilerStep#") {
			return a.Thread
		}
	}
	count := map[trace.Index]int{}
	best := trace.Index(trace.None)
	for i := range t.Ops {
		o := &t.Ops[i]
		if o.Parent != trace.None {
			continue
		}
		count[o.Thread]++
		if best == trace.None || count[o.Thread] > count[best] {
			best = o.Thread
		}
	}
	return best
}

// largestHole is the longest part of gap that the sorted, disjoint
// covered intervals leave out.
func largestHole(gap trace.Span, covered []trace.Span) trace.Span {
	var best trace.Span
	at := gap.Start
	for _, c := range append(covered, trace.Span{Start: gap.End, End: gap.End}) {
		if c.Start > at && c.Start-at > best.End-best.Start {
			best = trace.Span{Start: at, End: min(c.Start, gap.End)}
		}
		at = max(at, c.End)
	}
	return best
}

// gapCands collects the host intervals that may explain one GPU idle gap.
type gapCands struct {
	gap   trace.Span
	cands []hostCand
	// step and loop are the gap's step and the loop's thread; covered
	// holds the loop thread's recorded host work in the gap, ends the
	// loop thread's top-level ops in the step that end by the gap's end
	// (before the gap, only the last), for unrecordedCand.
	step    trace.Span
	loop    trace.Index
	covered []trace.Span
	ends    []opEnd
}

// opEnd is a top-level op's end and name.
type opEnd struct {
	end  trace.Time
	name string
}

// cover records s, on thread, as recorded host work in the gap when it
// is the loop's thread.
func (gc *gapCands) cover(s trace.Span, thread trace.Index) {
	if thread == gc.loop && gc.loop != trace.None && gc.overlaps(s) {
		covered := trace.Span{Start: max(s.Start, gc.gap.Start), End: min(s.End, gc.gap.End)}
		gc.covered = append(gc.covered, covered)
	}
}

// ended records a top-level op of the loop's thread that ended in the
// step by the gap's end: the op a hole in the gap comes after.
func (gc *gapCands) ended(o *trace.Op) {
	if o.Thread != gc.loop || gc.loop == trace.None || o.End <= gc.step.Start || o.End > gc.gap.End {
		return
	}
	if o.End < gc.gap.Start {
		// Before the gap only the latest counts.
		if len(gc.ends) > 0 && gc.ends[0].end < gc.gap.Start {
			if o.End > gc.ends[0].end {
				gc.ends[0] = opEnd{o.End, o.Name}
			}
			return
		}
		gc.ends = append([]opEnd{{o.End, o.Name}}, gc.ends...)
		return
	}
	gc.ends = append(gc.ends, opEnd{o.End, o.Name})
}

// consider keeps s, named name, as a candidate of cause when it covers at
// least a fifth of the gap and, unless anyLength, is at most 1.25× as long
// as the gap (a function around the whole step explains no gap).
func (gc *gapCands) consider(name, cause string, s trace.Span, anyLength bool) {
	gap := gc.gap
	lo, hi := max(gap.Start, s.Start), min(gap.End, s.End)
	if hi <= lo || 5*trace.Duration(hi-lo) < gap.Dur() || !anyLength && 4*s.Dur() > 5*gap.Dur() {
		return
	}
	gc.cands = append(gc.cands, hostCand{name, cause, s, trace.Duration(hi - lo)})
}

// overlaps reports whether s touches the gap.
func (gc *gapCands) overlaps(s trace.Span) bool {
	return s.End >= gc.gap.Start && s.Start <= gc.gap.End
}

// frameCands considers the Python frames around the gap: built-in calls,
// the user's functions, and library frames whose file names a cause.
func (ix *index) frameCands(gc *gapCands) {
	t := ix.t
	for i := range t.Frames {
		f := &t.Frames[i]
		if !gc.overlaps(f.Span) {
			continue
		}
		gc.cover(f.Span, f.Thread)
		file, line, fn, ok := f.Source()
		switch {
		case !ok:
			if b := builtinFrame(f.Name); b != "" {
				name := b + " (built-in, no source line)"
				if u := ix.userFrameOf(f.Parent); u != trace.None {
					name = fmt.Sprintf("%s (built-in) called from %s", b, t.Frames[u].Name)
				}
				gc.consider(name, CauseBuiltin, f.Span, false)
			}
		case !libraryFile(file):
			cause := CauseHostCode
			if dataName(fn) {
				cause = CauseDataLoading
			}
			gc.consider(fmt.Sprintf("%s() at %s:%d", fn, file, line), cause, f.Span, false)
		default:
			if c := libraryCause(file); c != "" {
				gc.consider(fmt.Sprintf("%s() in %s", fn, file[max(strings.LastIndex(file, "torch/"), 0):]), c, f.Span, true)
			}
		}
	}
}

// rangeCands considers the record_function ranges around the gap (not the
// step's own, nor torch.compile's).
func (ix *index) rangeCands(gc *gapCands, step trace.Span) {
	t := ix.t
	for i := range t.Annotations {
		a := &t.Annotations[i]
		if !gc.overlaps(a.Span) || marksStep(a.Name, step) || a.Span.Contains(step) {
			continue
		}
		if !a.GPU {
			gc.cover(a.Span, a.Thread)
		}
		if compileEvent(a.Name) {
			continue
		}
		cause := CauseRange
		switch {
		case optimizerRange(a.Name):
			cause = CauseOptimizer
		case dataName(a.Name):
			cause = CauseDataLoading
		case strings.HasPrefix(a.Name, "## Call CompiledFxGraph"):
			cause = CauseCompiled
		}
		gc.consider(a.Name, cause, a.Span, true)
	}
}

// opAndSyncCands considers the top-level ops and the sync calls around the
// gap.
func (ix *index) opAndSyncCands(gc *gapCands) {
	t := ix.t
	for i := range t.Ops {
		o := &t.Ops[i]
		if o.Parent == trace.None {
			gc.ended(o)
			// A child op lies in its parent, on its thread.
			gc.cover(o.Span, o.Thread)
		}
		if o.Parent == trace.None && gc.overlaps(o.Span) {
			// Top-level ops only: the call the user made, not its internals.
			cause := CauseHostCode
			switch {
			case compiledRegion(o.Name):
				cause = CauseCompiled
			case strings.Contains(o.Name, "pin_memory"):
				// Copying a batch into pinned memory on the training
				// thread is the loader's work done in the loop.
				cause = CauseDataLoading
			}
			gc.consider(o.Name, cause, o.Span, false)
		}
	}
	for i := range t.APICalls {
		c := &t.APICalls[i]
		gc.cover(c.Span, c.Thread)
		if gc.overlaps(c.Span) && IsSyncCall(c.Name) {
			gc.consider(c.Name, CauseSync, c.Span, false)
		}
	}
}

// pickCands picks the largest overlap; among near ties (within 10%) the
// shortest range, which names the specific call rather than the function
// around it. Then the next largest that does not overlap it.
func pickCands(cands []hostCand) []hostCand {
	var picked []hostCand
	for len(picked) < 2 {
		var best trace.Duration
		for _, c := range cands {
			if !clashes(c.span, picked) {
				best = max(best, c.overlap)
			}
		}
		if best == 0 {
			break
		}
		pick := -1
		for i, c := range cands {
			if clashes(c.span, picked) || 10*c.overlap < 9*best {
				continue
			}
			if pick < 0 || c.span.Dur() < cands[pick].span.Dur() {
				pick = i
			}
		}
		picked = append(picked, cands[pick])
	}
	return picked
}

// dominantCause returns the cause that explains the most idle time among
// the picked candidates of the listed gaps (CauseHostCode when none).
func dominantCause(picked [][]hostCand) string {
	by := map[string]trace.Duration{}
	for _, ps := range picked {
		for _, c := range ps {
			by[c.cause] += c.overlap
		}
	}
	best, bestD := CauseHostCode, trace.Duration(0)
	for _, c := range []string{CauseDataLoading, CauseOptimizer, CauseBuiltin, CauseSync, CauseCompiled, CauseRange, CauseHostCode} {
		if by[c] > bestD {
			best, bestD = c, by[c]
		}
	}
	return best
}

// idleFixes is gpu-idle's fix per cause of the gaps (%s: where the host
// was): each cause has its own remedy, and only data loading calls for
// DataLoader workers.
var idleFixes = map[string]string{
	CauseDataLoading: "the GPU waits for the next batch (%s): load and preprocess batches in a DataLoader with num_workers > 0 and pin_memory=True " +
		"(copies with non_blocking=True), and prefetch the next batch while the current step runs",
	CauseOptimizer: "the optimizer step runs on the host while the GPU waits (%s): use the fused implementation (e.g. torch.optim.AdamW(..., fused=True)), " +
		"or capture the step (torch.compile the optimizer step, or capturable=True under a CUDA graph) so it is one launch",
	CauseBuiltin: "the loop blocks in a built-in call (%s) with no work queued on the GPU: remove it from the step (a time.sleep, a blocking " +
		"queue get or file read), or move it to another thread or process",
	CauseSync: "the host waits for the GPU (%s) and then has nothing queued: drop mid-step .item()/.cpu()/torch.cuda.synchronize() " +
		"or defer them to every N steps, so the host runs ahead",
	CauseCompiled: "each call of the compiled function spends longer in its host wrapper (guards, Python, launches: %s) than the GPU " +
		"takes to run it: torch.compile(mode=\"reduce-overhead\") replays it as a CUDA graph; or give each call more work",
	CauseRange: "the host spends the gap in %s with no GPU work queued: overlap it with the GPU (issue the next step's work first, or run it " +
		"on another thread/process) or do it every N steps",
	CauseHostCode: "take the host work out of the GPU's critical path (%s): move per-step Python work (logging, metrics, .item()) out of the loop " +
		"or do it every N steps, and queue the next step's GPU work before it",
}

func idleFix(cause, where string) string {
	f, ok := idleFixes[cause]
	if !ok {
		f = idleFixes[CauseHostCode]
	}
	return fmt.Sprintf(f, where)
}

// listNames returns the distinct names of candidates with the given
// cause (any cause when ""), in first-seen order.
func listNames(picked [][]hostCand, cause string) []string {
	var places []string
	for _, ps := range picked {
		for _, c := range ps {
			if (cause == "" || c.cause == cause) && !slices.Contains(places, c.name) {
				places = append(places, c.name)
			}
		}
	}
	return places
}
