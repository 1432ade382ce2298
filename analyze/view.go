package analyze

import "github.com/tracelens/tracelens/trace"

// View is a read-only view of the facts Run computed, per GPU activity
// and per device, for the faces (export, tui, report, diff) to read
// instead of deriving them again: which step an activity belongs to, its
// category, the op that launched it, the user's source line above the
// launch, whether torch.compile's autotuner made it, and where each
// device was busy. It shares the facts' storage (no copy of the trace or
// of a per-activity table) and is safe for concurrent reads.
type View struct {
	t     *trace.Trace
	steps *StepFacts
	cats  *CategoryFacts
	attr  *AttributionFacts
	busy  *BusyFacts
	// autotune is PhaseFacts' autotune marks (nil when none).
	autotune []bool
}

// newView returns the view of the facts in ix over t (the trace Run
// analyzed, with its steps).
func newView(t *trace.Trace, ix *index) *View {
	v := &View{t: t, steps: ix.StepFacts, cats: ix.CategoryFacts, attr: ix.AttributionFacts, busy: ix.BusyFacts}
	if ix.PhaseFacts != nil {
		v.autotune = ix.PhaseFacts.autotune
	}
	return v
}

// View returns the view of the facts behind r, or nil when r was not
// made by Run (a Result decoded from JSON, or built by hand).
func (r *Result) View() *View { return r.view }

// Trace returns the trace Run analyzed: the one it was given, or a
// shallow copy with the steps Run derived (WithSteps). Activity indexes
// of the view's methods are indexes into its GPU.
func (v *View) Trace() *trace.Trace { return v.t }

// StepOf returns the index in Trace().Steps of GPU activity g's step, or
// -1 when it is in none: the step its launch call started in (Steps).
func (v *View) StepOf(g int) int { return v.steps.OfGPU(g) }

// StepNumber returns the number (trace.Step.Number) of GPU activity g's
// step and true, or false when it is in none.
func (v *View) StepNumber(g int) (int, bool) {
	i := v.steps.OfGPU(g)
	if i < 0 {
		return 0, false
	}
	return v.t.Steps[i].Number, true
}

// APIStepOf returns the index of API call i's step, or -1.
func (v *View) APIStepOf(i int) int { return v.steps.OfAPI(i) }

// Category returns GPU activity g's kernel category (KernelCategories).
func (v *View) Category(g int) string { return v.cats.Of(g) }

// Op returns the framework op that launched GPU activity g, or
// trace.None (Attribution).
func (v *View) Op(g int) trace.Index { return v.attr.Op(g) }

// UserLine returns the user's source line ("model.py(42): forward")
// above GPU activity g's launch, library frames skipped, or "".
func (v *View) UserLine(g int) string { return v.attr.UserLine(g) }

// Autotune reports whether torch.compile's autotuner or compiler
// launched GPU activity g (AutotuneLaunches) rather than the workload.
func (v *View) Autotune(g int) bool {
	return v.autotune != nil && v.autotune[g]
}

// Devices returns the ids of the devices with GPU activity, ascending.
func (v *View) Devices() []int32 { return v.busy.Devices() }

// BusyIn returns the GPU busy time of all devices inside [from, to): the
// union of their kernels, memcpys and memsets (IdleGaps).
func (v *View) BusyIn(from, to trace.Time) trace.Duration { return v.busy.BusyIn(from, to) }

// IdleGaps returns the intervals inside [from, to) where device dev ran
// nothing, leading and trailing ones included.
func (v *View) IdleGaps(dev int32, from, to trace.Time) []trace.Span {
	return v.busy.IdleGaps(dev, from, to)
}

// Place is a span of the trace's timeline that a finding's evidence
// points at: an idle gap, a chain of kernels. Device and Stream name the
// GPU stream it is on, -1 when it is on none (a gap of every stream).
type Place struct {
	Span           trace.Span
	Device, Stream int32
	// What says in a few words what the place is ("the gap").
	What string
}

// Place returns the place on the timeline the evidence as a whole points
// at (the first occurrence of a fusion chain's kernels, back to back), and
// whether it points at one. It is known only for evidence Run made (not
// for a Result decoded from JSON).
func (e *Evidence) Place() (Place, bool) {
	if e.place == nil {
		return Place{}, false
	}
	return *e.place, true
}

// RowPlace returns the place row i of the evidence's table points at (a
// gpu-idle gap), and whether it points at one.
func (e *Evidence) RowPlace(i int) (Place, bool) {
	if i < 0 || i >= len(e.rowPlaces) || e.rowPlaces[i].Span.End <= e.rowPlaces[i].Span.Start {
		return Place{}, false
	}
	return e.rowPlaces[i], true
}
