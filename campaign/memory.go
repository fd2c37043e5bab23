package campaign

// A campaign's memory of the earlier campaigns of its target and release
// line (config policy.memory, policy.Memory): read once, as the campaign
// opens.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/gofault/gofault/build"
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

// Memory returns what a new campaign of cfg would start from (its
// memory: loadMemory with the last build's catalog), and the release
// family it is of; nil when there is nothing to remember.
func Memory(ctx context.Context, st *store.Store, cfg *config.Config) (*policy.Memory, string, error) {
	cat, _, err := build.LastCatalog(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("the memory names faults by the catalog of the target's last build: %w", err)
	}
	on := *cfg
	on.Policy.Memory = config.MemoryOn // shown even when this config turns it off
	m, err := loadMemory(ctx, st, &on, cat, 0, cfg.Policy.Name)
	return m, ReleaseFamily(cfg), err
}

// Forget makes the memory of cfg's target and release family start
// afresh (store.Forget) and returns the newest campaign forgotten.
func Forget(ctx context.Context, st *store.Store, cfg *config.Config) (int64, error) {
	return st.Forget(ctx, cfg.Name, ReleaseFamily(cfg))
}

// WriteMemory writes m, the memory of target name's release family, for
// people: where it comes from, then at most top faults (those with a
// symptom first, then the most tried quietly).
func WriteMemory(w io.Writer, name, family string, m *policy.Memory, top int) {
	what := name
	if family != "" {
		what += " " + family
	}
	if m.Len() == 0 {
		fmt.Fprintf(w, "No memory of %s: no earlier campaign of it injected a fault this build still has (or gofault forget reset it).\n", what)
		return
	}
	fmt.Fprintf(w, "Memory of %s: %s.\n", what, m)
	fmt.Fprintln(w, "A new campaign's random draws prefer the faults tried least without a symptom (weight 1/(1 + quiet trials); 1 with a symptom).")
	known := m.Known()
	fmt.Fprintf(w, "\n%6s %6s %8s  %s\n", "tried", "quiet", "symptom", "fault")
	for i, k := range known {
		if i == top {
			fmt.Fprintf(w, "… and %d more faults (--json lists them all)\n", len(known)-top)
			break
		}
		role := ""
		if k.Role != "" {
			role = " on the " + k.Role
		}
		fmt.Fprintf(w, "%6d %6d %8d  %s at %s%s\n", k.Tried, k.Quiet, k.Symptom, k.Fault, k.SiteID, role)
	}
}
