package engine

// A campaign's policy between runs: its state is saved after every trial
// and restored when the campaign resumes, so it goes on from where it
// stopped.

import (
	"context"
	"fmt"

	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/store"
)

// RestorePolicy gives a stateful policy the snapshot a resumed campaign
// stored (state, from store.CampaignState.Policy; nil for a new campaign
// or a stateless policy: nothing to restore).
func RestorePolicy(pol policy.Policy, state []byte) error {
	s, ok := pol.(policy.Stateful)
	if !ok || state == nil {
		return nil
	}
	return s.Restore(state)
}

// Snapshotter is what holds a campaign's policy while its trials run
// (*controller.Controller).
type Snapshotter interface {
	// SnapshotPolicy returns the policy's state (nil for a stateless one).
	SnapshotPolicy() ([]byte, error)
}

// SavePolicy stores the state of the policy that p holds after a trial
// of campaign, so a resumed campaign goes on from there; a stateless
// policy stores nothing. ctx should survive Ctrl-C: a trial that ran is
// saved whole.
func SavePolicy(ctx context.Context, st *store.Store, campaign int64, p Snapshotter) error {
	data, err := p.SnapshotPolicy()
	if err != nil {
		return fmt.Errorf("snapshot policy: %w", err)
	}
	if data == nil {
		return nil
	}
	return st.PutPolicyState(ctx, campaign, data)
}
