package campaign

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
	"github.com/gofault/gofault/workload"
)

// Calibrating the progress bound (checkers.progress: auto).
//
// A normal leader failover stalls every client until a new leader is
// elected; on a system with a long election timeout that takes longer
// than a fixed bound, and a crash fault would be reported as a hang. So,
// unless checkers.progress is set, a campaign begins with one calibration
// trial: a fault-free trial in which the campaign itself kills the node
// whose client last said it is the leader (workload.Client.Leader), else
// the node that leads by its own role hook (the catalog's role), else the
// first node, half a second after every node's client made
// progress, and restarts it like a crash fault. The longest stall of a
// client of any other node over the kill — from its last progress before
// to its first after, as the hang checker measures it — is the failover,
// and boundFor turns it into the bound.
//
// The failover must fall within the workload's load, whatever length the
// workload gives it (a skeleton's 4 s load ended before seaweedfs's 3.6 s
// failover had, docs/targets.md), so with workload.adaptive_end on the
// calibration trial asks for a long load (calibrateLoad, GOFAULT_LOAD_FULL)
// and ends it (GOFAULT_LOAD_END) once every other node's client made
// progress after the kill and the killed node is back (resumed).
//
// The calibration trial is not a trial of the campaign: it is not stored,
// not judged and teaches the log baseline nothing (its logs hold a crash's
// consequences); its logs stay in <workdir>/trials/<campaign>-calibrate.
//
// A failover takes as long on the next campaign of the same build and
// scenario, so a measured bound is stored under calibrationKey (the build's
// key and the config values that shape the cluster and the workload) and
// the next campaign with the same key reuses it ("...; reused from campaign
// N") instead of running the calibration trial; Options.Recalibrate (gofault
// run --recalibrate) measures afresh. An inconclusive calibration (the
// floor) is not stored.
//
// One failover measured is one sample of a distribution with a long tail:
// a raft follower notices a lost leader only after a randomised timeout
// of one to two election timers, and an election round that fails (a
// split vote, or a pre-vote refused by a member that heard the old leader
// a moment before) waits as long again before the next. Where the profile
// names the target's election timer (faults.timers: {election: T}), the
// bound is never below electionFactor × T (progressFloor): on
// hashicorp/raft (T = 1 s) the calibration measured 1.42 s, and 2 of 20
// leader cuts of a session-17 hunt stalled the other members' clients
// 3.08 s and 4.13 s, both past a 3 s bound, the second after a pre-vote
// round refused on both sides (docs/checkers.md, "Calibrating the
// progress bound").

const (
	// boundFloor is the least calibrated bound.
	boundFloor = check.DefaultProgress
	// electionFactor is how many of the target's election timers a
	// failover may take: detection after up to two, one failed round of
	// up to two more, and the round that wins.
	electionFactor = 5
	// boundFactor is the margin of the bound over the measured failover.
	boundFactor = 2
	// calibrateSettle is how long after every node's client made progress
	// the calibration trial kills its node: the workload is then in its
	// main phase and has had time to report a leader.
	calibrateSettle = 500 * time.Millisecond
	// calibratePoll is how often the calibration trial looks at the
	// workload's events before the kill.
	calibratePoll = 50 * time.Millisecond
	// calibrateSuffix ends the calibration trial's ID.
	calibrateSuffix = "-calibrate"
)

// calibrateLoad is the load the calibration trial asks the workload for
// (GOFAULT_LOAD_FULL) when the workload's own is shorter: half its
// timeout (default 15 s of 30 s), the other half left to its setup and
// verify. The runner ends it as soon as the failover is measured.
func calibrateLoad(timeout time.Duration) time.Duration { return timeout / 2 }

// resumed reports whether, after a kill of node killed at at, a client of
// every other node has made progress (last: each client's last progress,
// clients named "<node>/<i>"): the failover is over for all of them.
func resumed(last map[string]time.Time, killed string, at time.Time) bool {
	if at.IsZero() {
		return false
	}
	others := 0
	for client, t := range last {
		if node, _, _ := strings.Cut(client, "/"); node == killed {
			continue
		}
		if !t.After(at) {
			return false
		}
		others++
	}
	return others > 0
}

// stuckHint adds to why (failoverStall's, a client made no progress after
// the kill) how long the surviving clients reported after the kill (their
// last event) and what the trial asked of the load (asked: GOFAULT_LOAD_FULL,
// 0 when adaptive_end is off), so the user knows whether the failover
// outlasted the load or the workload ignored the longer load.
func stuckHint(why string, events []record.ClientEvent, killed string, at time.Time, asked time.Duration) string {
	var last time.Time
	for _, e := range events {
		if e.Client != "" && e.Client != workload.ClientWorkload && e.Node != killed && e.Time.After(last) {
			last = e.Time
		}
	}
	if last.After(at) {
		why += fmt.Sprintf(" in the %s its clients reported after it", last.Sub(at).Round(10*time.Millisecond))
	}
	if asked == 0 {
		return why + " (workload.adaptive_end is off, so the load ran its own length: make it longer than a failover)"
	}
	return why + fmt.Sprintf(" (the trial asked for a load of up to %s, %s, ended once every other node's client made progress: a failover longer than that, or a workload that ignores %s and %s; docs/workloads.md)",
		asked, workload.EnvLoadFull, workload.EnvLoadFull, workload.EnvLoadEnd)
}

// howExplicit says that the user set the bound.
const howExplicit = "set by checkers.progress"

// boundFor is the rule that turns a measured failover stall into the
// hang and gray checkers' bound: twice the stall, rounded up to 100 ms, and
// never below floor. ok false (nothing measured) gives the floor.
func boundFor(stall time.Duration, ok bool, floor time.Duration) time.Duration {
	if !ok {
		return floor
	}
	b := boundFactor * stall
	if r := b % (100 * time.Millisecond); r != 0 {
		b += 100*time.Millisecond - r
	}
	return max(floor, b)
}

// progressFloor is the least calibrated bound for a target with these
// timers (config faults.timers): electionFactor × the "election" timer,
// when that is above boundFloor, else boundFloor; and how it says so.
func progressFloor(timers map[string]time.Duration) (time.Duration, string) {
	e := timers["election"]
	if f := electionFactor * e; f > boundFloor {
		return f, fmt.Sprintf("floor %s = %d × the election timer %s", f, electionFactor, e)
	}
	return boundFloor, fmt.Sprintf("floor %s", boundFloor)
}

// calibration is what a calibration trial measured.
type calibration struct {
	node string // the node killed
	who  string // why it: pickVictim's "the leader"
	// stall is the longest stall of a surviving client over the kill,
	// client the client; ok is false when nothing was measured, and why
	// says why.
	stall  time.Duration
	client string
	ok     bool
	why    string
}

// describe says how the bound was chosen from c and the floor (as
// progressFloor says it), for people: "measured failover 1.2s × 2, floor
// 3s".
func (c calibration) describe(floor string) string {
	if !c.ok {
		return fmt.Sprintf("calibration inconclusive: %s; %s", c.why, floor)
	}
	return fmt.Sprintf("measured failover %s × %d, %s; killed %s (%s), longest stall on %s",
		c.stall.Round(10*time.Millisecond), boundFactor, floor, c.node, c.who, c.client)
}

// Why pickVictim chose its node.
const (
	victimLeader = "the leader"
	victimRole   = "the leader by its role"
	victimFirst  = "no leader reported, first node"
)

// pickVictim chooses the node the calibration trial kills, and says why:
// the node of the client that last reported it is the leader
// (record.HealthLeader); else roleLeader, the node that leads by the
// nodes' own role hooks (controller.Trial.Leader, "" when none: a
// workload such as init's skeleton reports no leader, and a follower's
// kill measures no failover); else the first node.
func pickVictim(nodes []string, events []record.ClientEvent, roleLeader string) (node, why string) {
	var at time.Time
	for _, e := range events {
		if e.Kind == record.EvHealthy && e.Msg == record.HealthLeader && slices.Contains(nodes, e.Node) && !e.Time.Before(at) {
			node, at = e.Node, e.Time
		}
	}
	switch {
	case node != "":
		return node, victimLeader
	case slices.Contains(nodes, roleLeader):
		return roleLeader, victimRole
	case len(nodes) == 0:
		return "", ""
	}
	return nodes[0], victimFirst
}

// calibrateLeaderWait is how long past calibrateSettle the calibration
// trial waits for a leader by the role hooks before it kills the first
// node: a workload's clients may make progress before an election ends
// (a seaweedfs master serves "/" itself while it knows no leader), and a
// kill then measures no failover.
const calibrateLeaderWait = 10 * time.Second

// awaitLeader reports whether the calibration trial should wait longer
// before its kill: pickVictim fell back to the first node (who) although
// the catalog has a leader role (roles), and it has waited less than
// calibrateSettle + calibrateLeaderWait since every node's client made
// progress (waited).
func awaitLeader(who string, roles bool, waited time.Duration) bool {
	return who == victimFirst && roles && waited < calibrateSettle+calibrateLeaderWait
}

// progressedNodes returns the nodes some client of which made progress,
// from the controller's last-progress map (clients are "<node>/<i>").
func progressedNodes(last map[string]time.Time) map[string]bool {
	out := map[string]bool{}
	for client := range last {
		node, _, _ := strings.Cut(client, "/")
		out[node] = true
	}
	return out
}

// trialFailure is why a calibration trial failed (err, the trial's
// error) with the workload's own word on it: the last error or violation
// among its events, e.g. "workload exited with status 1 (its last error:
// phase verify: …)". The calibration trial is not stored, so this line
// is all the user sees of it.
func trialFailure(err string, events []record.ClientEvent) string {
	for _, e := range slices.Backward(events) {
		if (e.Kind == record.EvError || e.Kind == record.EvViolation) && e.Msg != "" {
			msg := e.Msg
			if len(msg) > 200 {
				msg = strings.ToValidUTF8(msg[:200], "") + "…"
			}
			return fmt.Sprintf("%s (its last %s: %s)", err, e.Kind, msg)
		}
	}
	return err
}

// missingProgress says why a calibration trial killed no node: which of
// nodes no client reported progress for (last: each client's last
// progress, printed or sent), and how many events the workload reported
// in all (events): "the workload ended before a client of n2, n3 made
// progress (clients with progress: n1/0; 214 workload events; …)", or,
// when every node's did, that the workload ended within calibrateSettle
// of it.
func missingProgress(nodes []string, last map[string]time.Time, events int) string {
	seen := progressedNodes(last)
	var missing []string
	for _, n := range nodes {
		if !seen[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return fmt.Sprintf("the workload ended within %s of every node's client making progress (%d workload events): make the workload run longer than that before its load ends", calibrateSettle, events)
	}
	clients := slices.Sorted(maps.Keys(last))
	if len(clients) == 0 {
		clients = []string{"none"}
	}
	return fmt.Sprintf("the workload ended before a client of %s made progress (clients with progress: %s; %d workload events; a client names its node as \"<node>/<i>\", docs/workloads.md)",
		strings.Join(missing, ", "), strings.Join(clients, ", "), events)
}

// failoverStall measures, from a calibration trial's client events, the
// longest stall of a client of a node other than killed that spans the
// kill: the time from its last progress before the kill (or its first
// event) to its first progress after. Every such client must have made
// progress again; otherwise ok is false.
func failoverStall(events []record.ClientEvent, killed string, kill time.Time) (stall time.Duration, client string, ok bool, why string) {
	type tl struct {
		from    time.Time // last progress (or first event) at or before the kill
		started bool
		after   time.Time // first progress after the kill
	}
	by := map[string]*tl{}
	sorted := slices.Clone(events)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Time.Before(sorted[j].Time) })
	for _, e := range sorted {
		if e.Client == "" || e.Client == workload.ClientWorkload || e.Node == killed {
			continue
		}
		c := by[e.Client]
		if c == nil {
			c = &tl{}
			by[e.Client] = c
		}
		progress := e.Kind == record.EvProgress || (e.Kind == record.EvOp && e.Op != nil && !e.Op.Unknown)
		switch {
		case !e.Time.After(kill):
			if !c.started || progress {
				c.from, c.started = e.Time, true
			}
		case progress && c.after.IsZero():
			if !c.started {
				c.from, c.started = kill, true
			}
			c.after = e.Time
		}
	}
	if len(by) == 0 {
		return 0, "", false, "no client of another node reported anything"
	}
	var stuck []string
	for name, c := range by {
		if c.after.IsZero() {
			stuck = append(stuck, name)
			continue
		}
		if d := c.after.Sub(c.from); d > stall || (d == stall && name < client) {
			stall, client = d, name
		}
	}
	if len(stuck) > 0 {
		sort.Strings(stuck)
		return 0, "", false, fmt.Sprintf("client %s made no progress after the kill", strings.Join(stuck, ", "))
	}
	return stall, client, true, ""
}

// priorBound is a bound an earlier campaign of the same build and scenario
// measured (store.FindCalibration); campaign 0 is none.
type priorBound struct {
	bound    time.Duration
	how      string
	campaign int64
}

// chooseBound decides where the progress bound comes from, before any
// trial: the user's checkers.progress, else the bound a resumed campaign
// stored, else the floor when no checker uses it or there is no failover,
// else the bound prior measured; measure says none of these applies and a
// calibration trial must measure it.
func chooseBound(setting config.Bound, stored time.Duration, storedHow string, enabled []string, nodes int, prior priorBound) (bound time.Duration, how string, measure bool) {
	switch {
	case !setting.Auto():
		return setting.Duration(), howExplicit, false
	case stored > 0:
		return stored, storedHow, false
	case !usesBound(enabled):
		return boundFloor, "hang, gray and slow checkers are off; floor", false
	case nodes == 1:
		return boundFloor, "one node: no failover to measure; floor", false
	case prior.campaign != 0 && prior.bound > 0:
		return prior.bound, prior.describe(), false
	}
	return 0, "", true
}

// describe says, for people, where a reused bound comes from.
func (p priorBound) describe() string {
	return fmt.Sprintf("%s; reused from campaign %d", p.how, p.campaign)
}

// calibrationKey identifies what a calibration measured: the node build
// (build.Built.Key) and the scenario, the config values that shape the
// cluster and its load: cluster (nodes, ports, command, env, readiness,
// shutdown), workload (package or command, env, timeout, ...), whether a
// power loss may strike (the agents then keep a durable image of the data
// dirs at every sync), and the target's timers (faults.timers: the
// election timer sets the floor, progressFloor). The policy, seed, trial count, checkers
// and the other fault kinds are not in it. "" (the build could not be
// keyed) means no reuse.
func calibrationKey(buildKey string, cfg *config.Config) string {
	if buildKey == "" {
		return ""
	}
	v := struct {
		Build     string
		Cluster   config.Cluster
		Workload  config.Workload
		PowerLoss bool
		Timers    map[string]time.Duration `json:",omitempty"`
	}{buildKey, cfg.Cluster, cfg.Workload, losesPower(cfg.Faults.Kinds), cfg.Faults.Timers}
	b, err := json.Marshal(v) // maps marshal with sorted keys: deterministic
	if err != nil {
		panic("campaign: calibration key: " + err.Error()) // plain data always marshals
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// calibrate chooses the hang and gray checkers' progress bound for the
// run's campaign (chooseBound), running the calibration trial when
// it must be measured. It records the bound with the campaign and logs it.
func (s *campaignRun) calibrate(ctx context.Context) error {
	cfg := s.opts.Config
	key := calibrationKey(s.bt.Key, cfg)
	var prior priorBound
	if key != "" && !s.opts.Recalibrate {
		c, from, err := s.st.FindCalibration(ctx, key)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		prior = priorBound{bound: c.Bound, how: c.How, campaign: from}
	}
	bound, how, measure := chooseBound(cfg.Checkers.Progress, s.camp.Progress, s.camp.ProgressHow, cfg.Checkers.Enabled, cfg.Cluster.Nodes, prior)
	if !measure && prior.campaign != 0 && how == prior.describe() {
		s.sum.CalibrationFrom = prior.campaign
		s.opts.Logger.Info(fmt.Sprintf("no calibration trial: campaign %d measured the progress bound on the same build and scenario (gofault run --recalibrate measures it again)", prior.campaign))
	}
	if measure {
		c, err := s.r.calibrationTrial(ctx)
		if ctx.Err() != nil {
			return nil // interrupted: Run ends; a resume calibrates again
		}
		if err != nil {
			return err
		}
		floor, floorHow := progressFloor(cfg.Faults.Timers)
		bound, how = boundFor(c.stall, c.ok, floor), c.describe(floorHow)
		if !c.ok {
			s.opts.Logger.Warn("progress bound: calibration trial measured no failover", "why", c.why)
		}
		if c.ok && key != "" {
			if err := s.st.PutCalibration(context.WithoutCancel(ctx), s.camp.ID, store.Calibration{Key: key, Bound: bound, How: how}); err != nil {
				return err
			}
		}
	}
	s.r.bound = bound
	s.sum.ProgressBound = bound.Seconds()
	s.sum.ProgressHow = how
	s.opts.Logger.Info(fmt.Sprintf("progress bound %s (%s)", bound, how))
	if s.camp.Progress == bound && s.camp.ProgressHow == how {
		return nil
	}
	return s.st.SetCampaignProgress(context.WithoutCancel(ctx), s.camp.ID, bound, how)
}

// usesBound reports whether a checker that uses the progress bound
// (hang, gray, slow) is enabled (empty: all are).
func usesBound(enabled []string) bool {
	return len(enabled) == 0 || slices.Contains(enabled, check.NameHang) || slices.Contains(enabled, check.NameGray) || slices.Contains(enabled, check.NameSlow)
}

// calibrationTrial runs the calibration trial: a fault-free trial in which
// the runner kills one node mid-workload and restarts it as after a crash
// fault, and measures the failover. An error means the trial could not run
// at all (ctx cancelled, gofault failed); a trial that measured nothing
// is a calibration with ok false.
func (r *runner) calibrationTrial(ctx context.Context) (calibration, error) {
	t := &trialRun{index: -1, id: fmt.Sprintf("%d%s", r.campaign, calibrateSuffix), baseline: true, calibrating: true, start: time.Now()}
	ct, err := r.ctl.BeginTrial(controller.TrialSpec{ID: t.id, Index: -1, Nodes: r.nodes, NoFaults: true})
	if err != nil {
		return calibration{}, fmt.Errorf("calibration trial: %w", err)
	}
	t.ct = ct
	r.log.Info("calibration trial: measuring a failover to choose the progress bound", "trial", t.id)
	stop := make(chan struct{})
	killed := make(chan kill, 1)
	go func() {
		defer close(killed)
		k, ok := r.chooseKill(ctx, t, stop)
		if !ok {
			return
		}
		killed <- k
		t.mu.Lock()
		t.calibKill = k
		t.mu.Unlock()
		r.log.Info("calibration trial: killing a node", "trial", t.id, "node", k.node, "why", k.who)
		t.crash(r, k.node, endCrash, 0) // kill now, restart restartDelay later; execute waits for it
	}()
	tr, _, _, err := r.execute(ctx, t)
	close(stop)
	k, didKill := <-killed
	if err != nil {
		return calibration{}, fmt.Errorf("calibration trial: %w", err)
	}
	if err := r.keep.tidy(tr.Dir, false, nil); err != nil {
		return calibration{}, err
	}
	switch {
	case tr.Err != "":
		return calibration{why: trialFailure(tr.Err, tr.Client)}, nil
	case !didKill:
		return calibration{why: missingProgress(r.nodes, t.ct.LastProgress(), len(tr.Client))}, nil
	case !nodeKilled(tr.Nodes, k.node):
		return calibration{why: "node " + k.node + " could not be killed"}, nil
	}
	c := calibration{node: k.node, who: k.who}
	c.stall, c.client, c.ok, c.why = failoverStall(tr.Client, k.node, k.at)
	if !c.ok {
		var asked time.Duration
		if r.cfg.Workload.AdaptiveEndOn() {
			asked = calibrateLoad(r.cfg.Workload.Timeout)
		}
		c.why = stuckHint(c.why, tr.Client, k.node, k.at, asked)
	}
	return c, nil
}

// kill is the calibration trial's kill.
type kill struct {
	node string
	who  string // why node: pickVictim's
	at   time.Time
}

// chooseKill waits until a client of every node has made progress, then
// calibrateSettle more, and chooses the node to kill (see pickVictim). It
// gives up when stop is closed, ctx ends or the cluster is gone first.
func (r *runner) chooseKill(ctx context.Context, t *trialRun, stop <-chan struct{}) (kill, bool) {
	tick := time.NewTicker(calibratePoll)
	defer tick.Stop()
	var busy time.Time
	for {
		select {
		case <-ctx.Done():
			return kill{}, false
		case <-stop:
			return kill{}, false
		case <-tick.C:
		}
		if busy.IsZero() {
			if len(progressedNodes(t.ct.LastProgress())) >= len(r.nodes) {
				busy = time.Now()
			}
			continue
		}
		if time.Since(busy) < calibrateSettle {
			continue
		}
		roleLeader, roles := t.ct.Leader()
		node, who := pickVictim(r.nodes, t.ct.ClientEvents(), roleLeader)
		if awaitLeader(who, roles, time.Since(busy)) {
			continue
		}
		t.mu.Lock()
		up := t.cl != nil
		t.mu.Unlock()
		if !up || node == "" {
			return kill{}, false
		}
		return kill{node: node, who: who, at: time.Now()}, true
	}
}

// nodeKilled reports whether gofault killed node in a trial: it is down
// (Killed) or was restarted (a restart clears Killed).
func nodeKilled(nodes []record.Node, node string) bool {
	for _, n := range nodes {
		if n.Name == node {
			return n.Killed || n.Restarts > 0
		}
	}
	return false
}

// replayBound is the bound a replay of a trial of campaign orig is
// judged with: checkers.progress when set, else the bound the original
// campaign chose, else cur.
func replayBound(ctx context.Context, st *store.Store, explicit bool, orig int64, cur time.Duration) time.Duration {
	if explicit {
		return cur
	}
	c, err := st.Campaign(ctx, orig)
	if err != nil || c.Progress <= 0 {
		return cur
	}
	return c.Progress
}
