package version

import (
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/gofault/gofault/agent/wire"
)

func TestOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		bi   *debug.BuildInfo
		want Info
		text string
	}{
		{"no build info", nil, Info{Module: "(unknown)", Go: "go1.0", Wire: wire.Version},
			"gofault (unknown) (go1.0, agent wire " + strconv.Itoa(wire.Version) + ")"},
		{"release", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/gofault/gofault", Version: "v0.3.0"}},
			Info{Module: "v0.3.0", Go: "go1.26.8", Wire: wire.Version},
			"gofault v0.3.0 (go1.26.8, agent wire " + strconv.Itoa(wire.Version) + ")"},
		{"dirty checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "c6f5f04a1b2c3d4e5f60718293a4b5c6d7e8f901"},
			{Key: "vcs.time", Value: "2026-11-27T03:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		}}, Info{Module: "(devel)", Revision: "c6f5f04a1b2c3d4e5f60718293a4b5c6d7e8f901", Time: "2026-11-27T03:00:00Z", Dirty: true, Go: "go1.26.8", Wire: wire.Version},
			"gofault (devel) c6f5f04a1b2c+dirty 2026-11-27T03:00:00Z (go1.26.8, agent wire " + strconv.Itoa(wire.Version) + ")"},
		{"clean checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "c6f5f04"},
			{Key: "vcs.modified", Value: "false"},
		}}, Info{Module: "(devel)", Revision: "c6f5f04", Go: "go1.26.8", Wire: wire.Version},
			"gofault (devel) c6f5f04 (go1.26.8, agent wire " + strconv.Itoa(wire.Version) + ")"},
	} {
		got := Of(tt.bi, "go1.0")
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
		if s := got.String(); s != tt.text {
			t.Errorf("%s: %q, want %q", tt.name, s, tt.text)
		}
	}
}
