package mcpserver

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/ingest"
	"github.com/tracelens/tracelens/trace"
)

func fixture(name string) string { return filepath.Join("..", "fixtures", name) }

// connect starts the server with a loader that reads files as ingest does
// and returns a client session over in-memory transports.
func connect(t *testing.T, opt Options) *mcp.ClientSession {
	t.Helper()
	if opt.LoadTrace == nil {
		opt.LoadTrace = func(path string) (*trace.Trace, error) { return ingest.ReadFile(path, ingest.Options{}) }
		opt.Analyze = func(tr *trace.Trace) (*analyze.Result, error) { return analyze.Run(tr, analyze.Config{}) }
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := New(opt).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// call calls a tool that must succeed and decodes its structured result
// into out.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error: %s", tool, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: result does not decode: %v\n%s", tool, err, b)
	}
}

// toolError calls a tool that must fail as a tool (IsError, not a
// protocol error) and returns its message.
func toolError(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error instead of a tool error: %v", tool, args, err)
	}
	if !res.IsError {
		t.Fatalf("%s %v: succeeded, want a tool error", tool, args)
	}
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestListToolsHasSchemas(t *testing.T) {
	cs := connect(t, Options{})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("tool %s lacks a description or a schema", tool.Name)
		}
	}
	slices.Sort(names)
	want := []string{"diff", "finding", "findings", "info", "kernel", "ledger", "report", "run", "top"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func TestToolsOnAFixture(t *testing.T) {
	cs := connect(t, Options{})
	path := fixture("eggroll_hooks.json.gz")
	var info InfoResult
	call(t, cs, "info", map[string]any{"trace": path}, &info)
	if info.Format != "kineto" || info.KernelLaunches == 0 || info.Findings == 0 || !strings.Contains(info.Headline, "GPU busy") {
		t.Errorf("info: %+v", info)
	}
	var top TopResult
	call(t, cs, "top", map[string]any{"trace": path, "limit": 3, "sort": "count"}, &top)
	if len(top.Kernels) != 3 || !top.Truncated || top.Matched != top.DistinctKernels {
		t.Fatalf("top: %d kernels, truncated %v, matched %d of %d", len(top.Kernels), top.Truncated, top.Matched, top.DistinctKernels)
	}
	for i := 1; i < len(top.Kernels); i++ {
		if top.Kernels[i].Count > top.Kernels[i-1].Count {
			t.Errorf("top --sort count out of order: %+v", top.Kernels)
		}
	}
	var filtered TopResult
	call(t, cs, "top", map[string]any{"trace": path, "filter": "(?i)gemm"}, &filtered)
	for _, k := range filtered.Kernels {
		if !strings.Contains(strings.ToLower(k.Name), "gemm") {
			t.Errorf("filter gemm kept %q", k.Name)
		}
	}
	if filtered.Matched == 0 || filtered.Matched >= top.DistinctKernels {
		t.Errorf("filter gemm matched %d of %d kernels", filtered.Matched, top.DistinctKernels)
	}
	var fs FindingsResult
	call(t, cs, "findings", map[string]any{"trace": path, "limit": 1}, &fs)
	if len(fs.Findings) != 1 || fs.Total < 2 || !fs.Truncated || fs.Findings[0].Number != 1 || fs.Findings[0].Fix == "" {
		t.Fatalf("findings: %+v", fs)
	}
	var f FindingDetail
	call(t, cs, "finding", map[string]any{"trace": path, "id": fs.Findings[0].ID}, &f)
	if f.Number != 1 || f.Title != fs.Findings[0].Title || len(f.Evidence) == 0 {
		t.Errorf("finding %s: %+v", fs.Findings[0].ID, f)
	}
	var k KernelDetail
	call(t, cs, "kernel", map[string]any{"trace": path, "name": top.Kernels[0].Name, "steps": 2}, &k)
	if k.Name != top.Kernels[0].Name || k.Count != top.Kernels[0].Count || len(k.PerStep) > 2 {
		t.Errorf("kernel: %+v", k)
	}
	var l LedgerResult
	call(t, cs, "ledger", map[string]any{"trace": path}, &l)
	sum := 0.0
	for _, line := range l.Steady {
		sum += line.Us
	}
	if len(l.Steady) == 0 || l.StepsTotal == 0 || sum < l.SteadyStepUs*0.99 || sum > l.SteadyStepUs*1.01 {
		t.Errorf("ledger lines add up to %v, the steady step is %v: %+v", sum, l.SteadyStepUs, l)
	}
}

func TestReportAndDiffAreBounded(t *testing.T) {
	cs := connect(t, Options{})
	path := fixture("eggroll_hooks.json.gz")
	var md TextResult
	call(t, cs, "report", map[string]any{"traces": []string{path}, "max_bytes": 2000}, &md)
	if !md.Truncated || len(md.Text) > 2000 || md.Bytes <= 2000 || !strings.HasPrefix(md.Text, "#") || md.Note == "" {
		t.Errorf("markdown report cut at 2000 bytes: truncated %v, %d of %d bytes, note %q", md.Truncated, len(md.Text), md.Bytes, md.Note)
	}
	var js TextResult
	call(t, cs, "report", map[string]any{"traces": []string{path}, "format": "json", "max_bytes": maxBytes}, &js)
	var r analyze.Result
	if js.Truncated || json.Unmarshal([]byte(js.Text), &r) != nil || len(r.Findings) == 0 {
		t.Errorf("json report: truncated %v, %d bytes, does not decode to a Result with findings", js.Truncated, js.Bytes)
	}
	var d DiffResult
	call(t, cs, "diff", map[string]any{"base": fixture("recorded/pairs/graph_small_base.json.gz"), "new": fixture("recorded/pairs/graph_small_new.json.gz")}, &d)
	if len(d.Metrics) == 0 || d.Document.Text == "" || d.Metrics[0].BaseMedian == 0 {
		t.Errorf("diff: %+v", d)
	}
}

func TestBadArgumentsAreToolErrors(t *testing.T) {
	cs := connect(t, Options{})
	path := fixture("eggroll_hooks.json.gz")
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"info", map[string]any{"trace": "no/such/trace.json"}, "no such file"},
		{"info", map[string]any{"trace": ""}, "path is required"},
		{"info", map[string]any{"trace": "-"}, "standard input"},
		{"findings", map[string]any{"trace": fixture("runs")}, "is a directory"},
		{"info", map[string]any{"trace": fixture("fixtures.go")}, ""},
		{"top", map[string]any{"trace": path, "limit": 1000}, "between 1 and 200"},
		{"top", map[string]any{"trace": path, "sort": "speed"}, "unknown sort"},
		{"top", map[string]any{"trace": path, "filter": "("}, "bad filter"},
		{"finding", map[string]any{"trace": path}, "id or number"},
		{"finding", map[string]any{"trace": path, "id": "no-such-analyzer"}, "no finding"},
		{"finding", map[string]any{"trace": path, "number": 999}, "no finding number 999"},
		{"kernel", map[string]any{"trace": path, "name": "no_such_kernel_xyz"}, "no kernel"},
		{"kernel", map[string]any{"trace": path, "name": "_"}, "matches"},
		{"report", map[string]any{"traces": []string{path}, "format": "pdf"}, "unknown format"},
		{"report", map[string]any{"traces": []string{}}, "traces is required"},
		{"diff", map[string]any{"base": path, "new": "missing.json"}, "new: "},
		{"diff", map[string]any{"base": path, "new": path, "alpha": 2}, "alpha"},
		{"run", map[string]any{"run": path}, "is a file"},
		{"run", map[string]any{"run": fixture("runs/multirank_ddp")}, "reads no runs"},
		{"ledger", map[string]any{"trace": path, "steps": -1}, "between 1 and 500"},
		{"top", map[string]any{}, ""},
	}
	for _, c := range cases {
		msg := toolError(t, cs, c.tool, c.args)
		if len(msg) > 2000 {
			t.Errorf("%s %v: a %d-byte error", c.tool, c.args, len(msg))
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s %v: error %q, want it to say %q", c.tool, c.args, msg, c.want)
		}
	}
}

// The cache serves a second question from the analysis it made, and
// reads the file again when it changed.
func TestLoadCachesAnalyses(t *testing.T) {
	reads := 0
	cs := connect(t, Options{
		LoadTrace: func(path string) (*trace.Trace, error) {
			reads++
			return ingest.ReadFile(path, ingest.Options{})
		},
		Analyze: func(tr *trace.Trace) (*analyze.Result, error) { return analyze.Run(tr, analyze.Config{}) },
	})
	a, b, c := fixture("recorded/sincos_eager.json.gz"), fixture("triton_fused_matmul.json.gz"), fixture("recorded/sincos_compile_cold.json.gz")
	var info InfoResult
	for _, p := range []string{a, a, b, a, c, a} {
		call(t, cs, "info", map[string]any{"trace": p}, &info)
	}
	// a, b, (a cached), c evicts b, (a cached).
	if reads != 3 {
		t.Errorf("read %d traces, want 3 (the cache keeps the last %d)", reads, cacheSize)
	}
}
