package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/gotest"
	"github.com/gofault/gofault/instrument"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

func init() {
	register(command{
		name:    "report",
		summary: "list a campaign's findings, clustered by fault and symptom",
		run:     runReport,
	})
	register(command{
		name:    "replay",
		summary: "re-run one trial with the same faults and judge it again",
		run:     runReplay,
	})
}

// storeFlags are the flags that locate the database.
type storeFlags struct {
	db *string
	*configFlags
}

func addStoreFlags(fs *flag.FlagSet) *storeFlags {
	s := &storeFlags{
		db:          fs.String("db", "", "database file (default: the config's store.db, else the last one gofault run used)"),
		configFlags: addConfigFlags(fs, ""),
	}
	fs.Lookup("config").Usage = "config file, used to find the database when --db is not given"
	return s
}

// open opens the store named by --db, or the config's, or — when neither
// is given and there is no gofault.yaml here — the one the last gofault run
// on this machine used.
func (s *storeFlags) open() (*store.Store, error) {
	path := *s.db
	if path == "" {
		_, statErr := os.Stat(*s.path)
		last := lastDB()
		switch {
		case os.IsNotExist(statErr) && *s.path == "gofault.yaml" && len(s.sets) == 0 && last != "":
			path = last
		default:
			cfg, err := config.Open(*s.path, known(), s.sets...)
			if err != nil {
				return nil, fmt.Errorf("%w (or name the database with --db)", err)
			}
			path = cfg.Path(cfg.Store.DB)
		}
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no gofault database at %s: run a campaign first (gofault run)", path)
	}
	return store.OpenExisting(path)
}

func runReport(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("report", os.Stderr)
	sf := addStoreFlags(fs)
	id := fs.Int64("campaign", 0, "campaign ID (default: the latest)")
	all := fs.Bool("all", false, "report over every campaign in the database")
	asJSON := fs.Bool("json", false, `print one JSON object: "version" (gofault's) and "findings" (or "trials", "sites", "fault_free", "generic" as the other flags choose)`)
	listTrials := fs.Bool("trials", false, "list every trial (fault, status, failed checkers) instead of findings")
	listSites := fs.Bool("sites", false, "list, per fault site, the node roles and abstract states in which its requests arrived, summed over the trials")
	withErrors := fs.Bool("errors", false, "with --trials: show each trial's whole error, the nodes' role changes and, for trials that failed or could not run, the last lines of every node's log")
	faultFreeOnly := fs.Bool("fault-free", false, "list only the failures of trials in which no fault was injected (with --json: those instead of the findings)")
	htmlDir := fs.String("html", "", "write the campaign's pages (campaign, trials, findings, timelines, logs) as a self-contained static directory `DIR`")
	junitFile := fs.String("junit", "", "write the findings and fault-free failures as JUnit XML test cases to `FILE` (for a CI's test view)")
	notJudgedOnly := fs.Bool("not-judged", false, "list only the trials the workload could not judge, with its reasons (with --json: those instead of the findings)")
	listDismissed := fs.Bool("dismissed", false, "list, per log rule, what it dismissed as a fault's expected consequence across the trials (templates, counts, trials, an example), to audit the rules")
	restore := fs.String("restore", "", "unpack the data dirs failed trial `TRIAL` kept (its "+campaign.PackName+") and its logs into the directory named after the flags: gofault report --restore 3-12 /tmp/t3-12")
	genericOnly := fs.Bool("generic", false, "list only the generic consequences of faults: new log lines that followed faults at many unrelated sites (with --json: those instead of the findings)")
	if err := fs.Parse(args); err != nil {
		return errors.Join(errUsage, err)
	}
	if *restore == "" && fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if *restore != "" && fs.NArg() != 1 {
		return fmt.Errorf("%w: --restore TRIAL DIR: name one directory to restore into, after the flags", errUsage)
	}
	st, err := sf.open()
	if err != nil {
		return err
	}
	defer st.Close()
	if *restore != "" {
		return restoreTrial(ctx, st, *restore, fs.Arg(0), *asJSON, stdout)
	}
	camps, err := st.Campaigns(ctx)
	if err != nil {
		return err
	}
	var ids []int64
	switch {
	case *all:
		for _, c := range camps {
			ids = append(ids, c.ID)
		}
	case *id != 0:
		if !slices.ContainsFunc(camps, func(c *store.Campaign) bool { return c.ID == *id }) {
			return fmt.Errorf("%w: no campaign %d in %s (%d campaigns; gofault report --all reports over every one)", errUsage, *id, st.Path(), len(camps))
		}
		ids = []int64{*id}
	case len(camps) > 0:
		latest, err := defaultCampaign(ctx, st, camps)
		if err != nil {
			return err
		}
		ids = []int64{latest}
	}
	var trials []*record.Trial
	for _, c := range ids {
		ts, err := st.Trials(ctx, c)
		if err != nil {
			return err
		}
		trials = append(trials, ts...)
	}
	if *listTrials {
		if *asJSON {
			return writeReportJSON(stdout, "trials", trials)
		}
		return report.WriteTrials(stdout, trials, *withErrors)
	}
	if *listDismissed {
		rules := report.Dismissed(trials)
		if *asJSON {
			return writeJSON(stdout, rules)
		}
		return report.WriteDismissed(stdout, rules)
	}
	if *listSites {
		sites := report.Reached(trials)
		if *asJSON {
			return writeReportJSON(stdout, "sites", sites)
		}
		return report.WriteReached(stdout, sites)
	}
	var opts report.Options
	if len(ids) > 0 {
		opts = reportOptions(camps, ids[0])
	}
	rep := report.New(trials, opts)
	reruns, err := loadReruns(ctx, st, ids)
	if err != nil {
		return err
	}
	rep.Annotate(st.Path(), reruns)
	if *htmlDir != "" || *junitFile != "" {
		if len(ids) != 1 {
			return fmt.Errorf("%w: --html and --junit write one campaign (name it with --campaign)", errUsage)
		}
		if *junitFile != "" {
			if err := writeJUnit(ctx, st, ids[0], rep, trials, *junitFile); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s (%d findings, %d fault-free failures)\n", *junitFile, len(rep.Findings), len(rep.FaultFree))
		}
		if *htmlDir != "" {
			return writeHTML(ctx, st, ids[0], *htmlDir, stdout)
		}
		return nil
	}
	show, key := rep.Findings, "findings"
	switch {
	case *faultFreeOnly:
		show, key = rep.FaultFree, "fault_free"
	case *genericOnly:
		show, key = rep.Generic, "generic"
	}
	if *notJudgedOnly {
		if *asJSON {
			if rep.NotJudged == nil {
				rep.NotJudged = []report.Unjudged{}
			}
			return writeJSON(stdout, rep.NotJudged)
		}
		if len(rep.NotJudged) == 0 {
			_, err := fmt.Fprintf(stdout, "every one of %d trials was judged\n", rep.Trials)
			return err
		}
		return report.WriteNotJudged(stdout, rep.NotJudged, rep.Trials)
	}
	if *asJSON {
		if show == nil {
			show = []report.Finding{}
		}
		return writeReportJSON(stdout, key, show)
	}
	switch {
	case *faultFreeOnly && len(rep.FaultFree) == 0:
		return report.WriteText(stdout, nil)
	case *faultFreeOnly:
		return report.WriteFaultFree(stdout, rep.FaultFree)
	case *genericOnly:
		return report.WriteGeneric(stdout, rep.Generic)
	}
	if err := report.WriteText(stdout, rep.Findings); err != nil {
		return err
	}
	if err := report.WriteGeneric(stdout, rep.Generic); err != nil {
		return err
	}
	if err := report.WriteNotJudged(stdout, rep.NotJudged, rep.Trials); err != nil {
		return err
	}
	if err := report.WriteFaultFree(stdout, rep.FaultFree); err != nil {
		return err
	}
	if len(ids) == 1 {
		writeDropped(stdout, camps, ids[0])
		total := 0
		if cov, err := st.Coverage(ctx, ids[0]); err == nil {
			total = cov.Blocks
		}
		if err := report.WriteCoverage(stdout, trials, total); err != nil {
			return err
		}
	}
	return nil
}

// loadReruns returns what the re-runs of the fault-free failures of the
// campaigns ids showed, by trial ID.
func loadReruns(ctx context.Context, st *store.Store, ids []int64) (map[string]record.Rerun, error) {
	all := map[string]record.Rerun{}
	for _, id := range ids {
		m, err := st.Reruns(ctx, id)
		if err != nil {
			return nil, err
		}
		for k, v := range m {
			all[k] = v
		}
	}
	return all, nil
}

// reportOptions are the report options of campaign id's stored config
// (checkers.generic_sites); the defaults when it cannot be read.
func reportOptions(camps []*store.Campaign, id int64) report.Options {
	if cfg := campaignConfig(camps, id); cfg != nil {
		return report.Options{GenericSites: cfg.Checkers.GenericSites}
	}
	return report.Options{}
}

// campaignConfig returns campaign id's stored config, or nil.
func campaignConfig(camps []*store.Campaign, id int64) *config.Config {
	for _, c := range camps {
		var cfg config.Config
		if c.ID == id && json.Unmarshal([]byte(c.Config), &cfg) == nil {
			return &cfg
		}
	}
	return nil
}

// writeDropped lists the sites the build of campaign id's target dropped
// because their rewrite did not compile (<work>/build/dropped.json): no
// fault could strike there. Nothing when there are none or the build's
// work dir is gone.
func writeDropped(w io.Writer, camps []*store.Campaign, id int64) {
	cfg := campaignConfig(camps, id)
	if cfg == nil {
		return
	}
	ds, err := instrument.LoadDropped(instrument.DroppedFile(build.Target(cfg).WorkDir))
	if err != nil {
		fmt.Fprintf(w, "\ndropped sites: %v\n", err)
		return
	}
	var compile []instrument.Dropped
	for _, d := range ds {
		if d.Reason == instrument.SkipCompile {
			compile = append(compile, d)
		}
	}
	if len(compile) == 0 {
		return
	}
	fmt.Fprintf(w, "\ndropped sites: %d could not be instrumented (their rewrite did not compile), so no fault struck there:\n", len(compile))
	for _, d := range compile {
		fmt.Fprintf(w, "  %s %s at %s: %s\n", d.What, d.ID, d.Pos(), strings.Join(d.Errors, "; "))
	}
}

// latestCampaign returns the campaign that report shows by default: the
// newest campaign that is not a replay and ran trials (ran counts them by
// campaign, trials that could not run left out), so a campaign that failed
// before its first trial ran (its cluster could not start) does not hide
// the one before it; with no such campaign, the newest that is not a
// replay.
func latestCampaign(camps []*store.Campaign, ran map[int64]int) int64 {
	var id, withTrials int64
	for _, c := range camps {
		if c.Policy == "replay" {
			continue
		}
		id = max(id, c.ID)
		if ran[c.ID] > 0 {
			withTrials = max(withTrials, c.ID)
		}
	}
	return cmp.Or(withTrials, id)
}

// defaultCampaign is latestCampaign over the campaigns of st.
func defaultCampaign(ctx context.Context, st *store.Store, camps []*store.Campaign) (int64, error) {
	counts, err := st.TrialsRun(ctx)
	if err != nil {
		return 0, err
	}
	return latestCampaign(camps, counts), nil
}

func runReplay(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("replay", os.Stderr)
	sf := addStoreFlags(fs)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	runs := fs.Int("runs", 1, "replay this many times and report how often the failure recurred")
	bf := addBuildFlags(fs)
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return errors.Join(errUsage, err)
	}
	if len(rest) != 1 {
		return fmt.Errorf("%w: want one trial ID, e.g. gofault replay 3-17, or a finding ID with an optional site number, e.g. gofault replay 2ee8b133dc/2", errUsage)
	}
	if *runs < 1 {
		return fmt.Errorf("%w: --runs must be at least 1 (got %d)", errUsage, *runs)
	}
	*sf.path = bf.configPath(fs, sf.configFlags)
	st, err := sf.open()
	if err != nil {
		return err
	}
	defer st.Close()
	trialID, err := replayTarget(ctx, st, rest[0])
	if err != nil {
		return err
	}
	if gotest.IsTrial(ctx, st, trialID) {
		return replayTest(ctx, st, trialID, *runs, *asJSON, stdout)
	}
	opts := campaign.ReplayOptions{Trial: trialID, Runs: *runs, Lock: lockWork, Build: bf.built, Warn: os.Stderr}
	if !*asJSON {
		opts.Text = stdout
	}
	r, err := campaign.Replay(ctx, st, opts)
	if err != nil {
		return err
	}
	switch {
	case *asJSON && *runs == 1:
		if err := writeJSON(stdout, r.Results[0]); err != nil {
			return err
		}
	case *asJSON:
		if err := writeJSON(stdout, r); err != nil {
			return err
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	return ctx.Err()
}

// replayTarget returns the trial that arg names: a trial ID ("3-17"), or a
// finding of the latest campaign ("2ee8b133dc", its first site) with the
// number of one of its sites ("2ee8b133dc/2", as report lists them): the
// first trial of that site.
func replayTarget(ctx context.Context, st *store.Store, arg string) (string, error) {
	if _, _, ok := record.ParseTrialID(arg); ok {
		return arg, nil
	}
	id, siteArg, hasSite := strings.Cut(arg, "/")
	site := 1
	if hasSite {
		if _, err := fmt.Sscanf(siteArg, "%d", &site); err != nil || site < 1 {
			return "", fmt.Errorf("%w: %q: the site number after / must be 1 or more, as report numbers them", errUsage, arg)
		}
	}
	camps, err := st.Campaigns(ctx)
	if err != nil {
		return "", err
	}
	latest, err := defaultCampaign(ctx, st, camps)
	if err != nil {
		return "", err
	}
	trials, err := st.Trials(ctx, latest)
	if err != nil {
		return "", err
	}
	rep := report.New(trials, reportOptions(camps, latest))
	for _, f := range slices.Concat(rep.Findings, rep.FaultFree, rep.Generic) {
		if f.ID != id {
			continue
		}
		if site > len(f.Sites) {
			return "", fmt.Errorf("%w: finding %s has %d sites; pick one of 1..%d", errUsage, id, len(f.Sites), len(f.Sites))
		}
		return f.Sites[site-1].Trials[0], nil
	}
	return "", fmt.Errorf("%w: %q is neither a trial ID (e.g. 3-17) nor a finding of campaign %d (gofault report lists them)", errUsage, arg, latest)
}

// writeJSON writes v as indented JSON, the --json output of every command.
// writeReportJSON writes report's --json output: one object holding
// gofault's version ("version") and the list the flags chose under key.
func writeReportJSON(w io.Writer, key string, list any) error {
	return writeJSON(w, map[string]any{"version": gofaultVersion(), key: list})
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// errNotReproduced marks a replay that ran but showed none of the
// original's failures; it exits with 3.
var errNotReproduced = campaign.ErrNotReproduced

// lastDBFile remembers the database of the last campaign run on this
// machine, so "gofault report" works from anywhere right after "gofault run".
func lastDBFile() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "gofault", "last-db")
}

// lastDB returns the remembered database path, or "".
func lastDB() string {
	f := lastDBFile()
	if f == "" {
		return ""
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// rememberDB records path as the last database used; failures are ignored,
// it is only a convenience.
func rememberDB(path string) {
	f := lastDBFile()
	if f == "" || os.MkdirAll(filepath.Dir(f), 0o755) != nil {
		return
	}
	os.WriteFile(f, []byte(path+"\n"), 0o644)
}

// restoreTrial unpacks what failed trial id kept into dest
// (campaign.Restore) and says what it made.
func restoreTrial(ctx context.Context, st *store.Store, id, dest string, asJSON bool, stdout io.Writer) error {
	tr, err := st.Trial(ctx, id)
	if err != nil {
		return err
	}
	res, err := campaign.Restore(tr.Dir, dest)
	if err != nil {
		return err
	}
	if asJSON {
		return writeReportJSON(stdout, "restored", res)
	}
	fmt.Fprintf(stdout, "restored trial %s into %s: %d files of the data dirs, and its logs\n", id, dest, len(res.Files))
	if len(res.Omitted) > 0 {
		names := slices.Sorted(maps.Keys(res.Omitted))
		fmt.Fprintf(stdout, "not kept (members the faults did not hit; only their file list): %d files\n", len(names))
		for _, n := range names {
			fmt.Fprintf(stdout, "  %12d  %s\n", res.Omitted[n], n)
		}
	}
	return nil
}
