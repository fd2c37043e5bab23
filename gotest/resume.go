package gotest

// A gofault test campaign in the store: made new, or found again and
// continued (Options.Resume) from what its earlier runs stored — the
// fault-free pass's measures, the trials, the policy's state — on the same
// build of the test binary.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// prior is what earlier runs of a resumed campaign stored.
type prior struct {
	// measured are the tests the fault-free pass measured.
	measured []Measure
	// fault are the fault trials.
	fault []*record.Trial
}

// ranTests counts the fault trials stored by test.
func (p prior) ranTests() map[string]int {
	out := map[string]int{}
	for _, tr := range p.fault {
		out[testOf(tr)]++
	}
	return out
}

// campaignName is the store's name of the campaign of o.
func campaignName(o Options) string { return "test " + o.Package }

// optionsHash identifies a campaign's options for Resume: all that is
// stored but the number of trials, which a resume may change.
func optionsHash(o Options) (string, error) {
	o.Trials = 0
	conf, err := json.Marshal(stored{GoTest: &o})
	if err != nil {
		return "", fmt.Errorf("campaign config: %w", err)
	}
	h := sha256.Sum256(conf)
	return hex.EncodeToString(h[:]), nil
}

// campaign makes the campaign in the store, or with o.Resume finds the
// newest one of the same options and reads back what it stored; c.next is
// then the index after its last trial.
func (c *campaignRun) campaign(ctx context.Context) error {
	o := c.o
	hash, err := optionsHash(o)
	if err != nil {
		return err
	}
	if !o.Resume && o.Campaign == 0 {
		conf, err := json.Marshal(stored{GoTest: &o})
		if err != nil {
			return fmt.Errorf("campaign config: %w", err)
		}
		if c.id, err = c.st.CreateCampaign(ctx, store.Campaign{Name: campaignName(o), ConfigHash: hash, Policy: o.Policy, Seed: o.Seed, Config: string(conf)}); err != nil {
			return err
		}
		c.next = 1
		if err := c.st.PutBuildKey(ctx, c.id, c.key); err != nil {
			return err
		}
		if o.Opened != nil {
			return o.Opened(c.id)
		}
		return nil
	}
	camp, err := c.find(ctx, hash)
	if err != nil {
		return err
	}
	c.id = camp.ID
	if o.Opened != nil {
		if err := o.Opened(c.id); err != nil {
			return err
		}
	}
	key, err := c.st.BuildKey(ctx, c.id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err == nil && key != c.key {
		return fmt.Errorf("campaign %d ran another build of %s's test binary (its sources, tests or build flags changed since: build key %.12s, now %.12s), so its sites and trials would not match this one's; run without --resume to start a new campaign", c.id, o.Package, key, c.key)
	}
	if err := c.st.SetCampaignStatus(ctx, c.id, store.StatusRunning); err != nil {
		return err
	}
	trials, err := c.st.Trials(ctx, c.id)
	if err != nil {
		return err
	}
	c.next = 1
	c.trials = trials
	for _, tr := range trials {
		c.next = max(c.next, tr.Index+1)
		if tr.Policy != record.BaselinePolicy {
			c.prior.fault = append(c.prior.fault, tr)
		}
	}
	data, err := c.st.TestPass(ctx, c.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(data, &c.prior.measured); err != nil {
			return fmt.Errorf("fault-free pass of campaign %d: %w", c.id, err)
		}
	}
	c.o.Log.Info("resuming campaign", "campaign", c.id, "measured", len(c.prior.measured), "fault_trials", len(c.prior.fault), "next", c.next)
	return nil
}

// find returns the campaign to continue: Options.Campaign, which must
// have been made with options of hash, or the newest one of the store
// made with them.
func (c *campaignRun) find(ctx context.Context, hash string) (*store.Campaign, error) {
	o := c.o
	if o.Campaign != 0 {
		camp, err := c.st.Campaign(ctx, o.Campaign)
		if err != nil {
			return nil, err
		}
		if camp.Name != campaignName(o) || camp.ConfigHash != hash {
			return nil, fmt.Errorf("campaign %d (%s) was not made with these options, so it cannot be continued with them; start a new one", camp.ID, camp.Name)
		}
		return camp, nil
	}
	camp, err := c.st.FindCampaign(ctx, campaignName(o), hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no gofault test campaign of %s with these options in %s to resume (were flags other than --trials changed? run without --resume to start a new one)", o.Package, o.DB)
	}
	return camp, err
}

// restorePolicy gives a stateful policy the snapshot a resumed campaign
// stored (none for a new one).
func restorePolicy(ctx context.Context, st *store.Store, campaign int64, pol policy.Policy) error {
	data, err := st.PolicyState(ctx, campaign)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return engine.RestorePolicy(pol, data)
}

// putMeasured stores the measures of the tests measured so far.
func (c *campaignRun) putMeasured(ctx context.Context, done map[string]Measure) error {
	ms := make([]Measure, 0, len(done))
	for _, m := range done {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b Measure) int { return strings.Compare(a.Test, b.Test) })
	data, err := json.Marshal(ms)
	if err != nil {
		return fmt.Errorf("encode fault-free pass: %w", err)
	}
	return c.st.PutTestPass(context.WithoutCancel(ctx), c.id, data)
}
