package analyze

import (
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// CompileRegions finds torch.compile's own work: Dynamo and Inductor ops
// and ranges (see compileEvent).
var CompileRegions = &Analyzer{
	Name:     "compile-regions",
	Doc:      "Finds the spans of torch.compile's own work (Dynamo tracing, Inductor lowering and code generation, guards, caches): ops and record_function ranges.",
	Requires: []*Analyzer{HostTable},
	Fact: func(p *Pass) (any, error) {
		t := p.Trace
		host, err := hostTableOf(p)
		if err != nil {
			return nil, err
		}
		// The ops' name column, not the ops: compile ops are few.
		var spans []trace.Span
		isCompile := byName(&host.ops, compileEvent)
		for i, n := range host.ops.name {
			if isCompile[n] {
				spans = append(spans, t.Ops[i].Span)
			}
		}
		for i := range t.Annotations {
			if compileEvent(t.Annotations[i].Name) {
				spans = append(spans, t.Annotations[i].Span)
			}
		}
		return &CompileFacts{spans: spans}, nil
	},
}

// CompileFacts is the result of CompileRegions.
type CompileFacts struct {
	spans []trace.Span
}

// Spans returns torch.compile's spans, in trace order (they may overlap).
func (c *CompileFacts) Spans() []trace.Span { return slices.Clone(c.spans) }

// compileEvent reports whether a range is torch.compile's own work.
func compileEvent(name string) bool {
	if strings.HasSuffix(name, "(dynamo_timed)") || name == "dynamo" || strings.HasPrefix(name, "compile_attempt_") {
		// "dynamo" is the outermost range of a compilation in recent
		// PyTorch releases.
		return true
	}
	for _, p := range []string{"backend_compile", "_compile.compile_inner", "entire_frame_compile", "OutputGraph.call_user_compiler",
		"GraphLowering.", "async_compile.", "build_guards", "AOTAutogradCache.", "compile_fx", "inductor_compile", "Scheduler.codegen",
		"create_aot_dispatcher_function", "bytecode_tracing", "CachingAutotuner.benchmark_all_configs"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// compiledRegion reports whether an op is torch.compile's runtime wrapper
// or its compilation.
func compiledRegion(op string) bool {
	return strings.HasPrefix(op, "Torch-Compiled Region") || strings.HasPrefix(op, "CompiledFunction") || compileEvent(op)
}

// compileSpans returns the torch.compile ranges of the trace (the
// CompileRegions fact).
func (p *Pass) compileSpans() []trace.Span { return p.ix.CompileFacts.Spans() }

// graphLaunched reports whether GPU activity g came from a CUDA graph
// launch.
func graphLaunched(t *trace.Trace, g int) bool {
	l := t.GPU[g].Launch
	return l != trace.None && strings.Contains(t.APICalls[l].Name, "GraphLaunch")
}

// compiledOpName reports whether an op named n is torch.compile's: a
// compiled region, or Inductor's autotuner timing candidate kernels (and
// flushing the cache between runs) while it compiles, compile-overhead's
// business, not the program's.
func compiledOpName(n string) bool {
	return strings.HasPrefix(n, "Torch-Compiled Region") || strings.Contains(n, "CompiledFunction") ||
		strings.Contains(n, "CachingAutotuner") || strings.Contains(n, "benchmark_all_configs")
}
