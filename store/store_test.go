package store

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// helperEnv makes the test binary run writeLoop instead of the tests.
const helperEnv = "GOFAULT_STORE_TEST_WRITER"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		if err := writeLoop(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// writeLoop saves trials forever, printing each index once committed.
func writeLoop(path string) error {
	s, err := Open(path)
	if err != nil {
		return err
	}
	ctx := context.Background()
	id, err := s.CreateCampaign(ctx, Campaign{Name: "crash", ConfigHash: "h"})
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		if err := s.SaveTrial(ctx, id, sampleTrial(i)); err != nil {
			return err
		}
		fmt.Println(i)
	}
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

// sampleTrial builds a trial whose parts' sizes depend on i, so a reader
// can tell a complete trial from a partial one.
func sampleTrial(i int) *record.Trial {
	t := &record.Trial{
		Index: i, Campaign: "etcd", Policy: "random", Seed: int64(i) * 7,
		Start: t0, End: t0.Add(time.Duration(i+1) * time.Second),
		Status: record.StatusOK, Dir: "/tmp/trial-" + strconv.Itoa(i), Requests: 10 * i,
	}
	for j := 0; j < 1+i%4; j++ {
		stack := make([]record.Frame, 20)
		for k := range stack {
			stack[k] = record.Frame{Func: fmt.Sprintf("go.etcd.io/etcd/server/v3/wal.(*WAL).f%d", k), File: "wal.go", Line: 100 + k}
		}
		t.Injections = append(t.Injections, record.Injection{
			Time: t0.Add(time.Duration(j) * time.Millisecond), Node: "n" + strconv.Itoa(j%3+1), Site: uint32(i*10 + j),
			SiteID: fmt.Sprintf("wal.Save#%d", j), Kind: catalog.KindError, Error: "EIO", Stack: stack,
			Occurrence: j + 1, Task: 2, Inst: 1 << 40, State: 3, StateID: "raft.leader", Role: []string{"", "StateLeader"}[j%2],
		})
	}
	for j := 1; j <= 3; j++ {
		t.Nodes = append(t.Nodes, record.Node{Name: "n" + strconv.Itoa(j), PID: 1000 + j, ExitCode: -1, Signal: "killed", Log: fmt.Sprintf("/tmp/n%d.log", j), RestartErr: map[bool]string{true: "exited before it was ready"}[j == 2]})
	}
	t.Nodes[0].Restarts, t.Nodes[0].Restarted = 2, []time.Time{t0.Add(time.Second), t0.Add(3 * time.Second)}
	for j := 0; j < 200; j++ {
		t.Client = append(t.Client, record.ClientEvent{
			Time: t0.Add(time.Duration(j) * time.Millisecond), Client: "n1/0", Node: "n1", Kind: record.EvOp,
			Op: &record.Op{Kind: "put", Key: "k" + strconv.Itoa(j%10), Value: "v", Call: int64(j), Return: int64(j + 1)},
		})
	}
	t.States = []record.StateVisit{{Node: "n1", Task: 1, State: 3, Entries: 2, First: t0}}
	t.Timeouts = []record.Timeout{{Node: "n2", Site: 4, Duration: time.Second}}
	t.Reached = []record.Reach{{Site: 4, SiteID: "wal.Save#0", Role: "StateLeader", State: "raft.leader", Requests: 3}, {Site: 4, SiteID: "wal.Save#0", Requests: 1}}
	t.Roles = []record.RoleChange{{Node: "n2", Role: "StateLeader", Time: t0}}
	for _, c := range []string{"crash", "hang", "gray", "log", "linearizability", "violations"} {
		v := record.Verdict{Checker: c}
		if c == "log" {
			v.Symptom = "informational: new warn log: lost peer"
			v.Dismissed = []record.Dismissal{{Rule: "connection-words", Node: "n1", Template: "warn  lost peer", Count: 3, Example: "[WRN] lost peer n2", Why: "crash of n2 at +1s, on peer n1, by time"}}
			v.Lasting = []string{"new error log: request table holds <n> entries"}
			v.BeforeFaults = []string{"new warn log: lost peer"}
		}
		if c == "linearizability" {
			v.Unknown = true
		}
		if c == "hang" && i%5 == 4 {
			v = record.Verdict{Checker: c, Failed: true, Symptom: "client n2/0 made no progress", Symptoms: []string{"client n2/0 made no progress", "client n1/0 made no progress"}, Evidence: []string{"a", "b"}, Nodes: []string{"n2"}}
			t.Status = record.StatusFailed
		}
		t.Verdicts = append(t.Verdicts, v)
	}
	return t
}

func open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "sub", "gofault.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestTrialRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	cid, err := s.CreateCampaign(ctx, Campaign{Name: "etcd", ConfigHash: "abc", Policy: "random", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		trial *record.Trial
	}{
		{"full", sampleTrial(4)},
		{"empty parts", &record.Trial{Index: 100, Status: record.StatusError, Err: "cluster not ready"}},
		{"delay and crash", &record.Trial{Index: 101, Status: record.StatusOK, Start: t0, Injections: []record.Injection{
			{Kind: catalog.KindDelay, Delay: 3 * time.Second, Node: "n2", Inst: ^uint64(0)},
			{Kind: catalog.KindCrash, Node: "n3"},
		}}},
		{"split and one-way cut", &record.Trial{Index: 102, Status: record.StatusOK, Start: t0, Injections: []record.Injection{
			{Kind: catalog.KindSplit, Delay: 3 * time.Second, Node: "n1", Peer: "n3", Side: []string{"n2"}},
			{Kind: catalog.KindOneWay, Delay: time.Second, Node: "n4", Peer: "n5"},
		}}},
		{"held cut, pause and stop", &record.Trial{Index: 103, Status: record.StatusOK, Start: t0, Injections: []record.Injection{
			{Kind: catalog.KindPartition, Delay: 2 * time.Second, Node: "n3", Until: "leader", Cap: 15 * time.Second, Met: "n2 became StateLeader"},
			{Kind: catalog.KindLeaderCut, Delay: 15 * time.Second, Node: "n1", Until: "requests=64", Cap: 15 * time.Second},
			{Kind: catalog.KindPause, Delay: 2 * time.Second, Node: "n2", Error: "2 × election"},
			{Kind: catalog.KindStop, Delay: 500 * time.Millisecond, Node: "n2", Error: "½ × election"},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.SaveTrial(ctx, cid, tt.trial); err != nil {
				t.Fatal(err)
			}
			if tt.trial.ID != record.TrialID(cid, tt.trial.Index) {
				t.Errorf("ID = %q", tt.trial.ID)
			}
			got, err := s.Trial(ctx, tt.trial.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.trial) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, tt.trial)
			}
		})
	}
	all, err := s.Trials(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 || all[0].Index != 4 || all[2].Index != 101 {
		t.Errorf("Trials: %d trials", len(all))
	}
	failed, err := s.FailedTrials(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[0].Index != 4 || len(failed[0].Injections) != 1 {
		t.Errorf("FailedTrials = %v", failed)
	}
	// Saving again replaces.
	tr := sampleTrial(4)
	tr.Status, tr.Injections = record.StatusOK, nil
	if err := s.SaveTrial(ctx, cid, tr); err != nil {
		t.Fatal(err)
	}
	got, err := s.Trial(ctx, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != record.StatusOK || len(got.Injections) != 0 || len(got.Nodes) != 3 {
		t.Errorf("replaced trial: status %s, %d injections, %d nodes", got.Status, len(got.Injections), len(got.Nodes))
	}
	idx, err := s.TrialIndexes(ctx, cid)
	if err != nil || !reflect.DeepEqual(idx, []int{4, 100, 101, 102, 103}) {
		t.Errorf("TrialIndexes = %v, %v", idx, err)
	}
	if _, err := s.Trial(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing trial: %v", err)
	}
	if err := s.SaveTrial(ctx, cid+100, &record.Trial{Index: 1}); err == nil {
		t.Error("trial of a missing campaign saved")
	}
}

func TestCampaigns(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	a, err := s.CreateCampaign(ctx, Campaign{Name: "etcd", ConfigHash: "h1", Policy: "random", Seed: 3, Config: "name: etcd"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateCampaign(ctx, Campaign{Name: "etcd", ConfigHash: "h1", Policy: "bsrr"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateCampaign(ctx, Campaign{Name: "etcd", ConfigHash: "h2"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, hash string
		want       int64
	}{
		{"etcd", "h1", b},
		{"etcd", "h2", b + 1},
		{"etcd", "", b + 1},
		{"etcd", "h3", 0},
		{"kv", "h1", 0},
	}
	for _, tt := range tests {
		c, err := s.FindCampaign(ctx, tt.name, tt.hash)
		switch {
		case tt.want == 0 && !errors.Is(err, ErrNotFound):
			t.Errorf("FindCampaign(%s, %s) = %v, %v; want ErrNotFound", tt.name, tt.hash, c, err)
		case tt.want != 0 && (err != nil || c.ID != tt.want):
			t.Errorf("FindCampaign(%s, %s) = %v, %v; want ID %d", tt.name, tt.hash, c, err, tt.want)
		}
	}
	c, err := s.Campaign(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "etcd" || c.Policy != "random" || c.Seed != 3 || c.Status != StatusRunning || c.Config != "name: etcd" || time.Since(c.Created) > time.Hour {
		t.Errorf("Campaign = %+v", c)
	}
	if c.Progress != 0 || c.ProgressHow != "" {
		t.Errorf("new campaign's progress bound = %s %q, want none", c.Progress, c.ProgressHow)
	}
	if err := s.SetCampaignStatus(ctx, a, StatusDone); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCampaignProgress(ctx, a, 2500*time.Millisecond, "measured failover 1.2s × 2, floor 2.5s"); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Campaign(ctx, a); err != nil || c.Progress != 2500*time.Millisecond || c.ProgressHow != "measured failover 1.2s × 2, floor 2.5s" {
		t.Errorf("after SetCampaignProgress: %+v, %v", c, err)
	}
	if err := s.SetCampaignProgress(ctx, 999, time.Second, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("progress of missing campaign: %v", err)
	}
	if err := s.SetCampaignStatus(ctx, 999, StatusDone); !errors.Is(err, ErrNotFound) {
		t.Errorf("status of missing campaign: %v", err)
	}
	all, err := s.Campaigns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Status != StatusDone || all[1].ID != b {
		t.Errorf("Campaigns = %+v", all)
	}
}

func TestBlobs(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	cid, err := s.CreateCampaign(ctx, Campaign{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		key  string
		put  []byte
		want []byte
	}{
		{"policy", []byte("v1"), []byte("v1")},
		{"policy", []byte("v2"), []byte("v2")},
		{"baseline", []byte{}, []byte{}},
		{"binary", []byte{0, 1, 2, 255}, []byte{0, 1, 2, 255}},
	}
	for _, st := range steps {
		if err := s.putBlob(ctx, cid, st.key, st.put); err != nil {
			t.Fatal(err)
		}
		got, err := s.getBlob(ctx, cid, st.key)
		if err != nil || string(got) != string(st.want) {
			t.Errorf("getBlob(%s) = %q, %v; want %q", st.key, got, err, st.want)
		}
	}
	if _, err := s.getBlob(ctx, cid, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing blob: %v", err)
	}
	if _, err := s.getBlob(ctx, cid+1, "policy"); !errors.Is(err, ErrNotFound) {
		t.Errorf("blob of other campaign: %v", err)
	}
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	cid, err := s.CreateCampaign(ctx, Campaign{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
		t.Errorf("user_version = %d, %v; want %d", v, err, SchemaVersion)
	}
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v", mode, err)
	}
	s.Close()
	// Reopening keeps the data and does not migrate again.
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Campaign(ctx, cid); err != nil {
		t.Errorf("after reopen: %v", err)
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(path); err == nil {
		t.Error("opened a database with a newer schema")
	}
}

// openAtVersion opens a store whose database was first written with
// schema version v (its first v migrations) and then given rows (SQL
// statements of that version's tables): what Open makes of a database of
// an older gofault.
func openAtVersion(t *testing.T, v int, rows ...string) *Store {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("v%d.db", v))
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append(append(slices.Clone(migrations[:v]), fmt.Sprintf("PRAGMA user_version = %d", v)), rows...) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestMigrateFromVersion1 opens a database written with schema version 1
// (no injection occurrences) and reads its injections back.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	s := openAtVersion(t, 1,
		`INSERT INTO campaigns (id, name, config_hash, policy, seed, config, status, created) VALUES (1, 'x', 'h', 'random', 1, '{}', 'done', 0)`,
		`INSERT INTO trials (id, campaign_id, idx, campaign, policy, seed, start, end, status, err, dir, requests, client, states, timeouts)
			VALUES ('1-1', 1, 1, 'x', 'random', 1, 0, 0, 'failed', '', '/tmp', 10, 'null', 'null', 'null')`,
		`INSERT INTO injections (trial_id, seq, time, node, site, site_id, kind, error, delay, stack, task, inst, state, state_id)
			VALUES ('1-1', 0, 0, 'n1', 3, 'wal.Save#0', 'error', 'EIO', 0, 'null', 0, 0, 0, '')`,
	)
	tr, err := s.Trial(ctx, "1-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Injections) != 1 || tr.Injections[0].SiteID != "wal.Save#0" || tr.Injections[0].Occurrence != 0 {
		t.Errorf("injections after migration: %+v", tr.Injections)
	}
}

// TestMigrateFromVersion3 opens a database written with schema version 3
// (no progress bound per campaign) and reads its campaign back, then
// records a bound.
func TestMigrateFromVersion3(t *testing.T) {
	ctx := context.Background()
	s := openAtVersion(t, 3,
		`INSERT INTO campaigns (id, name, config_hash, policy, seed, config, status, created) VALUES (1, 'x', 'h', 'random', 1, '{}', 'done', 0)`,
	)
	c, err := s.Campaign(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "x" || c.Progress != 0 || c.ProgressHow != "" {
		t.Errorf("campaign after migration: %+v", c)
	}
	if err := s.SetCampaignProgress(ctx, 1, 3*time.Second, "set by checkers.progress"); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Campaign(ctx, 1); err != nil || c.Progress != 3*time.Second || c.ProgressHow != "set by checkers.progress" {
		t.Errorf("after SetCampaignProgress: %+v, %v", c, err)
	}
}

// TestMigrateFromVersion7 opens a store whose trials predate coverage:
// they read as having covered nothing, and new trials keep their counts.
func TestMigrateFromVersion7(t *testing.T) {
	ctx := context.Background()
	s := openAtVersion(t, 7,
		`INSERT INTO campaigns (id, name, config_hash, policy, seed, config, status, created) VALUES (1, 'x', 'h', 'random', 1, '{}', 'done', 0)`,
		`INSERT INTO trials (id, campaign_id, idx, campaign, policy, seed, start, end, status, err, dir, requests, client, states, timeouts)
		 VALUES ('c1-1', 1, 1, 'x', 'random', 1, 0, 0, 'ok', '', '', 0, 'null', 'null', 'null')`,
	)
	old, err := s.Trial(ctx, "c1-1")
	if err != nil || old.Blocks != 0 || old.NewBlocks != 0 {
		t.Fatalf("old trial after migration: %+v, %v", old, err)
	}
	nt := &record.Trial{Index: 2, Status: record.StatusOK, Blocks: 120, NewBlocks: 17}
	if err := s.SaveTrial(ctx, 1, nt); err != nil {
		t.Fatal(err)
	}
	tr, err := s.Trial(ctx, nt.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Blocks != 120 || tr.NewBlocks != 17 {
		t.Errorf("saved trial: blocks %d new %d; want 120 17", tr.Blocks, tr.NewBlocks)
	}
}

// TestTrialChoice: the technique a policy chose for a trial, and why,
// round-trip; a trial stored before schema version 16 reads with neither.
func TestTrialChoice(t *testing.T) {
	ctx := context.Background()
	s := openAtVersion(t, 15,
		`INSERT INTO campaigns (id, name, config_hash, policy, seed, config, status, created) VALUES (1, 'x', 'h', 'portfolio', 1, '{}', 'done', 0)`,
		`INSERT INTO trials (id, campaign_id, idx, campaign, policy, seed, start, end, status, err, dir, requests, client, states, timeouts)
		 VALUES ('1-1', 1, 1, 'x', 'portfolio', 1, 0, 0, 'ok', '', '', 0, 'null', 'null', 'null')`,
	)
	old, err := s.Trial(ctx, "1-1")
	if err != nil || old.Choice != "" || old.Why != "" {
		t.Fatalf("old trial after migration: %+v, %v", old, err)
	}
	why := "UCB 0.93: mean reward 0.42 over 3 trials + 0.51 for exploration; last revealed something in trial 7 (0.35: 12 new blocks)"
	nt := &record.Trial{Index: 2, Policy: "portfolio", Status: record.StatusOK, Choice: "fuzz", Why: why}
	if err := s.SaveTrial(ctx, 1, nt); err != nil {
		t.Fatal(err)
	}
	ts, err := s.Trials(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Choice != "" || ts[1].Choice != "fuzz" || ts[1].Why != why {
		t.Errorf("trials: %+v; want the old one without a choice, the new one with fuzz and its reason", ts)
	}
}

func TestConcurrentSave(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := Open(path) // a second process-like handle
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	cid, err := s.CreateCampaign(ctx, Campaign{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := range 4 {
		wg.Go(func() {
			st := s
			if g%2 == 1 {
				st = other
			}
			for i := g; i < 40; i += 4 {
				if err := st.SaveTrial(ctx, cid, sampleTrial(i)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ts, err := s.Trials(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 40 {
		t.Errorf("%d trials saved, want 40", len(ts))
	}
}

// TestKilledWriter kills a process in the middle of a loop of SaveTrial and
// checks that the database is intact and every trial in it is complete.
func TestKilledWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts writer processes")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	committed := -1
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it commit a varying number of trials, then kill it mid-loop.
		sc := bufio.NewScanner(out)
		last := -1
		for n := 0; n < 20+round*17 && sc.Scan(); n++ {
			last, _ = strconv.Atoi(sc.Text())
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() { // indexes committed before the kill landed
			last, _ = strconv.Atoi(sc.Text())
		}
		cmd.Wait()
		if last < 0 {
			t.Fatalf("round %d: writer committed nothing", round)
		}
		committed = last

		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Check(ctx); err != nil {
			t.Fatal(err)
		}
		cs, err := s.Campaigns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := cs[len(cs)-1]
		ts, err := s.Trials(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Every printed trial is there (at most one more, committed but not printed).
		if len(ts) != committed+1 && len(ts) != committed+2 {
			t.Errorf("round %d: %d trials in the store, writer committed %d", round, len(ts), committed+1)
		}
		for i, tr := range ts {
			want := sampleTrial(i)
			want.ID = record.TrialID(c.ID, i)
			if !reflect.DeepEqual(tr, want) {
				t.Errorf("round %d: trial %d incomplete: %d injections, %d nodes, %d verdicts, %d client events",
					round, i, len(tr.Injections), len(tr.Nodes), len(tr.Verdicts), len(tr.Client))
			}
		}
		s.Close()
	}
}

func BenchmarkSaveTrial(b *testing.B) {
	ctx := context.Background()
	s, err := Open(filepath.Join(b.TempDir(), "g.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	cid, err := s.CreateCampaign(ctx, Campaign{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	tr := sampleTrial(3) // 4 injections with 20-frame stacks, 3 nodes, 6 verdicts, 200 client events
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		tr.ID, tr.Index = "", i
		if err := s.SaveTrial(ctx, cid, tr); err != nil {
			b.Fatal(err)
		}
	}
}

func TestOddPath(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a b", "x#y?.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateCampaign(ctx, Campaign{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at %s: %v", path, err)
	}
	if _, err := Open(""); err == nil {
		t.Error("empty path opened")
	}
}

func BenchmarkTrials(b *testing.B) {
	ctx := context.Background()
	s, err := Open(filepath.Join(b.TempDir(), "g.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	cid, err := s.CreateCampaign(ctx, Campaign{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		if err := s.SaveTrial(ctx, cid, sampleTrial(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		ts, err := s.Trials(ctx, cid)
		if err != nil || len(ts) != 100 {
			b.Fatal(len(ts), err)
		}
	}
}

// TestOpenRefuses checks that a damaged database fails Open, and that
// OpenExisting refuses an empty file, a file that is not SQLite and another
// program's database without writing to any of them.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.db", nil)
	text := write("notes.db", []byte("just some notes\n"))
	foreign := filepath.Join(dir, "foreign.db")
	{
		db, err := sql.Open("sqlite", "file:"+foreign)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE TABLE things (x INTEGER)"); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	for _, tc := range []struct{ path, want string }{
		{empty, "is empty, not a gofault database"},
		{text, "is not a SQLite database"},
		{foreign, "is a SQLite database but not gofault's"},
		{filepath.Join(dir, "missing.db"), "no gofault database at"},
	} {
		before, _ := os.ReadFile(tc.path)
		_, err := OpenExisting(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenExisting(%s) = %v, want %q", filepath.Base(tc.path), err, tc.want)
		}
		after, _ := os.ReadFile(tc.path)
		if !bytes.Equal(before, after) {
			t.Errorf("OpenExisting(%s) changed the file", filepath.Base(tc.path))
		}
	}

	// A gofault database with damaged pages but an intact header.
	good := filepath.Join(dir, "good.db")
	s, err := Open(good)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := s.CreateCampaign(ctx, Campaign{Name: "x", ConfigHash: "h", Policy: "random"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if err := s.SaveTrial(ctx, id, sampleTrial(i)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = OpenExisting(good); err != nil {
		t.Fatalf("OpenExisting(good.db): %v", err)
	}
	s.Close()
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 8*4096 {
		t.Fatalf("database of %d bytes is too small to damage a middle page", len(data))
	}
	for i := 4 * 4096; i < 6*4096; i++ {
		data[i] = 0xA5
	}
	bad := write("bad.db", data)
	if _, err := Open(bad); err == nil || !strings.Contains(err.Error(), "set store.db (or --db) to a new one") {
		t.Errorf("Open(damaged) = %v, want an integrity error", err)
	}
}

func TestTrialsRun(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	var ids []int64
	for range 3 {
		id, err := s.CreateCampaign(ctx, Campaign{Name: "kv", ConfigHash: "h"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Campaign 1: three trials that ran (one not judged: it ran) and one
	// that could not; campaign 2: only trials that could not run;
	// campaign 3: none.
	saves := []struct {
		camp   int64
		status record.Status
	}{{ids[0], record.StatusOK}, {ids[0], record.StatusFailed}, {ids[0], record.StatusNotJudged}, {ids[0], record.StatusError}, {ids[1], record.StatusError}, {ids[1], record.StatusError}}
	for i, sv := range saves {
		tr := sampleTrial(i)
		tr.Status = sv.status
		if err := s.SaveTrial(ctx, sv.camp, tr); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.TrialsRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int64]int{ids[0]: 3}; !maps.Equal(got, want) {
		t.Errorf("TrialsRun = %v, want %v", got, want)
	}
}

func TestCoverageBlob(t *testing.T) {
	ctx := context.Background()
	s, err := Open(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cid, err := s.CreateCampaign(ctx, Campaign{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Coverage(ctx, cid); !errors.Is(err, ErrNotFound) {
		t.Fatalf("coverage of a new campaign: %v, want ErrNotFound", err)
	}
	c := record.NewCoverage("h1", 100)
	c.Add([]uint32{1, 50, 99})
	if err := s.PutCoverage(ctx, cid, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.Coverage(ctx, cid)
	if err != nil || got.Catalog != "h1" || got.Blocks != 100 || got.Covered != 3 || !got.Has(50) || got.Has(2) {
		t.Errorf("coverage read back %+v, %v", got, err)
	}
}
