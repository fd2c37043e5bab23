package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/internal/version"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/store"
)

func init() {
	register(command{
		name:    "run",
		summary: "run a campaign: build, then trials on a real cluster, each with a chosen fault",
		run:     runCampaign,
	})
}

// known lists the names config validation accepts.
func known() config.Known {
	return config.Known{Policies: policy.Names(), Checkers: check.Names()}
}

func runCampaign(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("run", os.Stderr)
	cf := addConfigFlags(fs, "cluster.nodes=5")
	trials := countFlag(fs, "trials", "number of trials, at least 1 (default: config trials.count)")
	pol := fs.String("policy", "", "injection policy, overrides config policy.name ("+strings.Join(policy.Names(), ", ")+")")
	parallel := parallelFlag(fs, `clusters run at once: a number, or "auto", as many as the machine's cores and memory allow (default: config trials.parallel, auto unless set; with --queue 0: the workers run every fault trial)`)
	q := addQueueFlags(fs)
	slots := fs.Int("queue-slots", 16, "with --queue: the fault trials queued or running at once at most")
	resume := fs.Bool("resume", false, "continue the latest campaign of this config where it stopped")
	recalibrate := fs.Bool("recalibrate", false, "measure the progress bound with a calibration trial even when an earlier campaign of the same build and scenario measured it (checkers.progress: auto; a resumed campaign keeps its own)")
	asJSON := fs.Bool("json", false, "print a JSON summary")
	fail := failOnFlag(fs, failNever, "campaign")
	bf := addBuildFlags(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if err := parallel.check(*q.url != ""); err != nil {
		return err
	}
	if *slots < 1 {
		return fmt.Errorf("%w: --queue-slots must be at least 1", errUsage)
	}
	if *pol != "" {
		cf.sets = append(cf.sets, "policy.name="+*pol)
	}
	path := bf.configPath(fs, cf)
	cfg, err := config.Open(path, known(), cf.sets...)
	if err != nil {
		return err
	}
	release, err := lockWork(cfg)
	if err != nil {
		return err
	}
	defer release()
	var (
		bt     *build.Built
		remote engine.Remote
	)
	if *q.url != "" {
		var closeQueue func()
		if bt, remote, closeQueue, err = coordinate(ctx, q, bf, cf, path, cfg, *slots); err != nil {
			return err
		}
		defer closeQueue()
	} else if bt, err = bf.built(ctx, cfg); err != nil {
		return err
	}
	bar := campaign.NewProgressBar(os.Stderr)
	sum, err := campaign.Run(ctx, campaign.Options{
		Config:      cfg,
		Trials:      int(*trials),
		Parallel:    parallel.n,
		Remote:      remote,
		Resume:      *resume,
		Recalibrate: *recalibrate,
		AfterTrial:  bar.Update,
		Built:       bt,
	})
	bar.Finish()
	if err != nil {
		return err
	}
	sum.Seconds += bt.Seconds // built before the campaign began
	store.Remember(sum.DB)
	if err := writeRunSummary(stdout, sum, *asJSON, cfg.Faults.Kinds); err != nil {
		return err
	}
	if sum.Stopped {
		again := ""
		if *q.url != "" {
			again = " --queue " + *q.url
		}
		fmt.Fprintf(os.Stderr, "interrupted; continue with: gofault run --config %s --resume --policy %s%s\n", *cf.path, sum.Policy, again)
	}
	return failOnResults(*fail, sum)
}

// writeRunSummary prints what the campaign did, as JSON with gofault's
// version or as text (kinds: the config's faults.kinds).
func writeRunSummary(w io.Writer, sum *campaign.Summary, asJSON bool, kinds []string) error {
	if asJSON {
		return writeJSON(w, struct {
			Version version.Info `json:"version"`
			*campaign.Summary
		}{version.Current(), sum})
	}
	sum.WriteText(w, kinds)
	return nil
}
