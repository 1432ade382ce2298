// Package mcpserver serves tracelens's analysis of GPU profiler traces to
// AI assistants as the tools of a Model Context Protocol server (info,
// top, findings, finding, kernel, ledger, report, diff, run), built on the
// official Go SDK. It does not read or analyze traces itself: the caller
// hands it the CLI's own loading and analysis (Options), so an assistant
// sees exactly the figures the commands print. Every tool takes typed
// arguments (their JSON schemas come from the input structs), answers
// with a typed JSON result whose size is bounded (a limit with a maximum,
// truncation said in the result), and turns bad arguments into tool
// errors the assistant can read and correct.
package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/report"
	"github.com/tracelens/tracelens/trace"
)

// Options are what the server needs from its caller: the CLI's loading
// and analysis, so that the tools and the commands agree.
type Options struct {
	// Version is the server's version, as `tracelens version` says it.
	Version string
	// LoadTrace reads the trace at path (a file, or embedded:NAME) with
	// the CLI's memory budget.
	LoadTrace func(path string) (*trace.Trace, error)
	// Analyze runs every analyzer over a trace LoadTrace read.
	Analyze func(t *trace.Trace) (*analyze.Result, error)
	// LoadRun reads the rank traces of a run directory as one analysis:
	// the run's cross-rank findings ranked with the described rank's own.
	LoadRun func(dir string) (*RunAnalysis, error)
}

// RunAnalysis is a run read as one analysis: the report's input for it
// (the described rank's trace and analysis, the run's analysis) and the
// run described in words.
type RunAnalysis struct {
	report.Input
	// Describe says what the run is ("2 ranks, DDP, world size 2").
	Describe string
}

// analysis is one trace read and analyzed.
type analysis struct {
	t *trace.Trace
	r *analyze.Result
}

// cacheSize is how many analyses the server keeps: an assistant asks
// several questions of the trace it is reading, and diff needs two.
const cacheSize = 2

// cached is one analysis and the file state it was made from.
type cached struct {
	path string
	size int64
	mod  time.Time
	a    *analysis
}

// server holds the options and the analyses recently made. Loading is
// serialized: one trace is read at a time, so the memory budget the CLI
// applies to one trace holds for the server too.
type server struct {
	opt   Options
	mu    sync.Mutex
	cache []cached
}

// New returns the MCP server with every tracelens tool registered. Run it
// on a transport (mcp.StdioTransport for `tracelens mcp`).
func New(opt Options) *mcp.Server {
	s := &server{opt: opt}
	srv := mcp.NewServer(&mcp.Implementation{Name: "tracelens", Title: "tracelens: GPU profiler trace analysis", Version: opt.Version}, &mcp.ServerOptions{
		Instructions: "Tools that read GPU profiler traces (torch.profiler/Kineto JSON, JAX/Perfetto JSON, Nsight Systems SQLite; .gz too) " +
			"and say where the time goes and what to fix. Start with info or findings on a trace path, then finding, kernel or ledger for detail; " +
			"run reads a directory of rank traces; diff compares two traces. Paths are files on the server's machine " +
			"(relative to its working directory), or embedded:NAME for the sample traces built in.",
	})
	s.register(srv)
	return srv
}

// load returns the analysis of the trace at path, from the cache when
// the file has not changed since it was read.
func (s *server) load(path string) (*analysis, error) {
	p, err := checkTracePath(path)
	if err != nil {
		return nil, err
	}
	var size int64
	var mod time.Time
	if st, err := os.Stat(p); err == nil {
		size, mod = st.Size(), st.ModTime()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, c := range s.cache {
		if c.path == p && c.size == size && c.mod.Equal(mod) {
			s.cache = append(append([]cached{c}, s.cache[:i]...), s.cache[i+1:]...)
			return c.a, nil
		}
	}
	t, err := s.opt.LoadTrace(p)
	if err != nil {
		return nil, err
	}
	r, err := s.opt.Analyze(t)
	if err != nil {
		return nil, fmt.Errorf("analyzing %s: %w", path, err)
	}
	a := &analysis{t: t, r: r}
	s.cache = append([]cached{{path: p, size: size, mod: mod, a: a}}, s.cache...)
	s.cache = s.cache[:min(len(s.cache), cacheSize)]
	return a, nil
}

// embeddedPrefix names a trace compiled into the binary, as the CLI
// takes it.
const embeddedPrefix = "embedded:"

// checkTracePath validates a path naming one trace: given, not standard
// input (the protocol's channel), an existing file and not a directory.
// It returns the path to read: embedded:NAME as given, a file's path
// absolute.
func checkTracePath(path string) (string, error) {
	if strings.HasPrefix(path, embeddedPrefix) {
		return path, nil
	}
	p, st, err := statPath(path)
	if err != nil {
		return "", err
	}
	if st.IsDir() {
		return "", fmt.Errorf("%s is a directory: give one trace file, or use the run tool for a directory of rank traces", path)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	return p, nil
}

// checkRunPath validates a path naming a run: an existing directory.
func checkRunPath(path string) (string, error) {
	p, st, err := statPath(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is a file: run takes a directory holding one trace per rank (use findings for one trace)", path)
	}
	return p, nil
}

// statPath checks what every path argument must be and returns it
// absolute with its file information.
func statPath(path string) (string, os.FileInfo, error) {
	switch strings.TrimSpace(path) {
	case "":
		return "", nil, fmt.Errorf("a path is required")
	case "-":
		return "", nil, fmt.Errorf("standard input (-) carries the protocol here: give a file path")
	}
	p, err := filepath.Abs(path)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	st, err := os.Stat(p)
	if err != nil {
		if os.IsNotExist(err) {
			wd, _ := os.Getwd()
			return "", nil, fmt.Errorf("%s: no such file or directory (relative paths start at the server's working directory %s)", path, wd)
		}
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, st, nil
}
