package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// unitElem is one element of a host thread's top-level sequence: a
// record_function range, a user function's call or a jitted function's
// call that launched GPU work.
type unitElem struct {
	key  string // what makes two elements the same thing: the name
	span trace.Span
}

// loopFit is where a sequence repeats: period elements per iteration,
// reps full iterations from element start on.
type loopFit struct {
	start, period, reps int
	// host is the host time the full iterations cover, first start to
	// last end.
	host trace.Duration
}

// better reports whether f describes the loop better than g: more
// elements in full iterations, then more host time, then the shorter
// period (A A A A is A four times, not A A twice), then the earlier start.
func (f loopFit) better(g loopFit) bool {
	if c := cmp.Compare(f.reps*f.period, g.reps*g.period); c != 0 {
		return c > 0
	}
	if f.host != g.host {
		return f.host > g.host
	}
	if f.period != g.period {
		return f.period < g.period
	}
	return f.start < g.start
}

// maxPeriodKeys bounds the keys whose occurrence gaps propose periods,
// and maxPeriodStride how many consecutive occurrences one gap spans: a
// name that occurs up to maxPeriodStride times per iteration proposes the
// period (the sum of as many gaps).
const (
	maxPeriodKeys   = 8
	maxPeriodStride = 3
)

// findLoop returns the outermost repeated iteration of seq (in time
// order): the period p and start of the longest stretch where seq[i] ==
// seq[i+p] that holds at least MinDerivedSteps full iterations (setup
// before the loop and work after it are left out). Periods tried: 1 and,
// for the maxPeriodKeys rarest repeated keys, the commonest distance
// between an occurrence and the next 1…maxPeriodStride ones; each is
// checked in one pass, so the search is linear in len(seq).
func findLoop(seq []unitElem) (loopFit, bool) {
	n := len(seq)
	ids := make([]int, n)
	pos := map[string][]int{}
	id := map[string]int{}
	var keys []string
	for i, e := range seq {
		v, ok := id[e.key]
		if !ok {
			v = len(keys)
			id[e.key] = v
			keys = append(keys, e.key)
		}
		ids[i] = v
		pos[e.key] = append(pos[e.key], i)
	}
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(len(pos[a]), len(pos[b])) })
	periods := []int{1}
	tried := 0
	for _, k := range keys {
		p := pos[k]
		if len(p) < 2 || tried == maxPeriodKeys {
			continue
		}
		tried++
		for stride := 1; stride <= maxPeriodStride && stride < len(p); stride++ {
			count := map[int]int{}
			best := 0
			for j := 0; j+stride < len(p); j++ {
				d := p[j+stride] - p[j]
				count[d]++
				if count[d] > count[best] || count[d] == count[best] && d < best {
					best = d
				}
			}
			if best > 0 && !slices.Contains(periods, best) {
				periods = append(periods, best)
			}
		}
	}
	var fit loopFit
	found := false
	for _, p := range periods {
		if f, ok := loopWithPeriod(seq, ids, p); ok && (!found || f.better(fit)) {
			fit, found = f, true
		}
	}
	return fit, found
}

// loopWithPeriod returns the best stretch of seq repeating with period p
// for MinDerivedSteps full iterations or more.
func loopWithPeriod(seq []unitElem, ids []int, p int) (loopFit, bool) {
	var fit loopFit
	found := false
	n := len(seq)
	for a := 0; a+p < n; {
		if ids[a] != ids[a+p] {
			a++
			continue
		}
		b := a
		for b+p < n && ids[b] == ids[b+p] {
			b++
		}
		// seq[a:b+p] repeats with period p.
		if reps := (b - a + p) / p; reps >= MinDerivedSteps {
			last := a + reps*p - 1
			f := loopFit{start: a, period: p, reps: reps, host: trace.Duration(seq[last].span.End - seq[a].span.Start)}
			if !found || f.better(fit) {
				fit, found = f, true
			}
		}
		a = b + 1
	}
	return fit, found
}

// loopSpans returns the iterations of fit as host spans: each from its
// first element's start to the next iteration's, the last to its last
// element's end. Consecutive spans share an end and a start: they never
// overlap.
func loopSpans(seq []unitElem, fit loopFit) []trace.Span {
	spans := make([]trace.Span, fit.reps)
	for k := range spans {
		i := fit.start + k*fit.period
		s := trace.Span{Start: seq[i].span.Start}
		if k+1 < fit.reps {
			s.End = seq[i+fit.period].span.Start
		} else {
			for _, e := range seq[i : i+fit.period] {
				s.End = max(s.End, e.span.End)
			}
		}
		spans[k] = s
	}
	return spans
}

// loopLabel names an iteration by its elements, runs of one name counted:
// "block ×4 + loss"; one element keeps its name.
func loopLabel(unit []unitElem, label func(unitElem) string) string {
	var parts []string
	for i := 0; i < len(unit); {
		j := i
		for j < len(unit) && unit[j].key == unit[i].key {
			j++
		}
		part := label(unit[i])
		if j-i > 1 {
			part += fmt.Sprintf(" ×%d", j-i)
		}
		parts = append(parts, part)
		i = j
	}
	return strings.Join(parts, " + ")
}

// minCounted is how many elements a trailing counter must number before
// it is taken for an iteration index.
const minCounted = 3

// counterKeys returns seq with each name that ends in an iteration
// counter keyed by its stem: a stem whose names in time order carry the
// numbers k, k+1, k+2, … (minCounted or more, each once) is one thing
// called repeatedly and labelled by the user with its call's index
// ("sim_call_0", "sim_call_1", …). Names that differ otherwise stay
// apart: "stage1" then "stage2" are two things, and so are
// "run_float64" and "run_float32". ok is false when no stem qualifies.
func counterKeys(seq []unitElem) ([]unitElem, bool) {
	type run struct {
		next, count int
		broken      bool
	}
	stems := map[string]*run{}
	split := func(name string) (string, int, bool) {
		stem := strings.TrimRight(name, "0123456789")
		if stem == name || stem == "" || len(name)-len(stem) > 9 {
			return "", 0, false
		}
		n, err := strconv.Atoi(name[len(stem):])
		return stem, n, err == nil
	}
	for _, e := range seq {
		stem, n, ok := split(e.key)
		if !ok {
			continue
		}
		r := stems[stem]
		switch {
		case r == nil:
			stems[stem] = &run{next: n + 1, count: 1}
		case n == r.next:
			r.next, r.count = n+1, r.count+1
		default:
			r.broken = true
		}
	}
	out := make([]unitElem, len(seq))
	changed := false
	for i, e := range seq {
		out[i] = e
		if stem, _, ok := split(e.key); ok {
			if r := stems[stem]; !r.broken && r.count >= minCounted {
				out[i].key, changed = stem+"*", true
			}
		}
	}
	return out, changed
}

// loopByThread returns the iterations of the best loop over the threads'
// sequences, and its label: exact names first, iteration counters
// dropped (counterKeys) only where no thread repeats one exactly.
func loopByThread(seqs map[trace.Index][]unitElem, label func(unitElem) string) ([]trace.Span, string) {
	for _, counted := range []bool{false, true} {
		var best loopFit
		var bestSeq []unitElem
		found := false
		ths := make([]trace.Index, 0, len(seqs))
		for th := range seqs {
			ths = append(ths, th)
		}
		slices.Sort(ths)
		for _, th := range ths {
			seq := seqs[th]
			if counted {
				var ok bool
				if seq, ok = counterKeys(seq); !ok {
					continue
				}
			}
			if f, ok := findLoop(seq); ok && (!found || f.better(best)) {
				best, bestSeq, found = f, seq, true
			}
		}
		if found {
			unit := bestSeq[best.start : best.start+best.period]
			return loopSpans(bestSeq, best), loopLabel(unit, label)
		}
	}
	return nil, ""
}
