package gotest

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// TestCheckKinds: a test process takes errors and delays; the cuts only
// with a transport rule and a member rule; crash and power loss never.
func TestCheckKinds(t *testing.T) {
	rule := config.Test{Member: "a/b.M.id", Transport: config.Transport{Address: "addr", Send: []string{"a/b.N.send(to)"}}}
	for _, tc := range []struct {
		kinds   []catalog.Kind
		test    config.Test
		wantErr string
	}{
		{[]catalog.Kind{catalog.KindError, catalog.KindDelay}, config.Test{}, ""},
		{[]catalog.Kind{catalog.KindPartition, catalog.KindOneWay, catalog.KindDisconnect, catalog.KindSplit, catalog.KindLeaderCut}, rule, ""},
		{[]catalog.Kind{catalog.KindPartition}, config.Test{Member: "a/b.M.id"}, "fault kind partition needs test.transport"},
		{[]catalog.Kind{catalog.KindSplit}, config.Test{}, "fault kind split needs test.transport"},
		{[]catalog.Kind{catalog.KindCrash}, rule, "fault kind crash is not offered in-process"},
		{[]catalog.Kind{catalog.KindPowerLoss}, rule, "fault kind powerloss is not offered in-process"},
	} {
		err := checkKinds(tc.kinds, tc.test)
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("kinds %v with %+v: %v, want %q", tc.kinds, tc.test, err, tc.wantErr)
		}
	}
}

// TestInProcessPartition runs gofault test on testdata/memnet, three
// members in one process that talk through an in-memory transport named
// by its gofault.yaml's test.transport, whose leader counts a failed send
// as acknowledged with MEMNET_BUG=ack. A partition of the leader (every
// send is the leader's), or a split with the leader alone, finds the bug
// within 20 trials; with the bug off a partition finds nothing, and with
// the bug on neither do a one-way cut or a disconnect of the leader from
// one follower (the other still acknowledges) nor an error at one send. Most
// fault trials inject, and the sends name both members.
func TestInProcessPartition(t *testing.T) {
	work := t.TempDir() // one build for every case (the build key is the same)
	for i, tc := range []struct {
		name     string
		kind     catalog.Kind
		env      []string
		findings bool
	}{
		{"bug on, partition", catalog.KindPartition, []string{"MEMNET_BUG=ack"}, true},
		{"bug off, partition", catalog.KindPartition, nil, false},
		{"bug on, split", catalog.KindSplit, []string{"MEMNET_BUG=ack"}, true},
		{"bug on, one-way cut", catalog.KindOneWay, []string{"MEMNET_BUG=ack"}, false},
		{"bug on, disconnect", catalog.KindDisconnect, []string{"MEMNET_BUG=ack"}, false},
		{"bug on, error at a send", catalog.KindError, []string{"MEMNET_BUG=ack"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(work, "db", string(rune('a'+i))+".db")
			sum, err := Run(context.Background(), Options{
				Module: "testdata/memnet", Package: ".", Env: tc.env, WorkDir: work, DB: db,
				Policy: "random", Seed: 1, Trials: 20, Runs: 1, Kinds: []catalog.Kind{tc.kind},
				Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Sends != 1 || sum.MemberSends == 0 || sum.MostMembers != 3 {
				t.Errorf("%d send methods hooked, %d sends named two members, at most %d members; want 1, some, 3", sum.Sends, sum.MemberSends, sum.MostMembers)
			}
			if sum.Trials != 20 || sum.Injected < 15 {
				t.Errorf("%d fault trials, %d injected; want 20, most", sum.Trials, sum.Injected)
			}
			st, err := store.OpenExisting(db)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			trials, err := st.Trials(context.Background(), sum.Campaign)
			if err != nil {
				t.Fatal(err)
			}
			findings := report.New(trials, report.Options{}).Findings
			t.Logf("%d sends named two members; %d trials failed; %d findings", sum.MemberSends, sum.FaultFailed, len(findings))
			if !tc.findings {
				if len(findings) != 0 {
					t.Errorf("findings %+v, want none", findings)
				}
				return
			}
			if len(findings) == 0 {
				t.Fatal("bug on: no finding")
			}
			f := findings[0]
			if !strings.HasPrefix(f.Symptom, "TestQuorum") || f.Sites[0].Fault.Kind != tc.kind.String() || f.Sites[0].Fault.Node != "n1" {
				t.Errorf("finding %q with fault %+v, want TestQuorum's, a %v of the leader n1", f.Symptom, f.Sites[0].Fault, tc.kind)
			}
		})
	}
}
