package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/gofault/gofault/agent/wire"
)

func init() {
	register(command{
		name:    "version",
		summary: "print gofault's version: module version, VCS revision, Go version, agent wire version",
		run:     runVersion,
	})
}

// versionInfo says which gofault this is; it is the output of "gofault
// version --json" and the "version" key of run's, bench's and report's
// --json output.
type versionInfo struct {
	// Module is the module version gofault was built from ("v0.3.0" for
	// a go install of a release, "(devel)" for a build in a checkout).
	Module string `json:"module"`
	// Revision and Time are the VCS commit and its time, where the build
	// recorded them (go build in a git checkout without -buildvcs=false).
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	// Dirty says the checkout had uncommitted changes.
	Dirty bool `json:"dirty,omitempty"`
	// Go is the Go version that built gofault.
	Go string `json:"go"`
	// Wire is the agent protocol version (agent/wire.Version) that this
	// gofault speaks: an instrumented binary built by a gofault of
	// another wire version is refused by its controller.
	Wire int `json:"wire"`
}

// gofaultVersion is this binary's version.
func gofaultVersion() versionInfo {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi, runtime.Version())
}

// versionOf reads a versionInfo from build information bi (nil when the
// binary has none); goVersion is used where bi has no Go version.
func versionOf(bi *debug.BuildInfo, goVersion string) versionInfo {
	v := versionInfo{Module: "(unknown)", Go: goVersion, Wire: wire.Version}
	if bi == nil {
		return v
	}
	if bi.Main.Version != "" {
		v.Module = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Dirty = s.Value == "true"
		}
	}
	return v
}

// String says the version on one line, e.g. "gofault v0.3.0 (go1.26.8,
// agent wire 5)" or "gofault (devel) 1a2b3c4d5e6f+dirty 2026-11-27T03:00:00Z
// (go1.26.8, agent wire 5)".
func (v versionInfo) String() string {
	s := "gofault " + v.Module
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s += " " + rev
		if v.Dirty {
			s += "+dirty"
		}
		if v.Time != "" {
			s += " " + v.Time
		}
	}
	return fmt.Sprintf("%s (%s, agent wire %d)", s, v.Go, v.Wire)
}

func runVersion(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("version", os.Stderr)
	asJSON := fs.Bool("json", false, "print the version as one JSON object")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	v := gofaultVersion()
	if *asJSON {
		return writeJSON(stdout, v)
	}
	if _, err := fmt.Fprintln(stdout, v); err != nil {
		return fmt.Errorf("write version: %w", err)
	}
	return nil
}
