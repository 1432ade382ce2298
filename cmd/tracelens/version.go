package main

import (
	"fmt"
	"runtime/debug"

	"github.com/tracelens/tracelens/analyze"
)

func versionCommand() command {
	return command{name: "version", args: "", summary: "print the version, the Go it was built with and the JSON schema version", run: runVersion,
		examples: []string{
			"tracelens version",
			"tracelens --version",
		}}
}

// version describes this binary from the build information Go embeds:
// the module version (a tag, or "(devel)" for a local build), the VCS
// revision and whether the tree was modified, and the Go toolchain.
func version() string {
	v, rev, dirty, goVersion := "(devel)", "", false, "unknown Go"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	s := "tracelens " + v
	if rev != "" {
		s += " " + rev[:min(len(rev), 12)]
		if dirty {
			s += "+dirty"
		}
	}
	return fmt.Sprintf("%s (%s, JSON schema %d)", s, goVersion, analyze.SchemaVersion)
}

func runVersion(e *env, args []string) error {
	fs := newFlags("version")
	pos, err := parseFlags(e, fs, "", args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError{"version takes no arguments"}
	}
	fmt.Fprintln(e.stdout, version())
	return nil
}
