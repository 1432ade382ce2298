package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tracelens/tracelens/mcpserver"
)

// mcpSession runs `tracelens mcp ARGS` in process on pipes and connects
// the SDK's client to it; closing the session ends the command, whose
// exit status and standard error it returns.
func mcpSession(t *testing.T, args ...string) (cs *mcp.ClientSession, wait func() (int, string)) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := runMain(&env{stdin: inR, stdout: outW, stderr: &stderr}, append([]string{"mcp"}, args...))
		outW.Close()
		done <- code
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connecting to tracelens mcp: %v (stderr %s)", err, stderr.String())
	}
	return cs, func() (int, string) {
		cs.Close()
		return <-done, stderr.String()
	}
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// The command serves every tool on the CLI's own pipeline: the findings
// tool ranks what `findings --format json` ranks, and the run tool reads
// a run directory as `findings DIR` does.
func TestMCPCommandServesTheCLIAnalysis(t *testing.T) {
	cs, wait := mcpSession(t)
	path := fixture("eggroll_hooks.json.gz")
	res := mcpCall(t, cs, "findings", map[string]any{"trace": path, "limit": 50})
	if res.IsError {
		t.Fatalf("findings: %s", resultText(res))
	}
	var got mcpserver.FindingsResult
	if err := json.Unmarshal([]byte(resultText(res)), &got); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := runMain(&env{stdout: &out, stderr: &errOut}, []string{"findings", "--format", "json", path}); code != 0 {
		t.Fatalf("findings: exit %d: %s", code, errOut.String())
	}
	var want struct {
		Findings []struct {
			ID       string  `json:"id"`
			SavingUs float64 `json:"saving_us"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &want); err != nil {
		t.Fatal(err)
	}
	if len(got.Findings) != len(want.Findings) || len(want.Findings) == 0 {
		t.Fatalf("mcp findings %d, CLI findings %d", len(got.Findings), len(want.Findings))
	}
	for i := range want.Findings {
		if got.Findings[i].ID != want.Findings[i].ID || got.Findings[i].SavingUs != want.Findings[i].SavingUs {
			t.Errorf("finding %d: mcp %s %v, CLI %s %v", i+1, got.Findings[i].ID, got.Findings[i].SavingUs, want.Findings[i].ID, want.Findings[i].SavingUs)
		}
	}
	res = mcpCall(t, cs, "run", map[string]any{"run": fixture("runs/ddp_compute_straggler")})
	if res.IsError {
		t.Fatalf("run: %s", resultText(res))
	}
	var run mcpserver.RunResult
	if err := json.Unmarshal([]byte(resultText(res)), &run); err != nil {
		t.Fatal(err)
	}
	if run.Run != "ddp_compute_straggler" || run.WorldSize != 2 || len(run.Findings) == 0 || len(run.Findings[0].Ranks) == 0 {
		t.Errorf("run: %+v", run)
	}
	res = mcpCall(t, cs, "report", map[string]any{"traces": []string{fixture("runs/ddp_compute_straggler")}, "max_bytes": 1 << 20})
	if res.IsError || !strings.Contains(resultText(res), "ddp_compute_straggler") {
		t.Errorf("report of a run: %.300s", resultText(res))
	}
	if code, stderr := wait(); code != 0 {
		t.Errorf("mcp exited %d: %s", code, stderr)
	}
}

// --max-memory applies to every trace a tool reads: a budget too small
// is a tool error that says how to raise it, and the server goes on.
func TestMCPCommandKeepsTheMemoryBudget(t *testing.T) {
	cs, wait := mcpSession(t, "--max-memory", "100KB")
	res := mcpCall(t, cs, "info", map[string]any{"trace": fixture("nanobragg_compile.json.gz")})
	if !res.IsError || !strings.Contains(resultText(res), "--max-memory") {
		t.Errorf("info under a 100KB budget: error %v, %q", res.IsError, resultText(res))
	}
	res = mcpCall(t, cs, "info", map[string]any{"trace": "embedded:eggroll_hooks.json.gz"})
	if res.IsError {
		t.Errorf("after a refused trace, an embedded one: %s", resultText(res))
	}
	if code, stderr := wait(); code != 0 {
		t.Errorf("mcp exited %d: %s", code, stderr)
	}
}

func TestMCPCommandRefusesArguments(t *testing.T) {
	var out, errOut bytes.Buffer
	code := runMain(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}, []string{"mcp", "trace.json"})
	if code != exitUsageOrBad || !strings.Contains(errOut.String(), "mcp takes no arguments") {
		t.Errorf("mcp trace.json: exit %d, %q", code, errOut.String())
	}
}
