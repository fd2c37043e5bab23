package bench

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/config"
)

// TestBenchBuildsEachReleaseAgain: releases A, A, B, A build A, B and A
// again, since every release builds into the same work dir binary; a memo
// per release handed A's catalog out with B's binary.
func TestBenchBuildsEachReleaseAgain(t *testing.T) {
	var builds []string
	b := &bencher{buildBinaries: func(_ context.Context, cfg *config.Config) (*build.Built, error) {
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

// TestTestBenchConfig: a bench of test bugs alone reads no config; its
// work dir and store are beside the known-bug file unless --set moves them.
func TestTestBenchConfig(t *testing.T) {
	for _, tc := range []struct {
		sets          []string
		work, db, err string
	}{
		{nil, "b/.gofault", "b/.gofault/gofault.db", ""},
		{[]string{"workdir=/w"}, "/w", "/w/gofault.db", ""},
		{[]string{"workdir=w", "store.db=/s.db"}, "b/w", "/s.db", ""},
		{[]string{"trials.count=3"}, "", "", "only --set workdir=..., --set store.db=... apply"},
	} {
		cfg, err := testConfig("b/bugs.yaml", tc.sets)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("sets %q: err %v, want %q", tc.sets, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if w, db := cfg.Path(cfg.WorkDir), cfg.Path(cfg.Store.DB); w != tc.work || db != tc.db {
			t.Errorf("sets %q: work dir %s, store %s; want %s, %s", tc.sets, w, db, tc.work, tc.db)
		}
	}
}
