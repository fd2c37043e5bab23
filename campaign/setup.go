package campaign

// A run set up over what its campaign stored (store.CampaignState): plain
// construction, no store call.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
)

// setUp sets the run up over what its campaign stored (saved): the
// policy (polName) and the log baseline as they were, the runner, the
// coverage so far, the trials still owed and how many run at once.
func (s *campaignRun) setUp(saved *store.CampaignState, polName string) (err error) {
	opts, cfg := s.opts, s.opts.Config
	s.camp = &saved.Campaign
	if s.pol, err = campaignPolicy(polName, cfg, s.bt.Catalog, s.opts.Replay, s.memory); err != nil {
		return err
	}
	if err := engine.RestorePolicy(s.pol, saved.Policy); err != nil {
		return err
	}
	s.reruns.m = saved.Reruns
	baseline := saved.Baseline
	s.wantBaseline = cfg.Checkers.Baseline
	if opts.Baseline != nil && baseline.Trials == 0 {
		baseline = opts.Baseline.Clone()
		if _, learns := s.pol.(policy.Learner); !learns {
			// A policy that learns from its fault-free trials (cofi)
			// runs them still: the shared baseline has no observations.
			s.wantBaseline = 0
		}
	}
	if s.r, err = newRunner(cfg, s.bt, s.camp.ID, s.pol, baseline, opts.Logger); err != nil {
		return err
	}
	s.r.cov = coverageFrom(saved.Coverage, s.bt.Catalog, opts.Logger)
	s.sum = &Summary{Campaign: s.camp.ID, Policy: polName, DB: s.st.Path(), BuildSeconds: s.bt.Seconds}
	// Count what an earlier run of a resumed campaign already did.
	prior := saved.Trials
	s.used = indices{}
	for _, t := range prior {
		s.used[t.Index] = true
	}
	s.priorBaseline = countBaseline(prior)
	s.trials = prior
	s.want = cmp.Or(opts.Trials, cfg.Trials.Count) - (len(prior) - s.priorBaseline)
	switch {
	case opts.Remote != nil:
		// Local clusters are what Parallel says, none at 0: the remote
		// workers run the fault trials. Auto is not measured here (the
		// workers' machines are another's): the machine's rule alone.
		s.parallel, s.sum.ParallelHow = max(0, opts.Parallel), "set by --parallel, with --queue"
		if opts.Parallel == ParallelAuto {
			s.parallel, s.sum.ParallelHow = autoParallel(engine.ThisMachine(), cfg.Cluster.Nodes, s.want, 0)
		}
	case opts.Parallel > 0:
		s.parallel, s.sum.ParallelHow = opts.Parallel, "set by --parallel"
	case opts.Parallel == 0 && !cfg.Trials.Parallel.Auto():
		s.parallel, s.sum.ParallelHow = int(cfg.Trials.Parallel), "set by trials.parallel"
	default:
		// Until the baseline trials measured a cluster (measureParallel).
		s.autoParallel = true
		s.parallel, s.sum.ParallelHow = autoParallel(engine.ThisMachine(), cfg.Cluster.Nodes, s.want, 0)
	}
	s.sum.Parallel = s.parallel
	return nil
}

// replayPolicy is the policy name of a campaign of Options.Replay.
const replayPolicy = "replay"

// campaignPolicy makes the policy of a campaign: the replay of the
// recorded injections replay, if any, else the named one with the memory
// of earlier campaigns mem (nil: none).
func campaignPolicy(name string, cfg *config.Config, cat *catalog.Catalog, replay []record.Injection, mem *policy.Memory) (policy.Policy, error) {
	if len(replay) == 0 {
		return newPolicy(name, cfg, cat, mem)
	}
	pol := policy.NewReplay(cat, replay)
	if missing := pol.Missing(); len(missing) > 0 {
		return nil, fmt.Errorf("cannot replay the recorded faults on this build: %s", strings.Join(missing, "; "))
	}
	return pol, nil
}

// newPolicy makes the named policy for the catalog, tuned by cfg, with
// the memory of earlier campaigns mem (nil: none).
func newPolicy(name string, cfg *config.Config, cat *catalog.Catalog, mem *policy.Memory) (policy.Policy, error) {
	kinds, err := faultKinds(cfg.Faults.Kinds)
	if err != nil {
		return nil, err
	}
	if err := checkRoles(cfg.Faults.Roles, cat); err != nil {
		return nil, err
	}
	if err := checkHolds("faults.partition.hold", "cut", cfg.Faults.Partition.Hold, cat); err != nil {
		return nil, err
	}
	if err := checkHolds("faults.delay_hold", "delay", cfg.Faults.DelayHold, cat); err != nil {
		return nil, err
	}
	return policy.New(name, policy.Env{
		Catalog:  cat,
		Seed:     cfg.Policy.Seed,
		Kinds:    kinds,
		PerTrial: cfg.Policy.PerTrial,
		Budget:   cfg.Policy.Budget,

		MaxPerTrial: cfg.Faults.MaxPerTrial,
		Key:         cfg.Policy.Key,
		Delay:       cfg.Faults.Delay,

		Partition: cfg.Faults.Partition.Duration,
		LeaderAt:  cfg.Faults.Partition.LeaderAt,
		Timers:    cfg.Faults.Timers,
		Holds:     cfg.Faults.Partition.Hold,
		HoldCap:   cfg.Faults.Partition.HoldCap,

		DelayHolds:   cfg.Faults.DelayHold,
		DelayHoldCap: cfg.Faults.DelayHoldCap,

		TargetErrors: cfg.Faults.TargetErrors,
		Files:        cfg.Faults.Files,
		Roles:        cfg.Faults.Roles,
		Nodes:        cfg.Faults.Nodes,
		Memory:       mem,
	})
}

// checkRoles refuses a faults.roles name that is no value of the
// catalog's role type, naming the ones there are.
func checkRoles(roles []string, cat *catalog.Catalog) error {
	if len(roles) == 0 {
		return nil
	}
	if cat == nil || cat.Role == nil || len(cat.Role.Values) == 0 {
		return fmt.Errorf("faults.roles %v: the analysis found no role field in the target (gofault analyze prints it on its last line); set target.role, or leave faults.roles out", roles)
	}
	var names []string
	for _, v := range cat.Role.Values {
		names = append(names, v.Name)
	}
	for i, r := range roles {
		if !slices.Contains(names, r) {
			return fmt.Errorf("faults.roles[%d]: %q is no value of the role type %s.%s; use one of %s", i, r, cat.Role.Pkg, cat.Role.RoleType, strings.Join(names, ", "))
		}
	}
	return nil
}

// checkHolds refuses a hold condition of config field
// (faults.partition.hold or faults.delay_hold) that the catalog cannot
// meet, so that a fault (what: a cut, a delay) held until it would last
// its cap in every trial: "site=S" that no site matches (the error names
// the nearest site IDs), "behind=N" where no observation point observes a
// commit index (catalog.Catalog.ObservesCommit).
func checkHolds(field, what string, holds []string, cat *catalog.Catalog) error {
	if cat == nil {
		return nil
	}
	for i, h := range holds {
		if strings.HasPrefix(h, "behind=") && !cat.ObservesCommit() {
			return fmt.Errorf("%s[%d]: %q: no observation point of the catalog observes a commit index (a variable whose name contains \"commit\"), so how far a member fell behind cannot be measured and a %s held until it would always last its cap; name the functions that send and handle peer messages in faults.partition.observe (gofault analyze --json counts observation_points), or hold until \"requests=K\" instead",
				field, i, h, what)
		}
		sub, ok := strings.CutPrefix(h, "site=")
		if !ok || len(controller.HoldSites(cat, h)) > 0 {
			continue
		}
		return fmt.Errorf("%s[%d]: %q: no site's stable ID contains %q, so a %s held until it would always last its cap; nearest sites: %s (gofault analyze lists them all)",
			field, i, h, sub, what, strings.Join(nearestSites(cat, sub, 3), ", "))
	}
	return nil
}

// nearestSites returns the IDs of at most n of cat's sites that come
// nearest to containing sub (the fewest edits turn a part of the ID into
// sub, case aside), nearest first.
func nearestSites(cat *catalog.Catalog, sub string, n int) []string {
	type near struct {
		id   string
		dist int
	}
	var all []near
	for _, st := range cat.Sites {
		all = append(all, near{st.ID, substringDistance(strings.ToLower(sub), strings.ToLower(st.ID))})
	}
	slices.SortStableFunc(all, func(a, b near) int { return cmp.Compare(a.dist, b.dist) })
	var out []string
	for _, nr := range all[:min(n, len(all))] {
		out = append(out, nr.id)
	}
	return out
}

// substringDistance is the fewest single-byte edits that turn some
// substring of s into sub (0 when s contains sub).
func substringDistance(sub, s string) int {
	prev := make([]int, len(s)+1) // a match may start anywhere in s: row 0 is all 0
	cur := make([]int, len(s)+1)
	for i := 1; i <= len(sub); i++ {
		cur[0] = i
		for j := 1; j <= len(s); j++ {
			cost := 1
			if sub[i-1] == s[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return slices.Min(prev) // and end anywhere
}

// faultKinds parses the config's faults.kinds.
func faultKinds(names []string) ([]catalog.Kind, error) {
	var ks []catalog.Kind
	for _, n := range names {
		k, err := catalog.ParseKind(n)
		if err != nil {
			return nil, fmt.Errorf("faults.kinds: %w", err)
		}
		ks = append(ks, k)
	}
	return ks, nil
}
