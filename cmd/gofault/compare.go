package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/policy"
)

func init() {
	register(command{
		name:    "compare",
		summary: "compare injection policies on your system: findings and trials to each",
		run:     runCompare,
	})
}

func runCompare(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("compare", os.Stderr)
	cf := addConfigFlags(fs, "")
	pols := fs.String("policies", "bsrr,random", "comma-separated policies ("+strings.Join(policy.Names(), ", ")+")")
	seeds := countFlag(fs, "seeds", "campaigns per policy, with seeds 1..N (default 3)")
	trials := countFlag(fs, "trials", "fault trials per campaign, at least 1 (default: config trials.count)")
	parallel := parallelFlag(fs, `clusters run at once: a number, or "auto" (default: config trials.parallel, auto unless set)`)
	asJSON := fs.Bool("json", false, "print a JSON object keyed by policy")
	bf := addBuildFlags(fs)
	if err := fs.Parse(args); err != nil {
		return errors.Join(errUsage, err)
	}
	if err := parallel.check(false); err != nil {
		return err
	}
	if *seeds == 0 {
		*seeds = 3
	}
	cfg, err := config.Open(bf.configPath(fs, cf), known(), cf.sets...)
	if err != nil {
		return err
	}
	release, err := lockWork(cfg)
	if err != nil {
		return err
	}
	defer release()
	var names []string
	for _, p := range strings.Split(*pols, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !slices.Contains(policy.Names(), p) {
			return fmt.Errorf("%w: unknown policy %q (want one of %s)", errUsage, p, strings.Join(policy.Names(), ", "))
		}
		names = append(names, p)
	}
	if *trials == 0 {
		*trials = count(cfg.Trials.Count)
	}
	bt, err := bf.built(ctx, cfg)
	if err != nil {
		return err
	}
	cmp, err := campaign.Compare(ctx, campaign.CompareOptions{
		Config: cfg, Policies: names, Seeds: int(*seeds), Trials: int(*trials), Parallel: parallel.n, Built: bt,
		BeforeCampaign: func(p string, seed int64) {
			fmt.Fprintf(os.Stderr, "compare: policy %s, seed %d of %d (%d trials)\n", p, seed, *seeds, *trials)
		},
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, cmp)
	}
	cmp.WriteText(stdout, names)
	return nil
}
