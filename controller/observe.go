package controller

import (
	"time"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// obsKey counts observations per node and point.
type obsKey struct {
	node  string
	point uint32
}

// observe takes in one observed peer message of node: first the holds
// until a member is N entries behind see the commit index it carries
// (commitSeen); then, when the policy's plan asked for observations, it
// is recorded and, in an armed trial of an Observer policy (cofi), given
// to the policy, and the partition the policy asks for is carried out: a
// start is recorded as a partition injection at the observation point,
// with the policy's reason (the violated invariant) in its Error field; a
// heal shortens the injection to the partition's real length. An
// observation that flows only for the holds is not recorded: what a trial
// records does not depend on them.
func (s *session) observe(node string, e *wire.Event) []Effect {
	pt := s.cat.Observe(uint32(e.A))
	if pt == nil {
		return nil
	}
	vals, err := wire.DecodeValues(e.Data)
	if err != nil {
		return []Effect{{Warn: "controller: bad observation", Args: []any{"node", node, "err", err}}}
	}
	effs := s.commitSeen(node, pt, vals, time.Unix(0, e.Time))
	if !s.plan.Observe {
		return effs
	}
	if s.obsCount == nil {
		s.obsCount = map[obsKey]int{}
	}
	ok := obsKey{node, pt.Index}
	s.obsCount[ok]++
	o := record.Observation{Time: time.Unix(0, e.Time), Node: node, Point: pt.Index, Type: int64(e.B), From: e.C, To: e.D, Values: vals}
	if len(s.obs) < maxObservations {
		s.obs = append(s.obs, o)
	} else {
		s.dropped++
	}
	if s.observer == nil || !s.armed || s.ended {
		return effs
	}
	p := s.observer(&policy.Observation{Trial: s.spec.Index, Point: pt, Observation: o})
	now := o.Time
	if p.Heal != "" {
		if _, cut := s.cuts[p.Heal]; cut {
			if i, ok := s.cutInj[p.Heal]; ok && now.After(s.inj[i].Time) {
				s.inj[i].Delay = now.Sub(s.inj[i].Time)
			}
			effs = append(effs, s.healCut(p.Heal, now)...)
		}
		delete(s.cutInj, p.Heal)
	}
	if _, cut := s.cuts[p.Start]; p.Start != "" && p.For > 0 && !cut {
		in := record.Injection{Time: now, Node: p.Start, SiteID: pt.ID, Kind: catalog.KindPartition,
			Delay: p.For, Error: p.Why, Role: s.role[p.Start], Occurrence: s.obsCount[ok]}
		if node != p.Start {
			in.Observer = node
		}
		s.inj = append(s.inj, in)
		if s.cutInj == nil {
			s.cutInj = map[string]int{}
		}
		s.cutInj[p.Start] = len(s.inj) - 1
		effs = append(effs, s.startCut(p.Start, p.For, now)...)
	}
	return effs
}
