// Package invariant mines CoFI's cross-node invariants from the peer
// messages observed in fault-free trials, in Go (no Daikon), and checks
// observations against them.
//
// An invariant says that after a member handled a message of one type at
// one observation point, one of the sender's values that the message
// carries (msg.Term, msg.From, ...) equals one of the receiver's state
// variables (node.Term, node.lead, ...): the receiver agrees with the
// sender. It is kept when it held at every such observation of every
// fault-free trial, and was observed at least MinCount times.
//
// An invariant of the other kind (A is record.AllMembers) says that one of the
// receivers' state variables is equal on all members after they handle a
// message of that type: each member's value there equals the value the
// others had after their latest such message (node.Term after a
// heartbeat: the members agree on the term).
package invariant

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// MinCount is how often an invariant must have been observed, over all
// fault-free trials, to be kept.
const MinCount = 20

// pair is a candidate: the indices of A and B in a point's values (-1 is
// the message's sender, msg.From).
type pair struct{ a, b int }

type key struct {
	point uint32
	typ   int64
}

// candidates returns the (sender value, receiver variable) pairs of a
// handled point.
func candidates(pt *catalog.ObservePoint) []pair {
	var msg, node []int
	for i, v := range pt.Vars {
		switch {
		case strings.HasPrefix(v.Name, "msg."):
			msg = append(msg, i)
		case strings.HasPrefix(v.Name, "node."):
			node = append(node, i)
		}
	}
	var out []pair
	for _, b := range node {
		out = append(out, pair{-1, b})
		for _, a := range msg {
			out = append(out, pair{a, b})
		}
	}
	return out
}

func value(o *record.Observation, i int) (int64, bool) {
	if i < 0 {
		return int64(o.From), true
	}
	if i >= len(o.Values) {
		return 0, false
	}
	return o.Values[i], true
}

func name(pt *catalog.ObservePoint, i int) string {
	if i < 0 {
		return "msg.From"
	}
	return pt.Vars[i].Name
}

// Mine returns the invariants that hold in every one of trials (each the
// observations of one fault-free trial) and were observed at least
// minCount times (MinCount when ≤ 0), sorted by ID.
func Mine(cat *catalog.Catalog, trials [][]record.Observation, minCount int) []record.Invariant {
	if minCount <= 0 {
		minCount = MinCount
	}
	type stat struct {
		count, trials int
		broken        bool
		last          int // the last trial counted
	}
	stats := map[key]map[pair]*stat{}
	for ti, obs := range trials {
		for i := range obs {
			o := &obs[i]
			pt := cat.Observe(o.Point)
			if pt == nil || pt.When != catalog.ObserveHandled {
				continue
			}
			k := key{o.Point, o.Type}
			m := stats[k]
			if m == nil {
				m = map[pair]*stat{}
				for _, p := range candidates(pt) {
					m[p] = &stat{last: -1}
				}
				stats[k] = m
			}
			for p, st := range m {
				if st.broken {
					continue
				}
				a, okA := value(o, p.a)
				b, okB := value(o, p.b)
				if !okA || !okB || a != b {
					st.broken = true
					continue
				}
				st.count++
				if st.last != ti {
					st.trials++
					st.last = ti
				}
			}
		}
	}
	var out []record.Invariant
	for k, m := range stats {
		pt := cat.Observe(k.point)
		for p, st := range m {
			if st.broken || st.count < minCount {
				continue
			}
			v := record.Invariant{Point: pt.ID, Type: k.typ, A: name(pt, p.a), B: name(pt, p.b), Count: st.count, Trials: st.trials}
			v.ID = fmt.Sprintf("%s|%d|%s==%s", v.Point, v.Type, v.A, v.B)
			out = append(out, v)
		}
	}
	out = append(out, mineMembers(cat, trials, minCount)...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// mineMembers returns the invariants that a receiver's variable is equal
// on all members at a point and message type: at every observation there,
// once two members or more were observed, the member's value equals every
// other member's latest.
func mineMembers(cat *catalog.Catalog, trials [][]record.Observation, minCount int) []record.Invariant {
	type varKey struct {
		key
		v int
	}
	type stat struct {
		count, trials int
		broken        bool
		members       map[string]bool
	}
	stats := map[varKey]*stat{}
	for _, obs := range trials {
		latest := map[varKey]map[string]int64{}
		counted := map[varKey]bool{}
		for i := range obs {
			o := &obs[i]
			pt := cat.Observe(o.Point)
			if pt == nil || pt.When != catalog.ObserveHandled {
				continue
			}
			for vi, v := range pt.Vars {
				if !strings.HasPrefix(v.Name, "node.") || vi >= len(o.Values) {
					continue
				}
				k := varKey{key{o.Point, o.Type}, vi}
				st := stats[k]
				if st == nil {
					st = &stat{members: map[string]bool{}}
					stats[k] = st
				}
				m := latest[k]
				if m == nil {
					m = map[string]int64{}
					latest[k] = m
				}
				m[o.Node] = o.Values[vi]
				st.members[o.Node] = true
				if len(m) < 2 || st.broken {
					continue
				}
				for _, x := range m {
					if x != o.Values[vi] {
						st.broken = true
					}
				}
				st.count++
				if !counted[k] {
					counted[k] = true
					st.trials++
				}
			}
		}
	}
	var out []record.Invariant
	for k, st := range stats {
		if st.broken || st.count < minCount || len(st.members) < 2 {
			continue
		}
		pt := cat.Observe(k.point)
		v := record.Invariant{Point: pt.ID, Type: k.typ, A: record.AllMembers, B: pt.Vars[k.v].Name, Count: st.count, Trials: st.trials}
		v.ID = fmt.Sprintf("%s|%d|%s==%s", v.Point, v.Type, v.A, v.B)
		out = append(out, v)
	}
	return out
}

// Set indexes invariants for checking observations against them.
type Set struct {
	by      map[key][]checkable
	byType  map[int64][]*record.Invariant
	members map[key][]checkable
}

type checkable struct {
	inv  *record.Invariant
	a, b int
}

// NewSet indexes invs by the observation points of cat; an invariant whose
// point or variables cat no longer has is left out.
func NewSet(cat *catalog.Catalog, invs []record.Invariant) *Set {
	s := &Set{by: map[key][]checkable{}, byType: map[int64][]*record.Invariant{}, members: map[key][]checkable{}}
	ids := map[string]*catalog.ObservePoint{}
	for i := range cat.ObservePoints {
		ids[cat.ObservePoints[i].ID] = &cat.ObservePoints[i]
	}
	for i := range invs {
		v := &invs[i]
		pt := ids[v.Point]
		if pt == nil {
			continue
		}
		if v.A == record.AllMembers {
			if b := varIndex(pt, v.B); b >= 0 {
				k := key{pt.Index, v.Type}
				s.members[k] = append(s.members[k], checkable{inv: v, a: -2, b: b})
			}
			continue
		}
		a, b := varIndex(pt, v.A), varIndex(pt, v.B)
		if a == -2 || b == -2 {
			continue
		}
		k := key{pt.Index, v.Type}
		s.by[k] = append(s.by[k], checkable{inv: v, a: a, b: b})
		s.byType[v.Type] = append(s.byType[v.Type], v)
	}
	return s
}

func varIndex(pt *catalog.ObservePoint, n string) int {
	if n == "msg.From" {
		return -1
	}
	for i, v := range pt.Vars {
		if v.Name == n {
			return i
		}
	}
	return -2
}

// Len is the number of invariants in the set.
func (s *Set) Len() int {
	n := 0
	for _, cs := range s.by {
		n += len(cs)
	}
	for _, cs := range s.members {
		n += len(cs)
	}
	return n
}

// Diverged returns the all-members invariants (A is record.AllMembers) that
// observation o breaks: its value of B differs from another member's
// latest value of B, in others (member → variable name → value).
func (s *Set) Diverged(o *record.Observation, pt *catalog.ObservePoint, others map[string]map[string]int64) []*record.Invariant {
	var out []*record.Invariant
	for _, c := range s.members[key{o.Point, o.Type}] {
		b, ok := value(o, c.b)
		if !ok {
			continue
		}
		for node, vars := range others {
			if x, ok := vars[pt.Vars[c.b].Name]; ok && node != o.Node && x != b {
				out = append(out, c.inv)
				break
			}
		}
	}
	return out
}

// Violated returns the invariants that observation o breaks.
func (s *Set) Violated(o *record.Observation) []*record.Invariant {
	var out []*record.Invariant
	for _, c := range s.by[key{o.Point, o.Type}] {
		a, okA := value(o, c.a)
		b, okB := value(o, c.b)
		if okA && okB && a != b {
			out = append(out, c.inv)
		}
	}
	return out
}

// Pending returns the invariants that a message about to be sent breaks
// for now: o is observed at a send point (pt), and receiver holds the
// receiver's state variables as last observed (by name, e.g.
// "node.lastIndex()"). An invariant of o's message type whose A the
// message carries is pending when the receiver's B differs: once the
// receiver has handled the message they agree again, so until then the
// two members are inconsistent — the transient inconsistent states of
// partition-free runs where CoFI starts its partitions (Algorithm 1,
// Line 1). A B the receiver was never observed with is not compared.
func (s *Set) Pending(o *record.Observation, pt *catalog.ObservePoint, receiver map[string]int64) []*record.Invariant {
	var out []*record.Invariant
	for _, v := range s.byType[o.Type] {
		b, ok := receiver[v.B]
		if !ok {
			continue
		}
		i := varIndex(pt, v.A)
		if i == -2 {
			continue
		}
		if a, ok := value(o, i); ok && a != b {
			out = append(out, v)
		}
	}
	return out
}

// Brought returns the invariants of a handled observation o whose value
// the message brought its receiver: before handling it, the receiver's B
// (prev, its state variables as last observed, by name) differed from the
// message's A, which it now holds. Such a message was pending (Pending)
// until it was handled; unlike Pending, which reads the receiver's state
// at the sender's send, this needs no order between the two members'
// observations.
func (s *Set) Brought(o *record.Observation, pt *catalog.ObservePoint, prev map[string]int64) []*record.Invariant {
	var out []*record.Invariant
	for _, c := range s.by[key{o.Point, o.Type}] {
		if c.a < 0 {
			continue // msg.From: who sent it, not a value it brings
		}
		a, okA := value(o, c.a)
		b, okB := value(o, c.b)
		before, known := prev[pt.Vars[c.b].Name]
		if okA && okB && known && a == b && before != a {
			out = append(out, c.inv)
		}
	}
	return out
}
