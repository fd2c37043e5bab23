package campaign

// A campaign's record in the store: the campaign opened or made, the
// build its trials ran, and the policy's state restored on resume.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/store"
)

// mixedBuilds is the build key of a campaign whose trials ran more than
// one build: no build matches it.
const mixedBuilds = "mixed"

// openCampaign returns the campaign a run adds trials to: campaign id when
// set (it must have been made with cfg and polName), else with resume the
// newest of cfg's, else a new one.
func openCampaign(ctx context.Context, st *store.Store, cfg *config.Config, polName string, resume bool, id int64) (*store.Campaign, error) {
	hash := cfg.Hash()
	if id != 0 {
		c, err := st.Campaign(ctx, id)
		if err != nil {
			return nil, err
		}
		if c.ConfigHash != hash || c.Policy != polName {
			return nil, fmt.Errorf("campaign %d was made with another config or policy (%s), so it cannot be continued with this one", id, c.Policy)
		}
		return c, nil
	}
	if resume {
		c, err := st.FindCampaign(ctx, cfg.Name, hash)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("no campaign of %q with this config to resume in %s (was the config changed? run without --resume to start a new one)", cfg.Name, st.Path())
		}
		if err != nil {
			return nil, err
		}
		if c.Policy != polName {
			return nil, fmt.Errorf("campaign %d ran policy %q; resume it with --policy %s", c.ID, c.Policy, c.Policy)
		}
		return c, nil
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	c := store.Campaign{Name: cfg.Name, ConfigHash: hash, Policy: polName, Seed: cfg.Policy.Seed, Config: string(data)}
	newID, err := st.CreateCampaign(ctx, c)
	if err != nil {
		return nil, err
	}
	return st.Campaign(ctx, newID)
}

// noteBuild records the build key of a campaign's trials: the first run's,
// or mixedBuilds once a resume runs another build.
func noteBuild(ctx context.Context, st *store.Store, campaign int64, key string) error {
	old, err := st.BuildKey(ctx, campaign)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return st.PutBuildKey(ctx, campaign, key)
	case err != nil:
		return err
	case old != key && old != mixedBuilds:
		return st.PutBuildKey(ctx, campaign, mixedBuilds)
	}
	return nil
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
