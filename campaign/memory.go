package campaign

// A campaign's memory of the earlier campaigns of its target and release
// line (config policy.memory, policy.Memory): read once, as the campaign
// opens.

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/store"
)

// ReleaseFamily is the release line a campaign of cfg belongs to, for its
// memory: the target's version up to its minor release ("v3.7" of
// "v3.7.4"), "" when the config names no version (the module as it is).
func ReleaseFamily(cfg *config.Config) string {
	return releaseLine(cfg.Target.Version)
}

// releaseLine is version up to its minor release: "v3.7" of "v3.7.4" or
// "v3.7.0-rc.1"; the version itself when it has no minor part.
func releaseLine(version string) string {
	major, rest, ok := strings.Cut(version, ".")
	if !ok {
		return version
	}
	minor, _, _ := strings.Cut(rest, ".")
	minor, _, _ = strings.Cut(minor, "-")
	return major + "." + minor
}

// memoryCampaigns returns the campaigns of camps that a campaign of cfg
// (current: its ID) remembers: the others of the same target (config
// name) and release family, made after the newest one Forget reset
// (forgotten), ascending.
func memoryCampaigns(camps []*store.Campaign, cfg *config.Config, current, forgotten int64) []int64 {
	family := ReleaseFamily(cfg)
	var ids []int64
	for _, c := range camps {
		if c.ID == current || c.ID <= forgotten || c.Name != cfg.Name || c.Policy == replayPolicy {
			continue
		}
		var stored struct{ Target struct{ Version string } }
		if err := json.Unmarshal([]byte(c.Config), &stored); err != nil || releaseLine(stored.Target.Version) != family {
			continue // a config from before JSON, or another line
		}
		ids = append(ids, c.ID)
	}
	return ids
}

// loadMemory reads what the earlier campaigns of cfg's target and release
// family (memoryCampaigns) learned per fault of cat; nil when
// policy.memory is off, for a replay, or when there is nothing to
// remember.
func loadMemory(ctx context.Context, st *store.Store, cfg *config.Config, cat *catalog.Catalog, current int64, polName string) (*policy.Memory, error) {
	if cfg.Policy.Memory == config.MemoryOff || polName == replayPolicy || cat == nil {
		return nil, nil
	}
	forgotten, err := st.Forgotten(ctx, cfg.Name, ReleaseFamily(cfg))
	if err != nil {
		return nil, err
	}
	camps, err := st.Campaigns(ctx)
	if err != nil {
		return nil, err
	}
	ids := memoryCampaigns(camps, cfg, current, forgotten)
	if len(ids) == 0 {
		return nil, nil
	}
	stored, err := st.PastInjections(ctx, ids)
	if err != nil {
		return nil, err
	}
	past := make([]policy.Past, len(stored))
	for i, p := range stored {
		past[i] = policy.Past{Trial: p.Trial, Injection: p.Injection, Status: p.Status}
	}
	m := policy.NewMemory(cat, ids, past)
	if m.Len() == 0 {
		return nil, nil
	}
	return m, nil
}
