package build

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
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

func TestCheckWorkload(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir, err := filepath.Abs(filepath.Join("..", "examples", "minikv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, pkg string
		want      []string // substrings of the error; none: valid
	}{
		{"main package", "./workload", nil},
		{"missing", "./nope", []string{`workload.package: "./nope" is not a package of the module in`, `e.g. "package: ./workload"`}},
		{"not main", "./server", []string{`workload.package: "./server" is package server, not a main package`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckWorkload(context.Background(), dir, tc.pkg)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("CheckWorkload: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("CheckWorkload: no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
