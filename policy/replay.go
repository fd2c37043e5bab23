package policy

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// Replay re-injects the faults of a recorded trial: each recorded injection
// is granted, after the previous one was granted, at the first request from
// the same node, site and call stack (by StackKey, or function and line
// after MatchLines) that is at least the
// recorded occurrence of a request at that site on that node — the 40th
// log sync of the leader, not its first, when the original struck the
// 40th. Sites are matched by their stable IDs, so a replay works on a
// rebuilt binary. A fault that struck the leader, and every leadercut
// (record.Injection.OnLeader), is replayed at the member that leads at the
// recorded site in the re-run, whichever that is; any other fault on the
// recorded member.
type Replay struct {
	cat     *catalog.Catalog
	want    []replayed
	next    int
	sites   []uint32
	nodes   []string
	missing []string
	// observed are the partitions started at observation points (cofi),
	// replayed at the same observation (replay_partition.go).
	observed replayObserved
	// lines: stacks match function and line (MatchLines).
	lines bool
}

type replayed struct {
	inj   record.Injection
	site  *catalog.Site
	fault Fault
	stack string
	// onLeader: the fault struck the leader, and strikes whichever
	// member leads (req.Role is inj.Role), not inj.Node
	// (record.Injection.OnLeader).
	onLeader bool
}

// NewReplay builds a replay of injections against cat. Injections whose site
// or error value no longer exists are reported by Missing and skipped.
func NewReplay(cat *catalog.Catalog, injections []record.Injection) *Replay {
	r := &Replay{cat: cat}
	byID := make(map[string]*catalog.Site, len(cat.Sites))
	for i := range cat.Sites {
		byID[cat.Sites[i].ID] = &cat.Sites[i]
	}
	live := map[uint32]bool{}
	nodes := map[string]bool{}
	anyNode := false // a fault on the leader: whichever member leads
	for _, inj := range injections {
		s := byID[inj.SiteID]
		if s == nil && r.observed.add(cat, inj) {
			continue
		}
		if s == nil {
			r.missing = append(r.missing, fmt.Sprintf("site %s is not in the catalog", inj.SiteID))
			continue
		}
		f, err := faultOf(s, inj)
		if err != nil {
			r.missing = append(r.missing, err.Error())
			continue
		}
		onLeader := inj.OnLeader(cat.Role)
		r.want = append(r.want, replayed{inj: inj, site: s, fault: f, stack: StackKey(inj.Stack), onLeader: onLeader})
		live[s.Index] = true
		nodes[inj.Node] = true
		anyNode = anyNode || onLeader
	}
	for s := range live {
		r.sites = append(r.sites, s)
	}
	sort.Slice(r.sites, func(i, j int) bool { return r.sites[i] < r.sites[j] })
	if !anyNode {
		for n := range nodes {
			r.nodes = append(r.nodes, n)
		}
		sort.Strings(r.nodes)
	}
	return r
}

// faultOf rebuilds the fault of a recorded injection at site s.
func faultOf(s *catalog.Site, inj record.Injection) (Fault, error) {
	switch inj.Kind {
	case catalog.KindError:
		for i, e := range s.Errors {
			if e.Name == inj.Error {
				return Fault{Kind: catalog.KindError, Error: i + 1}, nil
			}
		}
		return Fault{}, fmt.Errorf("site %s no longer returns %s", s.ID, inj.Error)
	case catalog.KindDelay:
		return Fault{Kind: catalog.KindDelay, Delay: heldLength(inj), Until: inj.Until}, nil
	case catalog.KindCrash, catalog.KindPowerLoss, catalog.KindReboot, catalog.KindCrashAfter, catalog.KindPowerLossAfter:
		return Fault{Kind: inj.Kind}, nil
	case catalog.KindPartition, catalog.KindLeaderCut, catalog.KindDisconnect, catalog.KindOneWay:
		return Fault{Kind: inj.Kind, Delay: heldLength(inj), Until: inj.Until}, nil
	case catalog.KindPause, catalog.KindStop:
		return Fault{Kind: inj.Kind, Delay: inj.Delay, Timer: inj.Error}, nil
	case catalog.KindSplit:
		// The same sides: the recorded side, against the rest.
		return Fault{Kind: inj.Kind, Delay: heldLength(inj), Until: inj.Until, Side: slices.Clone(inj.Side)}, nil
	case catalog.KindCorrupt, catalog.KindTorn, catalog.KindRot:
		p, ok := ParsePick(inj.Error)
		if !ok {
			return Fault{}, fmt.Errorf("the %s fault at site %s records no pick (%q)", inj.Kind, s.ID, inj.Error)
		}
		if !s.Kind.Has(inj.Kind.SiteKind()) {
			return Fault{}, fmt.Errorf("site %s can no longer take a %s fault", s.ID, inj.Kind)
		}
		return Fault{Kind: inj.Kind, Pick: p}, nil
	}
	return Fault{}, fmt.Errorf("unknown fault kind %q", inj.Kind)
}

// heldLength is how long the cut or delay of a recorded injection may
// last: its length, or for one held until a condition
// (record.Injection.Until, which the fault keeps) its cap, so that it is
// held until the same condition with the same cap.
func heldLength(inj record.Injection) time.Duration {
	if inj.Until != "" {
		return cmp.Or(inj.Cap, inj.Delay)
	}
	return inj.Delay
}

// MatchLines makes the replay match a recorded stack's lines as well as
// its functions. Use it when the replay runs the original's very build:
// then a caller's two calls of one function (the two writes of a
// snapshot) are different places, as they were in the original trial.
func (r *Replay) MatchLines() {
	r.lines = true
	for i := range r.want {
		r.want[i].stack = lineStackKey(r.want[i].inj.Stack)
	}
}

// lineStackKey is StackKey with each frame's file and line.
func lineStackKey(stack []record.Frame) string {
	h := fnv.New64a()
	for _, f := range stack {
		fmt.Fprintf(h, "%s\x00%s:%d\x00", f.Func, f.File, f.Line)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// Missing lists the recorded injections that cannot be replayed.
func (r *Replay) Missing() []string { return r.missing }

// Name implements Policy.
func (r *Replay) Name() string { return "replay" }

// Begin implements Policy.
func (r *Replay) Begin(TrialInfo) Plan {
	r.next = 0
	r.observed.begin()
	if len(r.want) == 0 {
		return Plan{Observe: len(r.observed.want) > 0, States: true}
	}
	return Plan{Sites: r.sites, Nodes: r.nodes, Stacks: true, States: true, Observe: len(r.observed.want) > 0}
}

// Decide implements Policy.
func (r *Replay) Decide(req *Request) Decision {
	if r.next >= len(r.want) || req.Site == nil {
		return Decision{Done: r.next >= len(r.want) && r.observed.done()}
	}
	w := &r.want[r.next]
	if req.Site.ID != w.site.ID {
		return Decision{}
	}
	if w.onLeader && req.Role != w.inj.Role {
		return Decision{} // the same call on a member that does not lead
	}
	if !w.onLeader && req.Node != w.inj.Node {
		return Decision{}
	}
	if req.Occurrence < w.inj.Occurrence {
		return Decision{}
	}
	switch w.inj.Kind {
	case catalog.KindDisconnect, catalog.KindOneWay, catalog.KindSplit:
		if req.Peer != w.inj.Peer {
			return Decision{} // the same call, to another member
		}
	}
	if len(w.inj.Stack) > 0 && r.stackKey(req.Stack) != w.stack {
		return Decision{}
	}
	r.next++
	last := r.next >= len(r.want) && r.observed.done()
	return Decision{Fault: w.fault, Done: last, Last: last}
}

// stackKey is the key that a request's stack is matched by.
func (r *Replay) stackKey(stack []record.Frame) string {
	if r.lines {
		return lineStackKey(stack)
	}
	return StackKey(stack)
}

// End implements Policy.
func (r *Replay) End(Outcome) {}
