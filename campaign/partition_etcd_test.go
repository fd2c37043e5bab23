package campaign

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// cutFirst is a test policy: it cuts node n1 off from its peers for
// partitionFor at its first peer-network call once the trial has seen
// 100 requests (the workload is running by then).
type cutFirst struct{ granted map[int]bool }

const partitionFor = 3 * time.Second

func (p *cutFirst) Name() string { return "test-cut-n1" }
func (p *cutFirst) Begin(info policy.TrialInfo) policy.Plan {
	return policy.Plan{States: true, Stacks: true}
}
func (p *cutFirst) Decide(req *policy.Request) policy.Decision {
	if p.granted[req.Trial] || req.Node != "n1" || req.Site.Peer == "" || req.Seq < 100 {
		return policy.Decision{}
	}
	p.granted[req.Trial] = true
	return policy.Decision{Fault: policy.Fault{Kind: catalog.KindPartition, Delay: partitionFor}, Done: true}
}
func (p *cutFirst) End(policy.Outcome) {}

func init() {
	policy.Register("test-cut-n1", func(env policy.Env) (policy.Policy, error) {
		return &peerPlan{Policy: &cutFirst{granted: map[int]bool{}}, cat: env.Catalog}, nil
	})
	policy.Register("test-disconnect-leader", func(env policy.Env) (policy.Policy, error) {
		return &peerPlan{Policy: &disconnectLeader{granted: map[int]bool{}}, cat: env.Catalog}, nil
	})
}

// peerPlan makes every peer site live for a test policy.
type peerPlan struct {
	policy.Policy
	cat *catalog.Catalog
}

func (p *peerPlan) Begin(info policy.TrialInfo) policy.Plan {
	pl := p.Policy.Begin(info)
	for i := range p.cat.Sites {
		if p.cat.Sites[i].Peer != "" {
			pl.Sites = append(pl.Sites, uint32(i))
		}
	}
	return pl
}

// disconnectLeader is a test policy: it disconnects the leader from the
// peer of its first peer-network call with a known peer once the trial
// has seen 100 requests.
type disconnectLeader struct{ granted map[int]bool }

func (p *disconnectLeader) Name() string { return "test-disconnect-leader" }
func (p *disconnectLeader) Begin(policy.TrialInfo) policy.Plan {
	return policy.Plan{States: true, Stacks: true}
}
func (p *disconnectLeader) Decide(req *policy.Request) policy.Decision {
	if p.granted[req.Trial] || req.Role != "StateLeader" || req.Site.Peer == "" || req.Peer == "" || req.Seq < 100 {
		return policy.Decision{}
	}
	p.granted[req.Trial] = true
	return policy.Decision{Fault: policy.Fault{Kind: catalog.KindDisconnect, Delay: partitionFor}, Done: true}
}
func (p *disconnectLeader) End(policy.Outcome) {}

// TestEtcdPartition cuts one member of a real etcd cluster off from its
// peers for 3s under the workload, in situ (its rafthttp dials fail, its
// peer reads, writes and accepts stall). During the partition the other
// members have a leader and their clients make progress while the cut
// member's clients make none (it has no quorum: no raft progress); after
// the heal its clients make progress again and the replicas agree, and the
// trial has no finding: the cut member's expected unavailability is not a
// bug. GOFAULT_TEST_WORKDIR reuses a work dir (and its etcd build).
func TestEtcdPartition(t *testing.T) {
	tr := etcdCutTrial(t, "test-cut-n1", "partition")
	in := tr.Injections[0]
	if in.Kind != catalog.KindPartition || in.Node != "n1" || in.Delay != partitionFor {
		t.Fatalf("injection %+v, want a partition of n1", in)
	}
	from, until := in.Time, in.Time.Add(in.Delay)
	t.Logf("n1 cut off %s at %s (role %s)", in.Delay, in.SiteID, in.Role)
	progress, after, seen := cutProgress(tr, from, until, "n1")
	t.Logf("successful operations during the cut by node %v; n1's after the heal %d; n1's during the cut %v", progress, after, seen)
	// None that needs the raft group. A Status, answered alone, is no
	// progress: a fresh-check of 2026-12-07 counted one success of the
	// cut member, and the next run, which logs what it did, saw a Status.
	if progress["n1"] > 0 {
		t.Errorf("the cut member's clients made progress during the partition: %d operations (%v)", progress["n1"], seen)
	}
	if progress["n2"]+progress["n3"] == 0 {
		t.Errorf("the other members' clients made no progress during the partition")
	}
	if after == 0 {
		t.Errorf("the cut member's clients made no progress after the heal")
	}
	// A leader among the others while n1 is cut off.
	leader := map[string]bool{}
	for _, rc := range tr.Roles {
		if rc.Time.After(until) {
			break
		}
		leader[rc.Node] = rc.Role == "StateLeader"
	}
	if !leader["n2"] && !leader["n3"] {
		t.Errorf("no leader among n2, n3 by the end of the partition; role changes %+v", tr.Roles)
	}
	if leader["n1"] {
		t.Errorf("the cut member still leads at the end of the partition; role changes %+v", tr.Roles)
	}
	for _, v := range tr.Verdicts {
		if v.Failed {
			t.Errorf("finding %s: %s", v.Checker, v.Symptom)
		}
	}
	if tr.Status != record.StatusOK {
		t.Errorf("trial status %s", tr.Status)
	}
}

// TestEtcdDisconnect cuts the leader of a real etcd cluster apart from one
// follower for 3s under the workload, in situ: their rafthttp calls to
// each other fail or stall, their calls to the third member run. During
// the disconnect the leader keeps leading (the third member is its
// quorum), the third member's and the leader's clients make progress, and
// the cut follower's make none (it hears no leader and, with pre-vote, the
// third member, still hearing the leader, grants it no election); after
// the heal it catches up, the replicas agree and the trial has no finding.
func TestEtcdDisconnect(t *testing.T) {
	tr := etcdCutTrial(t, "test-disconnect-leader", "disconnect")
	in := tr.Injections[0]
	if in.Kind != catalog.KindDisconnect || in.Peer == "" || in.Peer == in.Node || in.Delay != partitionFor {
		t.Fatalf("injection %+v, want a disconnect of the leader from a follower", in)
	}
	leaderNode, cut := in.Node, in.Peer
	from, until := in.Time, in.Time.Add(in.Delay)
	t.Logf("leader %s disconnected from %s for %s at %s", leaderNode, cut, in.Delay, in.SiteID)
	progress, after, seen := cutProgress(tr, from, until, cut)
	t.Logf("successful operations during the disconnect by node %v; %s's after the heal %d; %s's during the disconnect %v", progress, cut, after, cut, seen)
	// The cut follower's clients are all but stopped: each of the others
	// makes ten times its progress or more (requests a member answers
	// alone, as Status, not counted: cutProgress). Not none: a
	// fresh-check once counted 1 success on the cut member against 77
	// and 70, before such requests were left out (a Status, as in the two
	// runs of 2026-12-07 that logged what the cut member did); a
	// disconnect that did not take effect gives the cut member as many
	// as the others.
	for _, n := range []string{"n1", "n2", "n3"} {
		if n == cut {
			continue
		}
		if progress[n] == 0 {
			t.Errorf("%s's clients made no progress during the disconnect (only %s was cut from %s)", n, cut, leaderNode)
		}
		if progress[cut]*10 > progress[n] {
			t.Errorf("the cut follower's clients made progress during the disconnect: %d operations against %s's %d", progress[cut], n, progress[n])
		}
	}
	if after == 0 {
		t.Errorf("the cut follower's clients made no progress after the heal")
	}
	for _, rc := range tr.Roles {
		if rc.Time.After(from) && rc.Time.Before(until) && rc.Role == "StateLeader" && rc.Node != leaderNode {
			t.Errorf("%s became leader during the disconnect; role changes %+v", rc.Node, tr.Roles)
		}
	}
	for _, v := range tr.Verdicts {
		if v.Failed {
			t.Errorf("finding %s: %s", v.Checker, v.Symptom)
		}
	}
	if tr.Status != record.StatusOK {
		t.Errorf("trial status %s", tr.Status)
	}
}

// etcdCutTrial runs one fault trial on real etcd under policy, allowing
// fault kind kind, and returns the trial that injected. It skips with
// -short. GOFAULT_TEST_WORKDIR reuses a work dir (and its etcd build).
func etcdCutTrial(t *testing.T, policyName, kind string) *record.Trial {
	t.Helper()
	if testing.Short() {
		t.Skip("builds etcd and runs a real cluster")
	}
	work := os.Getenv("GOFAULT_TEST_WORKDIR")
	if work == "" {
		work = t.TempDir()
	}
	cfg, err := config.Open("../targets/etcd/gofault.yaml",
		config.Known{Policies: policy.Names(), Checkers: check.Names()},
		"workdir="+work, "checkers.baseline=1", "checkers.progress=3s", "policy.name="+policyName,
		"faults.kinds=["+kind+"]", "workload.env.ETCD_WORKLOAD_DURATION=8s")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Run(context.Background(), Options{Config: cfg, Trials: 1})
	if err != nil {
		t.Fatal(err)
	}
	trials := storedTrials(t, sum)
	for _, x := range trials {
		if len(x.Injections) > 0 {
			return x
		}
	}
	t.Fatalf("no trial injected a %s: %+v", kind, trials)
	return nil
}

// answeredAlone are the etcd requests a member answers from its own
// state, without its raft group (the maintenance API's Status, HashKV and
// Defragment): a cut member answers them as well as any other.
var answeredAlone = map[string]bool{"status": true, "hashkv": true, "defragment": true}

// cutProgress counts each node's successful client operations that need
// the raft group while a cut from from to until lasted (from 1s in:
// requests in flight when it came may still end), and node's after it;
// seen lists node's successful requests during the cut, those answered
// alone marked so.
func cutProgress(tr *record.Trial, from, until time.Time, node string) (during map[string]int, after int, seen []string) {
	during = map[string]int{}
	for _, e := range tr.Client {
		name := ""
		switch {
		case e.Kind == record.EvProgress:
			name, _, _ = strings.Cut(e.Msg, " ")
		case e.Kind == record.EvOp && e.Op != nil && !e.Op.Unknown:
			name = e.Op.Kind
		default:
			continue
		}
		if e.Time.After(from.Add(time.Second)) && e.Time.Before(until) {
			if e.Node == node {
				if answeredAlone[name] {
					seen = append(seen, name+" (answered alone)")
				} else {
					seen = append(seen, name)
				}
			}
			if !answeredAlone[name] {
				during[e.Node]++
			}
		}
		if e.Node == node && e.Time.After(until) {
			after++
		}
	}
	return during, after, seen
}
