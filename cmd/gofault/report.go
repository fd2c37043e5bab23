package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/dashboard"
	"github.com/gofault/gofault/finding"
	"github.com/gofault/gofault/gotest"
	"github.com/gofault/gofault/internal/version"
	"github.com/gofault/gofault/policy"
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
		last := store.Last()
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

// reportFlags are gofault report's flags.
type reportFlags struct {
	store                                    *storeFlags
	id                                       *int64
	all, asJSON, trials, sites, errors       *bool
	faultFree, notJudged, dismissed, generic *bool
	rejudge, memory                          *bool
	html, junit, restore                     *string
}

func addReportFlags(fs *flag.FlagSet) *reportFlags {
	return &reportFlags{
		store:     addStoreFlags(fs),
		id:        fs.Int64("campaign", 0, "campaign ID (default: the latest)"),
		all:       fs.Bool("all", false, "report over every campaign in the database"),
		asJSON:    fs.Bool("json", false, `print one JSON object: "version" (gofault's) and "findings" (or "trials", "sites", "fault_free", "generic" as the other flags choose)`),
		trials:    fs.Bool("trials", false, "list every trial (fault, status, failed checkers) instead of findings"),
		sites:     fs.Bool("sites", false, "list, per fault site, the node roles and abstract states in which its requests arrived, summed over the trials"),
		errors:    fs.Bool("errors", false, "with --trials: show each trial's whole error, the nodes' role changes and, for trials that failed or could not run, the last lines of every node's log"),
		faultFree: fs.Bool("fault-free", false, "list only the failures of trials in which no fault was injected (with --json: those instead of the findings)"),
		html:      fs.String("html", "", "write the campaign's pages (campaign, trials, findings, timelines, logs) as a self-contained static directory `DIR`"),
		junit:     fs.String("junit", "", "write the findings and fault-free failures as JUnit XML test cases to `FILE` (for a CI's test view)"),
		notJudged: fs.Bool("not-judged", false, "list only the trials the workload could not judge, with its reasons (with --json: those instead of the findings)"),
		dismissed: fs.Bool("dismissed", false, "list, per log rule, what it dismissed as a fault's expected consequence across the trials (templates, counts, trials, an example), to audit the rules"),
		restore:   fs.String("restore", "", "unpack the data dirs failed trial `TRIAL` kept (its "+campaign.PackName+") and its logs into the directory named after the flags: gofault report --restore 3-12 /tmp/t3-12"),
		generic:   fs.Bool("generic", false, "list only the generic consequences of faults: new log lines that followed faults at many unrelated sites (with --json: those instead of the findings)"),
		memory:    fs.Bool("memory", false, `show what a new campaign of the config's target and release line (--config, --set) starts from: the faults earlier campaigns tried, how often quietly and with a symptom (config policy.memory; gofault forget resets it; with --json: "memory")`),
		rejudge:   fs.Bool("rejudge", false, `judge the campaign's stored trials again with this gofault's checkers and the config's checker settings (--config, --set), writing nothing: list the trials whose status or failing checkers changed, the tallies, the trials that could not be re-judged, and the findings that go and appear (with --json: "rejudge")`),
	}
}

func runReport(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("report", os.Stderr)
	f := addReportFlags(fs)
	if err := fs.Parse(args); err != nil {
		return errors.Join(errUsage, err)
	}
	if *f.restore == "" && fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	if *f.restore != "" && fs.NArg() != 1 {
		return fmt.Errorf("%w: --restore TRIAL DIR: name one directory to restore into, after the flags", errUsage)
	}
	st, err := f.store.open()
	if err != nil {
		return err
	}
	defer st.Close()
	if *f.restore != "" {
		return restoreTrial(ctx, st, *f.restore, fs.Arg(0), *f.asJSON, stdout)
	}
	if *f.memory {
		return showMemory(ctx, st, f.store.configFlags, *f.asJSON, stdout)
	}
	camps, ids, err := reportCampaigns(ctx, st, *f.all, *f.id)
	if err != nil {
		return err
	}
	if *f.rejudge {
		return rejudge(ctx, st, f.store.configFlags, ids, *f.asJSON, stdout)
	}
	var trials []*record.Trial
	for _, c := range ids {
		ts, err := st.Trials(ctx, c)
		if err != nil {
			return err
		}
		trials = append(trials, ts...)
	}
	return showReport(ctx, st, f, camps, ids, trials, report.Output{W: stdout, JSON: *f.asJSON, Version: version.Current()})
}

// rejudge writes what this gofault's checkers, with the settings of the
// config cf names, say of the stored trials of the campaigns ids
// (campaign.Rejudge).
func rejudge(ctx context.Context, st *store.Store, cf *configFlags, ids []int64, asJSON bool, stdout io.Writer) error {
	cfg, err := config.Open(*cf.path, known(), cf.sets...)
	if err != nil {
		return fmt.Errorf("report --rejudge judges with the config's checker settings: %w", err)
	}
	r, err := campaign.Rejudge(ctx, st, cfg, ids)
	if err != nil {
		return err
	}
	if asJSON {
		return writeReportJSON(stdout, "rejudge", r)
	}
	r.WriteText(stdout)
	return nil
}

// showMemory writes what a new campaign of the config cf names would
// start from (campaign.Memory).
func showMemory(ctx context.Context, st *store.Store, cf *configFlags, asJSON bool, stdout io.Writer) error {
	cfg, err := config.Open(*cf.path, known(), cf.sets...)
	if err != nil {
		return fmt.Errorf("report --memory shows the memory of the config's target: %w", err)
	}
	m, family, err := campaign.Memory(ctx, st, cfg)
	if err != nil {
		return err
	}
	if asJSON {
		v := struct {
			Target    string         `json:"target"`
			Family    string         `json:"family"`
			Campaigns []int64        `json:"campaigns"`
			Trials    int            `json:"trials"`
			Faults    []policy.Known `json:"faults"`
		}{Target: cfg.Name, Family: family, Faults: m.Known()}
		if m != nil {
			v.Campaigns, v.Trials = m.Campaigns, m.Trials
		}
		return writeReportJSON(stdout, "memory", v)
	}
	campaign.WriteMemory(stdout, cfg.Name, family, m, 40)
	return nil
}

// reportCampaigns returns st's campaigns and those report shows: all,
// the one id names, or the latest.
func reportCampaigns(ctx context.Context, st *store.Store, all bool, id int64) ([]*store.Campaign, []int64, error) {
	camps, err := st.Campaigns(ctx)
	if err != nil {
		return nil, nil, err
	}
	var ids []int64
	switch {
	case all:
		for _, c := range camps {
			ids = append(ids, c.ID)
		}
	case id != 0:
		if !slices.ContainsFunc(camps, func(c *store.Campaign) bool { return c.ID == id }) {
			return nil, nil, fmt.Errorf("%w: no campaign %d in %s (%d campaigns; gofault report --all reports over every one)", errUsage, id, st.Path(), len(camps))
		}
		ids = []int64{id}
	case len(camps) > 0:
		latest, err := st.DefaultCampaign(ctx, camps)
		if err != nil {
			return nil, nil, err
		}
		ids = []int64{latest}
	}
	return camps, ids, nil
}

// showReport writes the mode of report that f chooses over the trials of
// the campaigns ids.
func showReport(ctx context.Context, st *store.Store, f *reportFlags, camps []*store.Campaign, ids []int64, trials []*record.Trial, out report.Output) error {
	switch {
	case *f.trials:
		return out.Trials(trials, *f.errors)
	case *f.dismissed:
		return out.Dismissed(trials)
	case *f.sites:
		return out.Sites(trials)
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
	switch {
	case *f.html != "" || *f.junit != "":
		if len(ids) != 1 {
			return fmt.Errorf("%w: --html and --junit write one campaign (name it with --campaign)", errUsage)
		}
		return writePages(ctx, st, ids[0], rep, trials, *f.junit, *f.html, out.W)
	case *f.notJudged:
		return out.NotJudged(rep)
	case *f.faultFree:
		return out.FaultFree(rep)
	case *f.generic:
		return out.Generic(rep)
	}
	if err := out.Findings(rep); err != nil || out.JSON || len(ids) != 1 {
		return err
	}
	if cfg := campaignConfig(camps, ids[0]); cfg != nil {
		build.WriteDropped(out.W, cfg)
	}
	total := 0
	if cov, err := st.Coverage(ctx, ids[0]); err == nil {
		total = cov.Blocks
	}
	return report.WriteCoverage(out.W, trials, total)
}

// writePages writes campaign id's JUnit XML file (report --junit), if
// junit names one, then its static pages (--html), if dir names one.
func writePages(ctx context.Context, st *store.Store, id int64, rep report.Report, trials []*record.Trial, junit, dir string, stdout io.Writer) error {
	if junit != "" {
		if err := dashboard.WriteJUnit(ctx, st, id, rep, trials, junit); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (%d findings, %d fault-free failures)\n", junit, len(rep.Findings), len(rep.FaultFree))
	}
	if dir != "" {
		return dashboard.WriteHTML(ctx, st, id, dir, stdout)
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
	trialID, err := finding.TrialID(ctx, st, rest[0])
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

// writeJSON writes v as indented JSON, the --json output of every command.
// writeReportJSON writes report's --json output: one object holding
// gofault's version ("version") and the list the flags chose under key.
func writeReportJSON(w io.Writer, key string, list any) error {
	return writeJSON(w, map[string]any{"version": version.Current(), key: list})
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// errNotReproduced marks a replay that ran but showed none of the
// original's failures; it exits with 3.
var errNotReproduced = campaign.ErrNotReproduced

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
	res.WriteText(stdout, id, dest)
	return nil
}
