package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gofault/gofault/bench"
	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/internal/version"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/store"
)

func init() {
	register(command{
		name:    "bench",
		summary: "measure policies on known bugs: found in how many seeds, how soon, and false positives on the fixed release",
		run:     runBench,
	})
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

func runBench(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("bench", os.Stderr)
	cf := addConfigFlags(fs, "trials.parallel=2")
	bugsPath := fs.String("bugs", "", "the known-bug file (e.g. targets/etcd/bugs.yaml; see docs/bench.md); one of test bugs alone (gotest/testdata/bugs.yaml) needs no --config")
	var only stringList
	fs.Var(&only, "bug", "run only this bug of the file (repeatable; default all)")
	pols := fs.String("policies", "bsrr,random", "comma-separated policies ("+strings.Join(policy.Names(), ", ")+")")
	seeds := countFlag(fs, "seeds", fmt.Sprintf("campaigns per bug, release and policy, with seeds 1..N (default %d)", bench.DefaultSeeds))
	trials := countFlag(fs, "trials", "the cap on fault trials per campaign, at least 1 (default: config trials.count)")
	parallel := parallelFlag(fs, `clusters run at once in each campaign: a number, or "auto" (default: config trials.parallel, auto unless set)`)
	campaigns := fs.String("campaigns", "1", `campaigns run at once, a number or "auto" (as many as the machine runs clusters, over --parallel): the campaigns of one release at a time, each with --parallel clusters (1 unless given) and its trials in a work dir of its own (WORKDIR/lanes/K)`)
	name := fs.String("name", "", "name the bench (default: a hash of the config, the --set overrides, the known-bug file and the flags but --parallel); the same name resumes it")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	fail := failOnFlag(fs, failNever, "bench")
	rebuild := fs.Bool("rebuild", false, "build every release afresh even when an earlier build's inputs are unchanged")
	bundle := fs.String("bundle", "", "run prebuilt bundles instead of building: DIR/<version> per release (DIR/default for a release without one), as gofault build --bundle DIR --bugs B writes them")
	q := addQueueFlags(fs)
	slots := fs.Int("queue-slots", 16, "with --queue: the fault trials of a campaign queued or running at once at most")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *q.url != "" && *bundle == "" {
		return fmt.Errorf("%w: --queue needs --bundle DIR: the workers run bundles (write them with gofault build --config %s --bundle DIR --bugs %s)", errUsage, *cf.path, *bugsPath)
	}
	if *slots < 1 {
		return fmt.Errorf("%w: --queue-slots must be at least 1", errUsage)
	}
	if err := parallel.check(*q.url != ""); err != nil {
		return err
	}
	nc := bench.CampaignsAuto
	if *campaigns != "auto" {
		n, err := strconv.Atoi(*campaigns)
		if err != nil || n < 1 {
			return fmt.Errorf(`%w: invalid value %q for flag -campaigns: want "auto" or a number of at least 1, e.g. 4`, errUsage, *campaigns)
		}
		nc = n
	}
	if nc != 1 && *q.url != "" {
		return fmt.Errorf("%w: --campaigns with --queue: a queued bench runs its campaigns one after another (the workers run each campaign's trials at once); leave --campaigns out", errUsage)
	}
	if *bugsPath == "" {
		return fmt.Errorf("%w: --bugs is required: the known-bug file, e.g. --bugs targets/etcd/bugs.yaml", errUsage)
	}
	if *bundle != "" && *rebuild {
		return fmt.Errorf("%w: --rebuild and --bundle: a bundle is never rebuilt where it runs", errUsage)
	}
	names, err := parsePolicies(*pols)
	if err != nil {
		return err
	}
	sum, err := bench.Measure(ctx, bench.Options{
		BugsPath: *bugsPath, Only: only, ConfigPath: *cf.path, ConfigGiven: flagSet(fs, "config"), Sets: cf.sets, Known: known(),
		Policies: names, Seeds: int(*seeds), Trials: int(*trials), Parallel: parallel.n, Campaigns: nc, Name: *name,
		Rebuild: *rebuild, Bundle: *bundle, Queue: *q.url, QueueAuth: q.auth(), QueueSlots: *slots, Lock: lockWork,
	})
	if err != nil {
		return err
	}
	store.Remember(sum.DB)
	if *asJSON {
		err = writeJSON(stdout, struct {
			Version version.Info `json:"version"`
			*bench.Summary
		}{version.Current(), sum})
	} else {
		err = sum.WriteTable(stdout)
	}
	if err != nil {
		return err
	}
	return failOnResults(*fail, sum)
}

// parsePolicies splits --policies and checks each name.
func parsePolicies(list string) ([]string, error) {
	var names []string
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !slices.Contains(policy.Names(), p) {
			return nil, fmt.Errorf("%w: unknown policy %q (want one of %s)", errUsage, p, strings.Join(policy.Names(), ", "))
		}
		if !slices.Contains(names, p) {
			names = append(names, p)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: --policies names no policy (want e.g. bsrr,random)", errUsage)
	}
	return names, nil
}

// writeBenchBundles writes a bundle for every release the bugs of the
// known-bug file at bugsPath run on, into dir/<version> (dir/default for
// the config's own release), as gofault bench --bundle dir reads them.
// Each release's bundle is built with the bug's scenario and the release's
// overrides applied; releases that share a version share a bundle, so a
// release's set must not change the build (target.build_flags, the
// workload) for bundles.
func writeBenchBundles(ctx context.Context, stdout io.Writer, cf configFlags, dir, bugsPath string, opts build.Options, asJSON bool) error {
	file, _, err := bench.Load(bugsPath, check.Names())
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for _, bug := range file.Bugs {
		if bug.Test != nil {
			fmt.Fprintf(os.Stderr, "bug %s is a test bug: no bundle (bundles of gofault test campaigns are not done yet)\n", bug.ID)
			continue
		}
		for _, side := range []bench.Side{bench.Affected, bench.Fixed} {
			sets := append(slices.Clone(cf.sets), bug.Overrides(side)...)
			cfg, err := config.Open(*cf.path, known(), sets...)
			if err != nil {
				return fmt.Errorf("bug %s %s: %w", bug.ID, side, err)
			}
			sub := cmp.Or(cfg.Target.Version, bench.DefaultRelease)
			if done[sub] {
				continue
			}
			done[sub] = true
			if !asJSON {
				fmt.Fprintf(stdout, "release %s (bug %s, %s):\n", sub, bug.ID, side)
			}
			if err := writeBundle(ctx, stdout, configFlags{path: cf.path, sets: sets}, filepath.Join(dir, sub), opts, asJSON); err != nil {
				return err
			}
		}
	}
	return nil
}
