package check

import (
	"slices"
	"testing"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

func TestSlow(t *testing.T) {
	// slowed: n1, the leader, is slowed 8 s from 1 s; its clients
	// and, unless a case changes them, n2's and n3's clients stall for
	// the delay's length, failing with timeouts, while n1 keeps saying it
	// leads.
	slowed := func(kind catalog.Kind, mod func(*record.Injection)) *trialB {
		b := newTrial("n1", "n2", "n3")
		for _, c := range []string{"n1/0", "n2/0", "n3/0"} {
			b.progress(c, 0, 1000, 100).errors(c, 1500, 8500, 1000).progress(c, 9000, 10000, 100)
		}
		b.ev(3000, "n2/0", record.EvHealthy, record.HealthLeader).ev(3000, "n1/0", record.EvHealthy, record.HealthLeader).
			ev(5000, "n3/0", record.EvUnhealthy, "no leader")
		return b.inject(1000, "n1", kind, func(in *record.Injection) {
			in.Delay, in.Role = 8*time.Second, "StateLeader"
			if mod != nil {
				mod(in)
			}
		})
	}
	ownOnly := func(kind catalog.Kind) *trialB {
		// Only the slowed member's clients stall; the others go on.
		b := newTrial("n1", "n2", "n3").progress("n2/0", 0, 10000, 100).progress("n3/0", 0, 10000, 100).
			progress("n1/0", 0, 1000, 100).errors("n1/0", 1500, 8500, 1000).progress("n1/0", 9000, 10000, 100)
		return b.inject(1000, "n1", kind, func(in *record.Injection) { in.Delay, in.Role = 8*time.Second, "StateLeader" })
	}
	failover := func() *trialB {
		// The others stall 2.5 s, then n2 takes over: within the bound.
		b := newTrial("n1", "n2", "n3").
			progress("n1/0", 0, 1000, 100).errors("n1/0", 1500, 8500, 1000).progress("n1/0", 9000, 10000, 100).
			progress("n2/0", 0, 1000, 100).errors("n2/0", 1500, 3000, 500).progress("n2/0", 3500, 10000, 100).
			progress("n3/0", 0, 1000, 100).errors("n3/0", 1500, 3000, 500).progress("n3/0", 3500, 10000, 100).
			inject(1000, "n1", catalog.KindDelay, func(in *record.Injection) { in.Delay, in.Role = 8*time.Second, "StateLeader" })
		b.tr.Roles = []record.RoleChange{{Node: "n2", Role: "StateLeader", Time: at(3200)}}
		return b
	}
	stallBefore := func() *trialB {
		// n2 hung from 1 s, long before the delay on n1 at 7.5 s: not the
		// slow member's doing (the hang checker reports it).
		return newTrial("n1", "n2", "n3").progress("n1/0", 0, 10000, 100).progress("n3/0", 0, 10000, 100).
			progress("n2/0", 0, 1000, 100).progress("n2/0", 9000, 10000, 100).
			inject(7500, "n1", catalog.KindDelay, func(in *record.Injection) { in.Delay = time.Second })
	}
	twoSlowed := func() *trialB {
		// n1 and n2 both delayed: no majority left to route around them.
		return slowed(catalog.KindDelay, nil).inject(1000, "n2", catalog.KindDelay, func(in *record.Injection) { in.Delay = 8 * time.Second })
	}
	killedOthers := func() *trialB {
		// n2 was killed and n3 delayed: n2's failing clients are the crash
		// fault's; n1's kept going.
		return newTrial("n1", "n2", "n3").progress("n1/0", 0, 10000, 100).
			progress("n2/0", 0, 1000, 100).errors("n2/0", 1500, 8500, 1000).
			progress("n3/0", 0, 1000, 100).errors("n3/0", 1500, 8500, 1000).progress("n3/0", 9000, 10000, 100).
			inject(1000, "n2", catalog.KindCrash, nil).node("n2", func(n *record.Node) { n.Killed = true }).
			inject(1000, "n3", catalog.KindDelay, func(in *record.Injection) { in.Delay = 8 * time.Second })
	}
	leaderWait := []SlowWait{{Kind: catalog.KindDelay, Role: "StateLeader", Reason: "the leader is static: no failover by design"}}
	const symptomDelay = "one slow member stalled the other members' clients (delay of a StateLeader)"
	tests := []struct {
		name  string
		b     *trialB
		waits []SlowWait
		bound time.Duration
		want  verdictWant
	}{
		{"fault-free", healthy(), nil, 0, verdictWant{}},
		{"delay on the leader stalls the others' clients", slowed(catalog.KindDelay, nil), nil,
			0, verdictWant{failed: true, symptom: symptomDelay, nodes: []string{"n2", "n3"},
				ev: "client n2/0 (node n2): no progress from 05:00:01.000 to 05:00:09.000 (8s, 8s after the fault struck; bound 3s)"}},
		{"it says who was slow", slowed(catalog.KindDelay, nil), nil,
			0, verdictWant{failed: true, symptom: symptomDelay, ev: "slow member: delay n1 (StateLeader) at site s1 from 05:00:01.000 to 05:00:09.000 (8s)"}},
		{"it says leadership did not move and who said it leads", slowed(catalog.KindDelay, nil), nil,
			0, verdictWant{failed: true, symptom: symptomDelay, ev: "leadership: did not move; said to lead meanwhile: [n1 n2]"}},
		{"it says what the members said of their health", slowed(catalog.KindDelay, nil), nil,
			0, verdictWant{failed: true, symptom: symptomDelay, ev: "health meanwhile: n1 healthy 1, unhealthy 0; n2 healthy 1, unhealthy 0; n3 healthy 0, unhealthy 1"}},
		{"the slowed member's own clients keep the delay's allowance", ownOnly(catalog.KindDelay), nil, 0, verdictWant{}},
		{"failover within the bound", failover(), nil, 0, verdictWant{}},
		{"a failover past a shorter bound is reported with the move", failover(), nil, time.Second,
			verdictWant{failed: true, symptom: symptomDelay, nodes: []string{"n2", "n3"}, ev: "leadership: moved: n2 became StateLeader at 05:00:03.200"}},
		{"partition of the leader", slowed(catalog.KindPartition, nil), nil,
			0, verdictWant{failed: true, symptom: "one slow member stalled the other members' clients (partition of a StateLeader)", nodes: []string{"n2", "n3"}}},
		{"disconnect: both ends are hit, the third member's clients are not", slowed(catalog.KindDisconnect, func(in *record.Injection) { in.Peer = "n2" }), nil,
			0, verdictWant{failed: true, symptom: "one slow member stalled the other members' clients (disconnect of a StateLeader)", nodes: []string{"n3"},
				ev: "slow member: disconnect n1 (StateLeader) cut from n2"}},
		{"oneway: both ends are hit, the third member's clients are not", slowed(catalog.KindOneWay, func(in *record.Injection) { in.Peer = "n2" }), nil,
			0, verdictWant{failed: true, symptom: "one slow member stalled the other members' clients (oneway of a StateLeader)", nodes: []string{"n3"},
				ev: "slow member: oneway n1 (StateLeader) cut from reaching n2 (n2 still reached it)"}},
		{"split of the leader alone: the majority's clients are judged", slowed(catalog.KindSplit, func(in *record.Injection) { in.Peer = "n2" }), nil,
			0, verdictWant{failed: true, symptom: "one slow member stalled the other members' clients (split of a StateLeader)", nodes: []string{"n2", "n3"},
				ev: "slow member: split side n1 (StateLeader) cut from the other members"}},
		{"leader cut: the others' clients are judged, as for a partition", slowed(catalog.KindLeaderCut, nil), nil,
			0, verdictWant{failed: true, symptom: "one slow member stalled the other members' clients (leadercut of a StateLeader)", nodes: []string{"n2", "n3"}}},
		{"excused by the profile, and shown", slowed(catalog.KindDelay, nil), leaderWait,
			0, verdictWant{symptom: "informational: a stall the profile excuses (checkers.waits_for_slow)",
				ev: "excused by the profile: client n2/0 (node n2) made no progress from 05:00:01.000 to 05:00:09.000 (8s) during delay n1 (StateLeader) at site s1 from 05:00:01.000 to 05:00:09.000 (8s): the leader is static: no failover by design"}},
		{"the profile's excuse does not hide another role", slowed(catalog.KindDelay, func(in *record.Injection) { in.Role = "StateFollower" }), leaderWait,
			0, verdictWant{failed: true, symptom: "one slow member stalled the other members' clients (delay of a StateFollower)"}},
		{"the profile's excuse does not hide another kind", slowed(catalog.KindPartition, nil), leaderWait,
			0, verdictWant{failed: true, symptom: "one slow member stalled the other members' clients (partition of a StateLeader)"}},
		{"the profile's excuse does not hide another site", slowed(catalog.KindDelay, nil),
			[]SlowWait{{Kind: catalog.KindDelay, Site: "other", Reason: "x"}}, 0, verdictWant{failed: true, symptom: symptomDelay}},
		{"excused on the static leader by member", slowed(catalog.KindPartition, nil),
			[]SlowWait{{Kind: catalog.KindPartition, Node: "n1", Reason: "n1 is the static leader"}}, 0,
			verdictWant{symptom: "informational: a stall the profile excuses (checkers.waits_for_slow)", ev: "n1 is the static leader"}},
		{"the profile's excuse does not hide another member", slowed(catalog.KindDelay, func(in *record.Injection) { in.Node = "n2" }),
			[]SlowWait{{Kind: catalog.KindDelay, Node: "n1", Reason: "n1 is the static leader"}}, 0,
			verdictWant{failed: true, symptom: symptomDelay, nodes: []string{"n1", "n3"}}},
		{"a split of the static leader excused by member, and shown", slowed(catalog.KindSplit, func(in *record.Injection) { in.Peer = "n2" }),
			[]SlowWait{{Kind: catalog.KindSplit, Node: "n1", Reason: "n1 is the static leader"}}, 0,
			verdictWant{symptom: "informational: a stall the profile excuses (checkers.waits_for_slow)", ev: "during split side n1 (StateLeader) cut from the other members"}},
		{"the split excuse does not hide a split struck at another member (planted)", slowed(catalog.KindSplit, func(in *record.Injection) { in.Node, in.Peer = "n2", "n1" }),
			[]SlowWait{{Kind: catalog.KindSplit, Node: "n1", Reason: "n1 is the static leader"}}, 0,
			verdictWant{failed: true, symptom: "one slow member stalled the other members' clients (split of a StateLeader)", nodes: []string{"n1", "n3"}}},
		{"a delay of the leader's call with n3 (its append stream) holds up n3 too: n3's clients keep the delay's allowance, n2's are judged",
			slowed(catalog.KindDelay, func(in *record.Injection) { in.Peer = "n3" }), nil,
			0, verdictWant{failed: true, symptom: symptomDelay, nodes: []string{"n2"}, ev: "slow member: delay n1 (StateLeader) on its call with n3 at site s1"}},
		{"pause of the leader: a stall of the whole member, judged as one", slowed(catalog.KindPause, nil), nil,
			0, verdictWant{failed: true, symptom: "one slow member stalled the other members' clients (pause of a StateLeader)", nodes: []string{"n2", "n3"},
				ev: "slow member: pause n1 (StateLeader) at site s1 from 05:00:01.000 to 05:00:09.000 (8s)"}},
		{"a paused member's own clients keep the pause's allowance", ownOnly(catalog.KindPause), nil, 0, verdictWant{}},
		{"a pause of the static leader excused by member, and shown", slowed(catalog.KindPause, nil),
			[]SlowWait{{Kind: catalog.KindPause, Node: "n1", Reason: "n1 is the static leader"}}, 0,
			verdictWant{symptom: "informational: a stall the profile excuses (checkers.waits_for_slow)", ev: "during pause n1 (StateLeader)"}},
		{"the delay excuse does not hide a pause (planted)", slowed(catalog.KindPause, nil), leaderWait,
			0, verdictWant{failed: true, symptom: "one slow member stalled the other members' clients (pause of a StateLeader)"}},
		{"a stopped member is down, not slow", slowed(catalog.KindStop, nil).node("n1", func(n *record.Node) { n.Killed = true }), nil, 0, verdictWant{}},
		{"a stall that began long before the fault", stallBefore(), nil, 0, verdictWant{}},
		{"half the members slowed", twoSlowed(), nil, 0, verdictWant{}},
		{"killed node's clients excluded", killedOthers(), nil, 0, verdictWant{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkVerdict(t, runOne(t, NameSlow, &Input{Trial: &tc.b.tr, SlowWaits: tc.waits, Progress: tc.bound}), tc.want)
		})
	}
}

// TestShapeQuorum: how the quorum rule counts each partition shape. A
// split takes out each side with no majority — the minority; both halves
// of an even split — and its members' clients get its length; the
// majority's clients do not, unless another fault takes the quorum. A
// one-way cut takes out no member (both ends still reach the others), but
// both ends' clients get its length. A leader cut takes out the leader.
func TestShapeQuorum(t *testing.T) {
	five := []string{"n1", "n2", "n3", "n4", "n5"}
	split := func(nodes []string, side ...string) *trialB {
		return newTrial(nodes...).inject(1000, "n1", catalog.KindSplit, func(in *record.Injection) {
			in.Delay, in.Peer, in.Side = 4*time.Second, "n3", side
		})
	}
	oneway := func() *trialB {
		return newTrial("n1", "n2", "n3").inject(1000, "n1", catalog.KindOneWay, func(in *record.Injection) { in.Delay, in.Peer = 4*time.Second, "n2" })
	}
	for _, tc := range []struct {
		name     string
		b        *trialB
		noQuorum time.Duration
		hit      []string // the members whose clients get the cut's length
	}{
		{"split 2 of 5: the minority is out, the majority keeps the quorum", split(five, "n2"), 0, []string{"n1", "n2"}},
		{"split 1 of 3", split([]string{"n1", "n2", "n3"}), 0, []string{"n1"}},
		{"even split 2 of 4: no side has a majority", split([]string{"n1", "n2", "n3", "n4"}, "n2"), 4 * time.Second, []string{"n1", "n2", "n3", "n4"}},
		{"split 2 of 5 and a crash on the majority side: no quorum until the restart", split(five, "n2").
			inject(2000, "n4", catalog.KindCrash, nil).node("n4", func(n *record.Node) { n.Restarted = []time.Time{at(4000)} }), 2 * time.Second, []string{"n1", "n2"}},
		{"oneway: no member out", oneway(), 0, []string{"n1", "n2"}},
		{"oneway and a crash of the third: one out of three", oneway().inject(2000, "n3", catalog.KindCrash, nil), 0, []string{"n1", "n2"}},
		{"leader cut and a crash: two of three out", newTrial("n1", "n2", "n3").
			inject(1000, "n1", catalog.KindLeaderCut, func(in *record.Injection) { in.Delay, in.Role = 4*time.Second, "StateLeader" }).
			inject(2000, "n3", catalog.KindCrash, nil), 3 * time.Second, []string{"n1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &tc.b.tr
			if got := noQuorum(tr, at(0), at(10000)); got != tc.noQuorum {
				t.Errorf("noQuorum = %v, want %v", got, tc.noQuorum)
			}
			var hit []string
			for _, n := range tr.Nodes {
				if hits(tr, tr.Injections[0], n.Name) {
					hit = append(hit, n.Name)
				}
			}
			if !slices.Equal(hit, tc.hit) {
				t.Errorf("hit %v, want %v", hit, tc.hit)
			}
		})
	}
}
