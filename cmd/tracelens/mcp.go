package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/distributed"
	"github.com/tracelens/tracelens/mcpserver"
	"github.com/tracelens/tracelens/report"
	"github.com/tracelens/tracelens/trace"
)

const mcpArgs = "[--max-memory SIZE]"

func mcpCommand() command {
	return command{name: "mcp", args: mcpArgs, summary: "serve the analysis to AI assistants: a Model Context Protocol server on standard input and output", run: runMCP,
		examples: []string{
			"tracelens mcp",
			"claude mcp add --transport stdio tracelens -- tracelens mcp --max-memory 8GB",
		}}
}

// runMCP serves the MCP tools over standard input and output until the
// client closes the connection (or an interrupt). Nothing else may write
// to standard output: it carries the protocol.
func runMCP(e *env, args []string) error {
	fs := newFlags("mcp")
	pos, err := parseFlags(e, fs, mcpArgs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"mcp takes no arguments: the client names traces in its tool calls"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	t := &mcp.IOTransport{Reader: io.NopCloser(e.stdin), Writer: nopWriteCloser{e.stdout}}
	if err := newMCPServer(e).Run(ctx, t); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp server: %w", err)
	}
	return nil
}

// nopWriteCloser is standard output as the transport's writer: closing
// the session leaves it open.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// newMCPServer is the MCP server with the CLI's loading and analysis:
// loadTrace (with --max-memory and --step-range) and analyzeTrace with
// every analyzer, and loadRunAnalysis for a run directory, exactly as the
// findings and report commands read them.
func newMCPServer(e *env) *mcp.Server {
	quiet := quietEnv(e) // no progress bars between protocol messages
	return mcpserver.New(mcpserver.Options{
		Version: version(),
		LoadTrace: func(path string) (*trace.Trace, error) {
			return loadTrace(quiet, path)
		},
		Analyze: func(t *trace.Trace) (*analyze.Result, error) {
			return analyzeTrace(t, quiet.cfg)
		},
		LoadRun: func(dir string) (*mcpserver.RunAnalysis, error) {
			if !distributed.IsRun([]string{dir}) {
				return nil, fmt.Errorf("%s holds no rank traces", dir)
			}
			ra, err := loadRunAnalysis(quiet, []string{dir}, &quiet.run, quiet.cfg)
			if err != nil {
				return nil, err
			}
			in := report.Input{Trace: ra.t, Result: ra.r, Run: ra.res, Rank: ra.rank.Rank, RunName: ra.name}
			return &mcpserver.RunAnalysis{Input: in, Describe: ra.run.Describe()}, nil
		},
	})
}
