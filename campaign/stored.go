package campaign

// A campaign's record in the store: the campaign a run opens or makes,
// with what its earlier runs stored (read once: store.OpenCampaign).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/store"
)

// openCampaign opens the campaign a run of the build of key adds trials
// to, and returns what it stored: campaign id when set (it must have been
// made with cfg and polName), else with resume the newest of cfg's (it
// must have run polName), else a new one.
func openCampaign(ctx context.Context, st *store.Store, cfg *config.Config, polName string, resume bool, id int64, key string) (*store.CampaignState, error) {
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	hash := cfg.Hash()
	saved, err := st.OpenCampaign(ctx, store.Opening{
		ID: id, Resume: resume, BuildKey: key,
		New: store.Campaign{Name: cfg.Name, ConfigHash: hash, Policy: polName, Seed: cfg.Policy.Seed, Config: string(data)},
		Check: func(saved *store.CampaignState) error {
			c := saved.Campaign
			switch {
			case id != 0 && (c.ConfigHash != hash || c.Policy != polName):
				return fmt.Errorf("campaign %d was made with another config or policy (%s), so it cannot be continued with this one", id, c.Policy)
			case c.Policy != polName:
				return fmt.Errorf("campaign %d ran policy %q; resume it with --policy %s", c.ID, c.Policy, c.Policy)
			}
			return nil
		},
	})
	if id == 0 && resume && errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no campaign of %q with this config to resume in %s (was the config changed? run without --resume to start a new one)", cfg.Name, st.Path())
	}
	return saved, err
}
