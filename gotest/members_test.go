package gotest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/report"
)

// TestInProcessMembers runs gofault test on testdata/memcluster, a
// three-member cluster in one process whose Replicate drops a follower's
// failed append with MEMCLUSTER_BUG=drop. With its gofault.yaml's member
// rule the requests are split over members n1 (the leader), n2 and n3,
// and the bug's findings name the follower the error struck, never the
// leader, although errors struck the leader too (they are returned, as
// they should be). With the bug off there is no finding; without the
// rule every request is n1's.
func TestInProcessMembers(t *testing.T) {
	noRule := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(noRule, []byte("name: memcluster\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		config    string // "" the module's gofault.yaml
		env       []string
		findings  bool
		wantNodes []string // the nodes of the findings' faults
		members   int      // the most members one run saw
	}{
		{"bug on, members", "", []string{"MEMCLUSTER_BUG=drop"}, true, []string{"n2", "n3"}, 3},
		{"bug off, members", "", nil, false, nil, 3},
		{"bug on, no member rule", noRule, []string{"MEMCLUSTER_BUG=drop"}, true, []string{"n1"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sum, err := Run(context.Background(), Options{
				Module: "testdata/memcluster", Package: ".", Env: tc.env, WorkDir: dir, Config: tc.config,
				Policy: "random", Seed: 1, Trials: 20, Kinds: []catalog.Kind{catalog.KindError},
				Delay: 50 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			if sum.MostMembers != tc.members {
				t.Errorf("most members in a run = %d, want %d", sum.MostMembers, tc.members)
			}
			if tc.members > 0 && (sum.MemberRequests == 0 || sum.MemberMethods != 2) {
				t.Errorf("%d of %d requests named a member, %d methods hooked; want some, 2 (Append, Entries: New is a function)", sum.MemberRequests, sum.Requests, sum.MemberMethods)
			}
			trials := storedTrials(t, dir, sum.Campaign)
			wantProcess := "n1"
			if tc.members > 0 {
				wantProcess = ProcessNode // never the first member's name
			}
			if got := trials[0].Nodes[0].Name; got != wantProcess || testOf(trials[0]) == "" {
				t.Errorf("the test process's node %s (test %q), want %s", got, testOf(trials[0]), wantProcess)
			}
			struck := map[string]int{}
			for _, tr := range trials {
				for _, in := range tr.Injections {
					struck[in.Node]++
				}
			}
			findings := report.New(trials, report.Options{}).Findings
			var nodes []string
			for _, f := range findings {
				for _, s := range f.Sites {
					if !slices.Contains(nodes, s.Fault.Node) {
						nodes = append(nodes, s.Fault.Node)
					}
				}
			}
			slices.Sort(nodes)
			t.Logf("injections by node %v; %d findings, their faults on %v", struck, len(findings), nodes)
			if !tc.findings {
				if len(findings) != 0 {
					t.Errorf("bug off: findings %+v, want none", findings)
				}
				if struck["n2"]+struck["n3"] == 0 {
					t.Error("bug off: no error struck a follower, so finding nothing proves nothing")
				}
				return
			}
			if len(findings) == 0 {
				t.Fatal("bug on: no finding")
			}
			for _, n := range nodes {
				if !slices.Contains(tc.wantNodes, n) {
					t.Errorf("a finding's fault struck %s, want only %v", n, tc.wantNodes)
				}
			}
			if tc.members > 0 && struck["n1"] == 0 {
				t.Error("no error struck the leader n1, so its having no finding proves nothing")
			}
			if !strings.HasPrefix(findings[0].Symptom, "TestReplicate") {
				t.Errorf("finding %q, want TestReplicate's", findings[0].Symptom)
			}
		})
	}
}
