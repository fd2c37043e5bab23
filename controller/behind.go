package controller

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
)

// A hold "behind=N" (held.go) lasts until the cut members' log is at
// least N entries behind the cluster's. gofault reads no log: it measures
// from what the members say in their peer messages, generically, with no
// code of the target's. Every observed variable whose name says it holds
// a commit index (catalog.CommitVar: etcd's msg.Commit, hashicorp/raft's
// msg.LeaderCommitIndex, nats-server's msg.commit and node.commit) is one;
// for each member the session keeps the highest value any of them had at
// an observation of that member (s.commits). Then
//
//	behind = (the highest commit index seen at any member other than
//	          the cut ones, i.e. what the leader advertises)
//	       − (the highest the cut members had when the hold began)
//
// Commit indexes, not log lengths: they are what every protocol sends in
// its messages (a leader's commit index in each append and heartbeat, a
// node's own after it handled one), they only grow, and entries committed
// without a member are exactly what it must later catch up on, from the
// log or from a snapshot once the leader compacted past it. What the cut
// members observe after the hold began never counts: their commit index
// stands still while cut, and a stale leader cut off would count its own.
//
// Its limits: observations flow only while a plan asks for them
// (wire.FlagObserve): the policy's plan (cofi's), or the hold's own from
// its start. A cut member that observed no commit index before the cut,
// as when no plan asked for observations, counts from the highest commit
// index seen at the others when the hold began, or the first one seen
// after: what the cluster had committed then, which a member in step had
// too, so a member already lagging at the cut counts as less behind than
// it is. When processes hold members (TrialSpec.Members) one process
// observes for them all, the cut ones included. A target whose catalog
// observes no commit index cannot take the condition: the campaign
// refuses it (campaign.checkHolds) and the policies never offer it.

// commitAt is a commit index seen, and whose it was.
type commitAt struct {
	index int64
	known bool // an index was seen
	own   bool // the cut members' own (the others' when the hold began, or after, when false)
}

// commitIndex returns the highest of vals, the values of point pt's Vars,
// that holds a commit index (catalog.CommitVar); ok is false when none
// does. A zero is none: a message that carries no commit index (a
// follower's answer, a vote) leaves the field zero, and a cluster that
// committed nothing yet has no entry to fall behind on.
func commitIndex(pt *catalog.ObservePoint, vals []int64) (index int64, ok bool) {
	for i, v := range pt.Vars {
		if i < len(vals) && vals[i] > 0 && catalog.CommitVar(v.Name) && (!ok || vals[i] > index) {
			index, ok = vals[i], true
		}
	}
	return index, ok
}

// highestCommit returns the highest commit index seen at the members
// that in says are in, and whether one was.
func (s *session) highestCommit(in func(node string) bool) (index int64, ok bool) {
	for n, c := range s.commits {
		if in(n) && (!ok || c > index) {
			index, ok = c, true
		}
	}
	return index, ok
}

// commitBase is the commit index that the hold of members measures from:
// the highest they had themselves, or else the others' highest now (none
// known: the first one seen at the others, commitSeen).
func (s *session) commitBase(members []string) commitAt {
	if c, ok := s.highestCommit(func(n string) bool { return slices.Contains(members, n) }); ok {
		return commitAt{index: c, known: true, own: true}
	}
	c, ok := s.highestCommit(func(n string) bool { return !slices.Contains(members, n) })
	return commitAt{index: c, known: ok}
}

// commitSeen takes in an observation of node at point pt, with values
// vals, at now: the commit index it carries raises node's (s.commits),
// and each hold "behind=N" whose cut members node is not one of ends when
// the others' commit index passed its base by N (meet), or when its cap
// passed, unmet (so that its observations stop).
func (s *session) commitSeen(node string, pt *catalog.ObservePoint, vals []int64, now time.Time) []Effect {
	c, ok := commitIndex(pt, vals)
	if !ok {
		return nil
	}
	if old, seen := s.commits[node]; !seen || c > old {
		if s.commits == nil {
			s.commits = map[string]int64{}
		}
		s.commits[node] = c
	}
	if len(s.holds) == 0 {
		return nil // the common case: no hold to feed, nor its keys to sort
	}
	var effs []Effect
	for _, key := range s.holdKeys() {
		h := s.holds[key]
		if h.behind == 0 || slices.Contains(h.members, node) {
			continue
		}
		if !h.base.known {
			h.base = commitAt{index: c, known: true}
		}
		top, _ := s.highestCommit(func(n string) bool { return !slices.Contains(h.members, n) })
		if until, on := s.holdEnd(key, h); top-h.base.index >= h.behind || !on || !now.Before(until) {
			effs = append(effs, s.meet(key, now, behindText(key, h, top))...)
		}
	}
	return effs
}

// behindText says how far the cut members of the hold h of key fell
// behind: "n3 was 57 entries behind: commit 212 at the others, 155 at n3
// when cut".
func behindText(key holdKey, h *hold, top int64) string {
	who, was := strings.Join(h.members, ", "), "was"
	if len(h.members) > 1 {
		was = "were"
	}
	whose := who
	if !h.base.own {
		whose = "the others"
	}
	when := "when cut"
	if key.shape == holdDelay {
		when = "when its call was held"
	}
	return fmt.Sprintf("%s %s %d entries behind: commit %d at the others, %d at %s %s", who, was, top-h.base.index, top, h.base.index, whose, when)
}

// observing reports whether node's plan asks for observations for the
// holds "behind=N": some such hold is on whose cut members node is not
// one of (their own observations do not count), or any such hold when
// processes hold members (one process observes for them all).
func (s *session) observing(node string) bool {
	for _, h := range s.holds {
		if h.behind > 0 && (!slices.Contains(h.members, node) || s.spec.Members) {
			return true
		}
	}
	return false
}
