package main

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/gofault/gofault/agent/wire"
)

func TestVersionOf(t *testing.T) {
	for _, tt := range []struct {
		name string
		bi   *debug.BuildInfo
		want versionInfo
		text string
	}{
		{"no build info", nil, versionInfo{Module: "(unknown)", Go: "go1.0", Wire: wire.Version},
			"gofault (unknown) (go1.0, agent wire " + strconv.Itoa(wire.Version) + ")"},
		{"release", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/gofault/gofault", Version: "v0.3.0"}},
			versionInfo{Module: "v0.3.0", Go: "go1.26.8", Wire: wire.Version},
			"gofault v0.3.0 (go1.26.8, agent wire " + strconv.Itoa(wire.Version) + ")"},
		{"dirty checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "c6f5f04a1b2c3d4e5f60718293a4b5c6d7e8f901"},
			{Key: "vcs.time", Value: "2026-11-27T03:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		}}, versionInfo{Module: "(devel)", Revision: "c6f5f04a1b2c3d4e5f60718293a4b5c6d7e8f901", Time: "2026-11-27T03:00:00Z", Dirty: true, Go: "go1.26.8", Wire: wire.Version},
			"gofault (devel) c6f5f04a1b2c+dirty 2026-11-27T03:00:00Z (go1.26.8, agent wire " + strconv.Itoa(wire.Version) + ")"},
		{"clean checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "c6f5f04"},
			{Key: "vcs.modified", Value: "false"},
		}}, versionInfo{Module: "(devel)", Revision: "c6f5f04", Go: "go1.26.8", Wire: wire.Version},
			"gofault (devel) c6f5f04 (go1.26.8, agent wire " + strconv.Itoa(wire.Version) + ")"},
	} {
		got := versionOf(tt.bi, "go1.0")
		if got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
		if s := got.String(); s != tt.text {
			t.Errorf("%s: %q, want %q", tt.name, s, tt.text)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("gofault version --json: exit %d\n%s", code, errb.String())
	}
	var v versionInfo
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if v.Wire != wire.Version || v.Go == "" || v.Module == "" {
		t.Errorf("gofault version --json = %s", out.String())
	}
	out.Reset()
	if code := run([]string{"version"}, &out, &errb); code != 0 || out.String() != gofaultVersion().String()+"\n" {
		t.Errorf("gofault version: exit %d, %q", code, out.String())
	}
	if code := run([]string{"version", "extra"}, &out, &errb); code != 2 {
		t.Errorf("gofault version extra: exit %d, want 2", code)
	}
}
