// Package version says which gofault a binary is: its module version,
// VCS revision, Go version and agent wire version, read from the build
// information the Go toolchain embeds.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/gofault/gofault/agent/wire"
)

// Info says which gofault this is; it is the output of "gofault version
// --json" and the "version" key of run's, bench's and report's --json
// output.
type Info struct {
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

// Current is this binary's version.
func Current() Info {
	bi, _ := debug.ReadBuildInfo()
	return Of(bi, runtime.Version())
}

// Of reads an Info from build information bi (nil when the binary has
// none); goVersion is used where bi has no Go version.
func Of(bi *debug.BuildInfo, goVersion string) Info {
	v := Info{Module: "(unknown)", Go: goVersion, Wire: wire.Version}
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
func (v Info) String() string {
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
