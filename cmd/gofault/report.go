package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/config"
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
	return store.Open(path)
}

func runReport(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("report", os.Stderr)
	sf := addStoreFlags(fs)
	id := fs.Int64("campaign", 0, "campaign ID (default: the latest)")
	all := fs.Bool("all", false, "report over every campaign in the database")
	asJSON := fs.Bool("json", false, "print findings as a JSON array")
	listTrials := fs.Bool("trials", false, "list every trial (fault, status, failed checkers) instead of findings")
	faultFreeOnly := fs.Bool("fault-free", false, "list only the failures of trials in which no fault was injected (with --json: those instead of the findings)")
	if err := fs.Parse(args); err != nil {
		return errors.Join(errUsage, err)
	}
	st, err := sf.open()
	if err != nil {
		return err
	}
	defer st.Close()
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
		ids = []int64{*id}
	case len(camps) > 0:
		ids = []int64{latestCampaign(camps)}
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
			return writeJSON(stdout, trials)
		}
		return report.WriteTrials(stdout, trials)
	}
	findings, faultFree := report.Cluster(trials), report.FaultFree(trials)
	for _, fs := range [][]report.Finding{findings, faultFree} {
		for i := range fs {
			fs[i].Replay = fmt.Sprintf("gofault replay --db %s %s", st.Path(), fs[i].Trials[0])
		}
	}
	if *asJSON {
		if *faultFreeOnly {
			findings = faultFree
		}
		if findings == nil {
			findings = []report.Finding{}
		}
		return writeJSON(stdout, findings)
	}
	if *faultFreeOnly {
		return report.WriteText(stdout, faultFree)
	}
	if err := report.WriteText(stdout, findings); err != nil {
		return err
	}
	return report.WriteFaultFree(stdout, faultFree)
}

// latestCampaign returns the newest campaign that is not a replay.
func latestCampaign(camps []*store.Campaign) int64 {
	var id int64
	for _, c := range camps {
		if c.Policy != "replay" && c.ID > id {
			id = c.ID
		}
	}
	return id
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
		return fmt.Errorf("%w: want one trial ID, e.g. gofault replay 3-17", errUsage)
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
	orig, err := st.Trial(ctx, rest[0])
	if err != nil {
		return fmt.Errorf("trial %s: %w", rest[0], err)
	}
	cid, _, ok := record.ParseTrialID(orig.ID)
	if !ok {
		return fmt.Errorf("trial %s: not a trial ID of the form <campaign>-<index>", orig.ID)
	}
	camp, err := st.Campaign(ctx, cid)
	if err != nil {
		return err
	}
	var cfg config.Config
	if err := json.Unmarshal([]byte(camp.Config), &cfg); err != nil {
		return fmt.Errorf("campaign %d: stored config: %w", camp.ID, err)
	}
	bt, err := bf.built(ctx, &cfg) // once for every run
	if err != nil {
		return err
	}
	var results []replayResult
	for i := 0; i < *runs && ctx.Err() == nil; i++ {
		tr, missing, err := campaign.Replay(ctx, &cfg, st, orig, bt, nil)
		if err != nil {
			return err
		}
		if i == 0 {
			for _, m := range missing {
				fmt.Fprintf(os.Stderr, "warning: cannot replay: %s\n", m)
			}
		}
		recurred, lost := report.Recurrence(orig, tr)
		res := replayResult{Original: orig.ID, Reproduced: len(recurred) > 0 && len(lost) == 0,
			Recurred: recurred, NotReproduced: lost, Trial: tr}
		results = append(results, res)
		if !*asJSON {
			writeReplay(stdout, orig, res)
		}
	}
	if len(results) == 0 {
		return ctx.Err()
	}
	reproduced, recurred := 0, 0
	for _, r := range results {
		if r.Reproduced {
			reproduced++
		}
		if len(r.Recurred) > 0 {
			recurred++
		}
	}
	switch {
	case *asJSON && *runs == 1:
		if err := writeJSON(stdout, results[0]); err != nil {
			return err
		}
	case *asJSON:
		sum := replaySummary{Original: orig.ID, Runs: len(results), Reproduced: reproduced, Recurred: recurred, Results: results}
		if err := writeJSON(stdout, sum); err != nil {
			return err
		}
	case *runs > 1:
		fmt.Fprintf(stdout, "%s: reproduced in %d of %d runs, some failure recurred in %d\n", orig.ID, reproduced, len(results), recurred)
	}
	if recurred == 0 && len(results[0].NotReproduced) > 0 {
		return fmt.Errorf("%w: none of %s's failures recurred in %d run(s) (%s)", errNotReproduced, orig.ID, len(results),
			strings.Join(results[0].NotReproduced, "; "))
	}
	return ctx.Err()
}

// writeReplay prints one replay for humans.
func writeReplay(w io.Writer, orig *record.Trial, r replayResult) {
	tr := r.Trial
	fmt.Fprintf(w, "replayed %s as %s: %s, %d injections (original: %s, %d injections)\n",
		orig.ID, tr.ID, tr.Status, len(tr.Injections), orig.Status, len(orig.Injections))
	for _, v := range tr.Verdicts {
		if v.Failed {
			fmt.Fprintf(w, "  [%s] %s\n", v.Checker, v.Symptom)
		}
	}
	fmt.Fprintf(w, "  logs %s\n", tr.Dir)
	switch {
	case r.Reproduced:
		fmt.Fprintln(w, "reproduced")
	case len(r.Recurred) > 0:
		fmt.Fprintf(w, "partly reproduced: did not recur: %s\n", strings.Join(r.NotReproduced, "; "))
	case len(r.NotReproduced) > 0:
		fmt.Fprintf(w, "not reproduced: did not recur: %s\n", strings.Join(r.NotReproduced, "; "))
	}
}

// writeJSON writes v as indented JSON, the --json output of every command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// errNotReproduced marks a replay that ran but showed none of the
// original's failures; it exits with 3.
var errNotReproduced = errors.New("not reproduced")

// replayResult is the JSON output of gofault replay.
type replayResult struct {
	Original string `json:"original"`
	// Reproduced: every failure of the original recurred.
	Reproduced bool `json:"reproduced"`
	// Recurred and NotReproduced are the original's failures
	// ("checker: symptom") whose checker failed again, and did not.
	Recurred      []string      `json:"recurred,omitempty"`
	NotReproduced []string      `json:"not_reproduced,omitempty"`
	Trial         *record.Trial `json:"trial"`
}

// replaySummary is the JSON output of gofault replay --runs N, N > 1.
type replaySummary struct {
	Original string `json:"original"`
	Runs     int    `json:"runs"`
	// Reproduced counts the runs where every failure recurred; Recurred
	// those where at least one did.
	Reproduced int            `json:"reproduced"`
	Recurred   int            `json:"recurred"`
	Results    []replayResult `json:"results"`
}

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
