package campaign

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

func TestProgressBound(t *testing.T) {
	const floor = 3 * time.Second
	for _, tc := range []struct {
		name  string
		stall time.Duration
		ok    bool
		want  time.Duration
	}{
		{"nothing measured: floor", 0, false, floor},
		{"fast failover: floor", 400 * time.Millisecond, true, floor},
		{"exactly half the floor", 1500 * time.Millisecond, true, floor},
		{"slow failover: twice it", 4 * time.Second, true, 8 * time.Second},
		{"rounded up to 100ms", 2345 * time.Millisecond, true, 4700 * time.Millisecond},
		{"already round", 2 * time.Second, true, 4 * time.Second},
	} {
		if got := boundFor(tc.stall, tc.ok, floor); got != tc.want {
			t.Errorf("%s: boundFor(%s, %v) = %s, want %s", tc.name, tc.stall, tc.ok, got, tc.want)
		}
	}
}

func TestPickVictim(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	nodes := []string{"n1", "n2", "n3"}
	for _, tc := range []struct {
		name       string
		events     []record.ClientEvent
		roleLeader string
		want       string
		wantWhy    string
	}{
		{"no reports: first node", nil, "", "n1", victimFirst},
		{"no reports, n2 leads by its role", nil, "n2", "n2", victimRole},
		{"a role leader that is not a member", nil, "n9", "n1", victimFirst},
		{"healthy but no leader report", []record.ClientEvent{
			{Time: at(1), Client: "n2/0", Node: "n2", Kind: record.EvHealthy, Msg: "leader 8e9e05c52164694d"},
		}, "", "n1", victimFirst},
		{"the leader", []record.ClientEvent{
			{Time: at(1), Client: "n1/0", Node: "n1", Kind: record.EvHealthy, Msg: "leader 8e9e"},
			{Time: at(2), Client: "n3/0", Node: "n3", Kind: record.EvHealthy, Msg: record.HealthLeader},
		}, "n2", "n3", victimLeader},
		{"the latest leader", []record.ClientEvent{
			{Time: at(5), Client: "n2/0", Node: "n2", Kind: record.EvHealthy, Msg: record.HealthLeader},
			{Time: at(2), Client: "n3/0", Node: "n3", Kind: record.EvHealthy, Msg: record.HealthLeader},
		}, "", "n2", victimLeader},
		{"an unhealthy event is no leader report", []record.ClientEvent{
			{Time: at(1), Client: "n2/0", Node: "n2", Kind: record.EvUnhealthy, Msg: record.HealthLeader},
		}, "", "n1", victimFirst},
	} {
		got, why := pickVictim(nodes, tc.events, tc.roleLeader)
		if got != tc.want || why != tc.wantWhy {
			t.Errorf("%s: pickVictim = %s, %q; want %s, %q", tc.name, got, why, tc.want, tc.wantWhy)
		}
	}
}

func TestFailoverStall(t *testing.T) {
	kill := time.Unix(1000, 0)
	at := func(ms int) time.Time { return kill.Add(time.Duration(ms) * time.Millisecond) }
	prog := func(client string, ms int) record.ClientEvent {
		return record.ClientEvent{Time: at(ms), Client: client, Node: client[:2], Kind: record.EvProgress, Msg: "put k"}
	}
	errEv := func(client string, ms int) record.ClientEvent {
		return record.ClientEvent{Time: at(ms), Client: client, Node: client[:2], Kind: record.EvError, Msg: "put k: no leader"}
	}
	op := func(client string, ms int, unknown bool) record.ClientEvent {
		return record.ClientEvent{Time: at(ms), Client: client, Node: client[:2], Kind: record.EvOp, Op: &record.Op{Kind: "put", Key: "k", Unknown: unknown}}
	}
	for _, tc := range []struct {
		name       string
		events     []record.ClientEvent
		wantStall  time.Duration
		wantClient string
		wantOK     bool
	}{
		{
			name: "longest surviving stall spans the kill",
			events: []record.ClientEvent{
				prog("n1/0", -2000), prog("n1/0", -10), // killed node: ignored
				prog("n2/0", -1000), prog("n2/0", -20), errEv("n2/0", 500), prog("n2/0", 1180), prog("n2/0", 1190),
				op("n3/0", -5, false), op("n3/0", 300, true), op("n3/0", 900, false),
				// a workload-level event is nobody's progress
				{Time: at(2000), Client: "workload", Kind: record.EvPhase, Msg: "mixed"},
			},
			wantStall: 1200 * time.Millisecond, wantClient: "n2/0", wantOK: true,
		},
		{
			name: "events out of order",
			events: []record.ClientEvent{
				prog("n2/0", 700), prog("n2/0", -100), prog("n3/0", 50), prog("n3/0", -50),
			},
			wantStall: 800 * time.Millisecond, wantClient: "n2/0", wantOK: true,
		},
		{
			name: "a client first seen after the kill counts from the kill",
			events: []record.ClientEvent{
				errEv("n2/0", 100), prog("n2/0", 900), prog("n3/0", -10), prog("n3/0", 10),
			},
			wantStall: 900 * time.Millisecond, wantClient: "n2/0", wantOK: true,
		},
		{
			name: "a client that never progressed again",
			events: []record.ClientEvent{
				prog("n2/0", -10), errEv("n2/0", 900), prog("n3/0", -10), prog("n3/0", 10),
			},
		},
		{
			name:   "only the killed node's client",
			events: []record.ClientEvent{prog("n1/0", -10), prog("n1/0", 3000)},
		},
	} {
		stall, client, ok, why := failoverStall(tc.events, "n1", kill)
		if stall != tc.wantStall || client != tc.wantClient || ok != tc.wantOK {
			t.Errorf("%s: failoverStall = %s, %q, %v (%s); want %s, %q, %v", tc.name, stall, client, ok, why, tc.wantStall, tc.wantClient, tc.wantOK)
		}
		if !ok && why == "" {
			t.Errorf("%s: no reason given", tc.name)
		}
	}
}

func TestAwaitLeader(t *testing.T) {
	for _, tc := range []struct {
		who    string
		roles  bool
		waited time.Duration
		want   bool
	}{
		{victimFirst, true, time.Second, true},
		{victimFirst, true, calibrateSettle + calibrateLeaderWait, false},
		{victimFirst, false, time.Second, false},
		{victimRole, true, time.Second, false},
		{victimLeader, true, time.Second, false},
	} {
		if got := awaitLeader(tc.who, tc.roles, tc.waited); got != tc.want {
			t.Errorf("awaitLeader(%q, %v, %s) = %v, want %v", tc.who, tc.roles, tc.waited, got, tc.want)
		}
	}
}

func TestResumed(t *testing.T) {
	kill := time.Unix(1000, 0)
	at := func(ms int) time.Time { return kill.Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name string
		last map[string]time.Time
		at   time.Time
		want bool
	}{
		{"every other node's client progressed since", map[string]time.Time{"n1/0": at(-10), "n2/0": at(900), "n3/0": at(5), "n3/1": at(3000)}, kill, true},
		{"one still stalled", map[string]time.Time{"n1/0": at(-10), "n2/0": at(900), "n3/0": at(-5)}, kill, false},
		{"progress at the kill itself is not after it", map[string]time.Time{"n2/0": at(0), "n3/0": at(10)}, kill, false},
		{"only the killed node's client", map[string]time.Time{"n1/0": at(2000)}, kill, false},
		{"no kill yet", map[string]time.Time{"n2/0": at(900)}, time.Time{}, false},
	} {
		if got := resumed(tc.last, "n1", tc.at); got != tc.want {
			t.Errorf("%s: resumed = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStuckHint(t *testing.T) {
	kill := time.Unix(1000, 0)
	ev := func(client, node string, ms int) record.ClientEvent {
		return record.ClientEvent{Time: kill.Add(time.Duration(ms) * time.Millisecond), Client: client, Node: node, Kind: record.EvError, Msg: "get: refused"}
	}
	events := []record.ClientEvent{ev("n2/0", "n2", 1200), ev("n3/0", "n3", 3500), ev("n1/0", "n1", 9000),
		{Time: kill.Add(20 * time.Second), Client: "workload", Kind: record.EvPhase, Msg: "verify"}}
	const why = "client n2/0, n3/0 made no progress after the kill"
	for _, tc := range []struct {
		name   string
		events []record.ClientEvent
		asked  time.Duration
		want   string
	}{
		{"longer load asked for", events, 15 * time.Second, why + " in the 3.5s its clients reported after it (the trial asked for a load of up to 15s, GOFAULT_LOAD_FULL, ended once every other node's client made progress: a failover longer than that, or a workload that ignores GOFAULT_LOAD_FULL and GOFAULT_LOAD_END; docs/workloads.md)"},
		{"adaptive end off", events, 0, why + " in the 3.5s its clients reported after it (workload.adaptive_end is off, so the load ran its own length: make it longer than a failover)"},
		{"nothing reported after the kill", events[:1][:0], 0, why + " (workload.adaptive_end is off, so the load ran its own length: make it longer than a failover)"},
	} {
		if got := stuckHint(why, tc.events, "n1", kill, tc.asked); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestProgressedNodes(t *testing.T) {
	got := progressedNodes(map[string]time.Time{"n1/0": {}, "n1/1": {}, "n3/0": {}})
	if len(got) != 2 || !got["n1"] || !got["n3"] {
		t.Errorf("progressedNodes = %v", got)
	}
}

func TestUsesBound(t *testing.T) {
	for _, tc := range []struct {
		enabled []string
		want    bool
	}{
		{nil, true},
		{[]string{"crash", "hang"}, true},
		{[]string{"gray"}, true},
		{[]string{"slow"}, true},
		{[]string{"crash", "log", "linearizability"}, false},
	} {
		if got := usesBound(tc.enabled); got != tc.want {
			t.Errorf("usesBound(%v) = %v, want %v", tc.enabled, got, tc.want)
		}
	}
}

func TestCalibrationDescribe(t *testing.T) {
	const floor = "floor 3s"
	for _, tc := range []struct {
		c    calibration
		want string
	}{
		{calibration{node: "n2", who: victimLeader, stall: 1234 * time.Millisecond, client: "n3/0", ok: true},
			"measured failover 1.23s × 2, floor 3s; killed n2 (the leader), longest stall on n3/0"},
		{calibration{node: "n1", who: victimFirst, stall: time.Second, client: "n2/0", ok: true},
			"measured failover 1s × 2, floor 3s; killed n1 (no leader reported, first node), longest stall on n2/0"},
		{calibration{why: "cluster did not start"}, "calibration inconclusive: cluster did not start; floor 3s"},
	} {
		if got := tc.c.describe(floor); got != tc.want {
			t.Errorf("describe = %q, want %q", got, tc.want)
		}
	}
}

// TestProgressFloor: the floor is electionFactor × the profile's election
// timer where that is above boundFloor; other timers do not count.
func TestProgressFloor(t *testing.T) {
	for _, tc := range []struct {
		timers  map[string]time.Duration
		want    time.Duration
		wantHow string
	}{
		{nil, 3 * time.Second, "floor 3s"},
		{map[string]time.Duration{"heartbeat": 2 * time.Second}, 3 * time.Second, "floor 3s"},
		{map[string]time.Duration{"election": 500 * time.Millisecond}, 3 * time.Second, "floor 3s"},
		{map[string]time.Duration{"election": time.Second, "heartbeat": 100 * time.Millisecond}, 5 * time.Second, "floor 5s = 5 × the election timer 1s"},
		{map[string]time.Duration{"election": 4 * time.Second}, 20 * time.Second, "floor 20s = 5 × the election timer 4s"},
	} {
		got, how := progressFloor(tc.timers)
		if got != tc.want || how != tc.wantHow {
			t.Errorf("progressFloor(%v) = %s, %q; want %s, %q", tc.timers, got, how, tc.want, tc.wantHow)
		}
		// The measured failover still wins when it is the larger.
		if b := boundFor(4*time.Second, true, got); b != max(8*time.Second, tc.want) {
			t.Errorf("progressFloor(%v): boundFor(4s) = %s", tc.timers, b)
		}
	}
}

func TestNodeKilled(t *testing.T) {
	nodes := []record.Node{{Name: "n1", Killed: true}, {Name: "n2", Restarts: 1}, {Name: "n3"}}
	for node, want := range map[string]bool{"n1": true, "n2": true, "n3": false, "n4": false} {
		if got := nodeKilled(nodes, node); got != want {
			t.Errorf("nodeKilled(%s) = %v, want %v", node, got, want)
		}
	}
}

func TestChooseBound(t *testing.T) {
	all := []string{"crash", "hang", "gray", "log"}
	for _, tc := range []struct {
		name        string
		setting     config.Bound
		stored      time.Duration
		storedHow   string
		enabled     []string
		want        time.Duration
		wantHow     string
		wantMeasure bool
		prior       priorBound
	}{
		{"explicit", config.Bound(2 * time.Second), 0, "", all, 2 * time.Second, howExplicit, false, priorBound{}},
		{"explicit wins over a stored bound", config.Bound(2 * time.Second), 5 * time.Second, "measured", all, 2 * time.Second, howExplicit, false, priorBound{}},
		{"auto, resumed", 0, 5 * time.Second, "measured failover 2.5s × 2, floor 3s", all, 5 * time.Second, "measured failover 2.5s × 2, floor 3s", false, priorBound{}},
		{"auto, no checker uses it", 0, 0, "", []string{"crash", "log"}, boundFloor, "hang, gray and slow checkers are off; floor", false, priorBound{}},
		{"auto: measure", 0, 0, "", all, 0, "", true, priorBound{}},
		{"auto, slow alone uses it: measure", 0, 0, "", []string{"crash", "slow"}, 0, "", true, priorBound{}},
		{"auto, one node", 0, 0, "", all, boundFloor, "one node: no failover to measure; floor", false, priorBound{}},
		{"auto, default checkers: measure", 0, 0, "", nil, 0, "", true, priorBound{}},
		{"auto, measured by campaign 7: reused", 0, 0, "", all, 4 * time.Second, "measured failover 2s × 2, floor 3s; reused from campaign 7", false, priorBound{4 * time.Second, "measured failover 2s × 2, floor 3s", 7}},
		{"explicit wins over a prior measurement", config.Bound(2 * time.Second), 0, "", all, 2 * time.Second, howExplicit, false, priorBound{4 * time.Second, "measured failover 2s × 2, floor 3s", 7}},
		{"a resumed campaign keeps its own bound", 0, 5 * time.Second, "measured", all, 5 * time.Second, "measured", false, priorBound{4 * time.Second, "measured failover 2s × 2, floor 3s", 7}},
		{"no checker uses it: floor, not the prior", 0, 0, "", []string{"crash", "log"}, boundFloor, "hang, gray and slow checkers are off; floor", false, priorBound{4 * time.Second, "measured failover 2s × 2, floor 3s", 7}},
	} {
		nodes := 3
		if tc.name == "auto, one node" {
			nodes = 1
		}
		got, how, measure := chooseBound(tc.setting, tc.stored, tc.storedHow, tc.enabled, nodes, tc.prior)
		if got != tc.want || how != tc.wantHow || measure != tc.wantMeasure {
			t.Errorf("%s: chooseBound = %s, %q, %v; want %s, %q, %v", tc.name, got, how, measure, tc.want, tc.wantHow, tc.wantMeasure)
		}
	}
}

func TestReplayBound(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	measured, err := st.CreateCampaign(ctx, store.Campaign{Name: "x", Progress: 5 * time.Second, ProgressHow: "measured"})
	if err != nil {
		t.Fatal(err)
	}
	old, err := st.CreateCampaign(ctx, store.Campaign{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		explicit bool
		orig     int64
		want     time.Duration
	}{
		{"the original campaign's bound", false, measured, 5 * time.Second},
		{"explicit setting wins", true, measured, 2 * time.Second},
		{"original without a bound", false, old, 2 * time.Second},
		{"original not in the store", false, 999, 2 * time.Second},
	} {
		if got := replayBound(ctx, st, tc.explicit, tc.orig, 2*time.Second); got != tc.want {
			t.Errorf("%s: replayBound = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestCalibrationKey: the key changes with the build and with what shapes
// the cluster and its load, and with nothing else.
func TestCalibrationKey(t *testing.T) {
	base := func() *config.Config {
		return &config.Config{
			Cluster:  config.Cluster{Nodes: 3, Command: []string{"--data-dir={{.Dir}}"}, Env: map[string]string{"A": "1"}},
			Workload: config.Workload{Env: map[string]string{"OPS": "100"}},
			Faults:   config.Faults{Kinds: []string{"crash"}},
			Policy:   config.Policy{Name: "random", Seed: 1},
		}
	}
	want := calibrationKey("b1", base())
	if want == "" {
		t.Fatal("no key for a keyed build")
	}
	for _, tc := range []struct {
		name    string
		build   string
		change  func(*config.Config)
		changes bool
	}{
		{"the same", "b1", func(*config.Config) {}, false},
		{"another build", "b2", func(*config.Config) {}, true},
		{"more nodes", "b1", func(c *config.Config) { c.Cluster.Nodes = 5 }, true},
		{"a node flag", "b1", func(c *config.Config) { c.Cluster.Command = append(c.Cluster.Command, "--election-timeout=5000") }, true},
		{"a node env var", "b1", func(c *config.Config) { c.Cluster.Env["A"] = "2" }, true},
		{"the workload's env", "b1", func(c *config.Config) { c.Workload.Env["OPS"] = "1000" }, true},
		{"power loss may strike", "b1", func(c *config.Config) { c.Faults.Kinds = append(c.Faults.Kinds, "powerloss") }, true},
		{"another fault kind", "b1", func(c *config.Config) { c.Faults.Kinds = []string{"error"} }, false},
		{"policy and seed", "b1", func(c *config.Config) { c.Policy = config.Policy{Name: "bsrr", Seed: 9} }, false},
		{"trial count", "b1", func(c *config.Config) { c.Trials.Count = 500 }, false},
		{"the target's timers", "b1", func(c *config.Config) { c.Faults.Timers = map[string]time.Duration{"election": time.Second} }, true},
	} {
		c := base()
		tc.change(c)
		if got := calibrationKey(tc.build, c); (got != want) != tc.changes {
			t.Errorf("%s: key %s, base %s; want changed %v", tc.name, got, want, tc.changes)
		}
	}
	if got := calibrationKey("", base()); got != "" {
		t.Errorf("an unkeyed build has key %q, want none", got)
	}
}

// TestMissingProgress: an inconclusive calibration names the nodes whose
// clients never made progress, the clients that did and how many events
// came, or says that the workload ended too soon after they all did.
func TestMissingProgress(t *testing.T) {
	nodes := []string{"n1", "n2", "n3"}
	now := time.Now()
	for _, tc := range []struct {
		name string
		last map[string]time.Time
		want string
	}{
		{"none at all", nil, "the workload ended before a client of n1, n2, n3 made progress (clients with progress: none; 0 workload events"},
		{"one node's", map[string]time.Time{"n1/0": now}, "the workload ended before a client of n2, n3 made progress (clients with progress: n1/0; 0 workload events"},
		{"a client that names no node", map[string]time.Time{"c1": now}, "before a client of n1, n2, n3 made progress (clients with progress: c1; "},
		{"every node's, but too late", map[string]time.Time{"n1/0": now, "n2/0": now, "n3/1": now}, "the workload ended within 500ms of every node's client making progress"},
	} {
		if got := missingProgress(nodes, tc.last, 0); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want it to hold %q", tc.name, got, tc.want)
		}
	}
}

// TestTrialFailure: a calibration trial whose workload failed says what
// the workload last reported (Alertmanager's first workload: a violation,
// then its exit message), not only its exit status.
func TestTrialFailure(t *testing.T) {
	events := []record.ClientEvent{
		{Kind: record.EvError, Client: "n1/0", Msg: "silence k2: connection refused"},
		{Kind: record.EvProgress, Client: "n2/0", Msg: "silence k1"},
		{Kind: record.EvViolation, Client: "workload", Msg: "n3 lacks silence 6e39 created on n1"},
		{Kind: record.EvError, Client: "workload", Msg: "phase verify: silences not replicated: " + strings.Repeat("x", 300)},
		{Kind: record.EvPhase, Client: "workload", Msg: "load"},
	}
	got := trialFailure("workload exited with status 1", events)
	if want := "workload exited with status 1 (its last error: phase verify: silences not replicated: xxx"; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "…)") {
		t.Errorf("trialFailure = %q, want it to start %q and end clipped", got, want)
	}
	if got := trialFailure("workload timed out", events[1:2]); got != "workload timed out" {
		t.Errorf("without an error event: %q", got)
	}
}
