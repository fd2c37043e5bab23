package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/policy"
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
	bar := newProgressBar(os.Stderr)
	sum, err := campaign.Run(ctx, campaign.Options{
		Config:      cfg,
		Trials:      int(*trials),
		Parallel:    parallel.n,
		Remote:      remote,
		Resume:      *resume,
		Recalibrate: *recalibrate,
		AfterTrial:  bar.update,
		Built:       bt,
	})
	bar.finish()
	if err != nil {
		return err
	}
	sum.Seconds += bt.Seconds // built before the campaign began
	rememberDB(sum.DB)
	if *asJSON {
		if err := writeJSON(stdout, struct {
			Version versionInfo `json:"version"`
			*campaign.Summary
		}{gofaultVersion(), sum}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "campaign %d (%s): %d trials (%d with faults, injection rate %.0f%%, %d injections), %d baseline trials\n",
			sum.Campaign, sum.Policy, sum.Trials, sum.InjectedTrials, 100*sum.InjectionRate, sum.Injections, sum.BaselineTrials)
		fmt.Fprintf(stdout, "  %d failed, %d could not run, %d not judged; %d findings\n", sum.FailedTrials, sum.ErrorTrials, sum.NotJudgedTrials, sum.Findings)
		if sum.NotJudgedWarning != "" {
			fmt.Fprintf(stdout, "  %s\n", sum.NotJudgedWarning)
		}
		if sum.NotInjectedWarning != "" {
			fmt.Fprintf(stdout, "  warning: %s\n", sum.NotInjectedWarning)
		}
		if sum.FaultFreeFailures > 0 {
			fmt.Fprintf(stdout, "  %d fault-free failures (no fault injected; not findings): gofault report --fault-free --db %s\n", sum.FaultFreeFailures, sum.DB)
		}
		if sum.GenericConsequences > 0 {
			fmt.Fprintf(stdout, "  %d generic consequences of faults (new log lines after faults at many unrelated sites; informational): gofault report --generic --db %s\n", sum.GenericConsequences, sum.DB)
		}
		if sum.ProgressHow != "" {
			fmt.Fprintf(stdout, "  progress bound %s (%s)\n", time.Duration(sum.ProgressBound*float64(time.Second)).Round(time.Millisecond), sum.ProgressHow)
		}
		if sum.States > 0 {
			fmt.Fprintf(stdout, "  %d of %d abstract states entered\n", sum.StatesEntered, sum.States)
		}
		if sum.Blocks > 0 {
			fmt.Fprintf(stdout, "  %s\n", coverageText(sum.CoverageBlocks, sum.Blocks, -1))
		}
		if sum.Templates > 0 {
			fmt.Fprintf(stdout, "  template start: %d cluster templates formed (%.1fs each), every trial started from one\n", sum.Templates, sum.TemplateSeconds/float64(sum.Templates))
		}
		fmt.Fprintf(stdout, "  %.0fs (build %.0fs, median trial %.1fs); store %s; work dir %.0f MB\n",
			sum.Seconds, sum.BuildSeconds, sum.MedianTrial, sum.DB, float64(sum.WorkDirBytes)/(1<<20))
		if sum.Findings > 0 {
			fmt.Fprintf(stdout, "  see them with: gofault report --db %s\n", sum.DB)
		}
		switch {
		case sum.Exhausted && sum.Trials == 0:
			fmt.Fprintf(stdout, "  nothing to try: policy %s has no fault it may inject at these sites with faults.kinds %v (docs/policies.md says which kinds each policy injects)\n", sum.Policy, cfg.Faults.Kinds)
		case sum.Exhausted:
			fmt.Fprintln(stdout, "  explored everything: the policy has nothing left to try, so the campaign ended early")
		}
	}
	if sum.Stopped {
		again := ""
		if *q.url != "" {
			again = " --queue " + *q.url
		}
		fmt.Fprintf(os.Stderr, "interrupted; continue with: gofault run --config %s --resume --policy %s%s\n", *cf.path, sum.Policy, again)
	}
	return runResults(*fail, sum)
}

// progressBar draws campaign progress on a terminal and stays silent
// otherwise.
type progressBar struct {
	w     io.Writer
	tty   bool
	start time.Time
	drawn bool
}

func newProgressBar(f *os.File) *progressBar {
	fi, err := f.Stat()
	return &progressBar{w: f, tty: err == nil && fi.Mode()&os.ModeCharDevice != 0, start: time.Now()}
}

func (p *progressBar) update(pr campaign.Tally) {
	if !p.tty {
		return
	}
	const width = 30
	if pr.Baseline {
		fmt.Fprintf(p.w, "\r\033[Kbaseline trial %s: %s", pr.Trial.ID, pr.Trial.Status)
		p.drawn = true
		return
	}
	filled := 0
	if pr.Total > 0 {
		filled = width * pr.Done / pr.Total
	}
	per := time.Since(p.start) / time.Duration(max(pr.Done, 1))
	eta := per * time.Duration(pr.Total-pr.Done)
	cov := ""
	if pr.Blocks > 0 {
		cov = ", " + coverageText(pr.Covered, pr.Blocks, pr.RecentNew)
	}
	nj := ""
	if pr.NotJudged > 0 {
		nj = fmt.Sprintf(", %d not judged", pr.NotJudged)
	}
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d trials, %d failed%s%s, ETA %s",
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), pr.Done, pr.Total, pr.Failed, nj, cov, eta.Round(time.Second))
	p.drawn = true
}

// coverageText says how many blocks the campaign covered, e.g. "coverage
// 1234/5678 blocks (21.7%, +12 in the last 10 trials)"; recent < 0 leaves
// the last part out.
func coverageText(covered, blocks, recent int) string {
	s := fmt.Sprintf("coverage %d/%d blocks (%.1f%%", covered, blocks, 100*float64(covered)/float64(max(blocks, 1)))
	if recent >= 0 {
		s += fmt.Sprintf(", +%d in the last 10 trials", recent)
	}
	return s + ")"
}

func (p *progressBar) finish() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}
