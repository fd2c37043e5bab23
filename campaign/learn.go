package campaign

import (
	"context"
	"errors"

	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// learn gives a Learner policy (cofi) the observations of this run's
// fault-free trials before the fault trials, and stores the invariants it
// mined with the campaign; a resumed campaign's policy has what it learned
// in its snapshot.
func (s *campaignRun) learn(ctx context.Context, observed [][]record.Observation) error {
	l, ok := s.pol.(policy.Learner)
	if !ok {
		return nil
	}
	l.Learn(observed)
	inv, ok := s.pol.(interface{ Invariants() []record.Invariant })
	if !ok {
		return nil
	}
	n := 0
	for _, obs := range observed {
		n += len(obs)
	}
	s.opts.Logger.Info("cofi: invariants mined from the fault-free trials", "invariants", len(inv.Invariants()), "observations", n, "trials", len(observed))
	return s.st.PutInvariants(ctx, s.camp.ID, inv.Invariants())
}

// Invariants returns the invariants mined by the newest campaign in st
// that mined any, and that campaign's ID; none is (nil, 0, nil).
func Invariants(ctx context.Context, st *store.Store) ([]record.Invariant, int64, error) {
	cs, err := st.Campaigns(ctx)
	if err != nil {
		return nil, 0, err
	}
	for i := len(cs) - 1; i >= 0; i-- {
		out, err := st.Invariants(ctx, cs[i].ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		return out, cs[i].ID, nil
	}
	return nil, 0, nil
}
