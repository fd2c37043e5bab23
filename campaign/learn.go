package campaign

import (
	"github.com/gofault/gofault/invariant"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
)

// learn gives a Learner policy (cofi) the observations of this run's
// fault-free trials before the fault trials; a resumed campaign's policy
// has what it learned in its snapshot.
func (s *session) learn(observed [][]record.Observation) {
	l, ok := s.pol.(policy.Learner)
	if !ok {
		return
	}
	l.Learn(observed)
	if inv, ok := s.pol.(interface{ Invariants() []invariant.Invariant }); ok {
		n := 0
		for _, obs := range observed {
			n += len(obs)
		}
		s.opts.Logger.Info("cofi: invariants mined from the fault-free trials", "invariants", len(inv.Invariants()), "observations", n, "trials", len(observed))
	}
}
