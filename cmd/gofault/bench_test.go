package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/config"
)

// TestBenchUsage checks what gofault bench refuses before it runs
// anything: bad flags exit 2 naming the fix, a bad known-bug file exits 1
// naming the field.
func TestBenchUsage(t *testing.T) {
	cfg := "../../examples/minikv/gofault.yaml"
	bugs := "../../examples/minikv/bugs.yaml"
	bad := filepath.Join(t.TempDir(), "bugs.yaml")
	if err := os.WriteFile(bad, []byte("bugs:\n  - id: x\n    matcher: {checker: hang}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"build", "--config", cfg, "--bugs", bugs}, 2, "--bugs builds bundles; give --bundle DIR too"},
		{[]string{"--config", cfg}, 2, "--bugs is required"},
		{[]string{"--config", cfg, "--bugs", bugs, "--policies", "nope"}, 2, `unknown policy "nope"`},
		{[]string{"--config", cfg, "--bugs", bugs, "--bug", "nope"}, 2, `no bug "nope" in the known-bug file (its bugs: split, snapshot, rotate, fence, retry, install, catchup, waitall, restream, rejoin, unchecked)`},
		{[]string{"--config", cfg, "--bugs", bugs, "--seeds", "0"}, 2, "must be at least 1"},
		{[]string{"--config", cfg, "--bugs", bugs, "--bundle", "x", "--rebuild"}, 2, "--rebuild and --bundle"},
		{[]string{"--config", cfg, "--bugs", bad}, 1, `bugs[0]: unknown field "matcher"; did you mean "match"?`},
		{[]string{"--config", cfg, "--bugs", bugs, "--set", "workdir=" + work, "--bundle", filepath.Join(work, "none")}, 1, "gofault build --config"},
	} {
		var out, errb bytes.Buffer
		args := tc.args
		if args[0] != "build" {
			args = append([]string{"bench"}, args...)
		}
		if code := run(args, &out, &errb); code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("gofault %s: exit %d, stderr:\n%s\nwant exit %d and %q", strings.Join(args, " "), code, errb.String(), tc.code, tc.want)
		}
	}
}

// TestBenchBuildsEachReleaseAgain: releases A, A, B, A build A, B and A
// again, since every release builds into the same work dir binary; a memo
// per release handed A's catalog out with B's binary.
func TestBenchBuildsEachReleaseAgain(t *testing.T) {
	var builds []string
	b := &benchRunner{buildBinaries: func(_ context.Context, cfg *config.Config) (*build.Built, error) {
		builds = append(builds, cfg.Target.Version)
		return &build.Built{Binary: "bin/etcd@" + cfg.Target.Version}, nil
	}}
	for _, v := range []string{"v3.5.13", "v3.5.13", "v3.5.12", "v3.5.13"} {
		cfg := &config.Config{Target: config.Target{Version: v}}
		bt, err := b.builtFor(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if bt.Binary != "bin/etcd@"+v {
			t.Errorf("release %s ran %s", v, bt.Binary)
		}
	}
	if want := []string{"v3.5.13", "v3.5.12", "v3.5.13"}; !slices.Equal(builds, want) {
		t.Errorf("builds %v, want %v", builds, want)
	}
}
