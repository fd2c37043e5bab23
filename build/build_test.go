package build

import (
	"path/filepath"
	"testing"

	"github.com/gofault/gofault/config"
)

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		name    string
		workdir string
		want    string
	}{
		{"default work dir", "", filepath.Join("/cfg", ".gofault", "build")},
		{"relative work dir", "w", filepath.Join("/cfg", "w", "build")},
		{"absolute work dir", "/abs", filepath.Join("/abs", "build")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Config{Dir: "/cfg", WorkDir: tc.workdir, Target: config.Target{
				Module: "mod", Main: "./cmd/x", Packages: []string{"p/..."}, BuildFlags: []string{"-tags=t"},
				Version: "v1.2.3", Versioned: []string{"m"},
			}}
			got := Target(cfg)
			if got.WorkDir != tc.want || got.Module != filepath.Join("/cfg", "mod") || got.Main != "./cmd/x" ||
				got.Packages[0] != "p/..." || got.BuildFlags[0] != "-tags=t" || got.Version != "v1.2.3" || got.Versioned[0] != "m" {
				t.Errorf("Target = %+v", got)
			}
		})
	}
}
