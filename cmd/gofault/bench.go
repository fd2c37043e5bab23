package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gofault/gofault/bench"
	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/check"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/fleet"
	"github.com/gofault/gofault/gotest"
	"github.com/gofault/gofault/instrument"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

func init() {
	register(command{
		name:    "bench",
		summary: "measure policies on known bugs: found in how many seeds, how soon, and false positives on the fixed release",
		run:     runBench,
	})
}

// benchDefaultRelease names the bundle subdirectory of a release without a
// version (--bundle DIR: DIR/<version>, or DIR/default).
const benchDefaultRelease = "default"

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
	seeds := countFlag(fs, "seeds", "campaigns per bug, release and policy, with seeds 1..N (default 3)")
	trials := countFlag(fs, "trials", "the cap on fault trials per campaign, at least 1 (default: config trials.count)")
	parallel := parallelFlag(fs, `clusters run at once in each campaign: a number, or "auto" (default: config trials.parallel, auto unless set)`)
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
	if *seeds == 0 {
		*seeds = 3
	}
	file, bugsData, err := bench.Load(*bugsPath, check.Names())
	if err != nil {
		return err
	}
	bugs, err := file.Select(only)
	if err != nil {
		return fmt.Errorf("%w: --bug: %v", errUsage, err)
	}
	tests := slices.ContainsFunc(bugs, func(b bench.Bug) bool { return b.Test != nil })
	if tests && (*bundle != "" || *q.url != "") {
		return fmt.Errorf("%w: --bundle and --queue do not take test bugs (a bug with a test section) yet; choose the cluster bugs with --bug", errUsage)
	}
	// A file of test bugs alone needs no cluster config: the work dir and
	// store are --set workdir and store.db's, relative to the file.
	configGiven := false
	fs.Visit(func(f *flag.Flag) { configGiven = configGiven || f.Name == "config" })
	testsOnly := !configGiven && !slices.ContainsFunc(bugs, func(b bench.Bug) bool { return b.Test == nil })
	var base *config.Config
	if testsOnly {
		base, err = testBenchConfig(*bugsPath, cf.sets)
	} else {
		base, err = config.Open(*cf.path, known(), cf.sets...)
	}
	if err != nil {
		return err
	}
	if *trials == 0 {
		*trials = count(base.Trials.Count)
	}
	if *name == "" {
		var configData []byte
		if !testsOnly {
			if configData, err = os.ReadFile(*cf.path); err != nil {
				return err
			}
		}
		var ids []string
		for _, b := range bugs {
			ids = append(ids, b.ID)
		}
		*name = bench.Name(configData, bugsData, cf.sets, ids, names, int(*seeds), int(*trials))
	}
	release, err := lockWork(base)
	if err != nil {
		return err
	}
	defer release()
	b := &benchRunner{
		name: *name, configPath: *cf.path, sets: cf.sets, trials: int(*trials), parallel: parallel.n,
		rebuild: *rebuild, bundle: *bundle, built: map[string]*build.Built{}, slots: *slots,
		workDir: base.Path(base.WorkDir), testBuilt: map[string]bool{},
	}
	if *q.url != "" {
		if b.queue, err = fleet.Dial(*q.url, q.auth(), filepath.Join(base.Path(base.WorkDir), "nats"), slog.Default()); err != nil {
			return err
		}
		defer b.queue.Close()
	}
	if b.st, err = store.Open(base.Path(base.Store.DB)); err != nil {
		return err
	}
	defer b.st.Close()
	results, err := b.runAll(ctx, bugs, bench.Matrix(bugs, names, int(*seeds)))
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(os.Stderr, "interrupted; every finished run is kept: run the same command again to continue bench %s\n", *name)
		}
		return err
	}
	sum, err := bench.Summarise(*name, bugs, names, int(*seeds), int(*trials), results)
	if err != nil {
		return err
	}
	sum.DB = b.st.Path()
	rememberDB(sum.DB)
	if *asJSON {
		err = writeJSON(stdout, struct {
			Version versionInfo `json:"version"`
			*bench.Summary
		}{gofaultVersion(), sum})
	} else {
		err = sum.WriteTable(stdout)
	}
	if err != nil {
		return err
	}
	return benchResults(*fail, sum)
}

// testBench are the overrides a bench of test bugs alone takes: it reads
// no config file, so only where its work dir and store are.
var testBench = []string{"workdir", "store.db"}

// testBenchConfig is the config of a bench of test bugs alone: no file,
// only the --set overrides of testBench, paths relative to the known-bug
// file's directory.
func testBenchConfig(bugsPath string, sets []string) (*config.Config, error) {
	for _, o := range sets {
		path, _, _ := strings.Cut(o, "=")
		if !slices.Contains(testBench, strings.TrimSpace(path)) {
			return nil, fmt.Errorf("%w: --set %s: a bench of test bugs alone reads no config, so only --set %s apply (give --config for cluster bugs)", errUsage, o, strings.Join(testBench, "=..., --set ")+"=...")
		}
	}
	cfg, err := config.Parse(nil, sets...)
	if err != nil {
		return nil, err
	}
	cfg.Dir = filepath.Dir(bugsPath)
	cfg.Defaults()
	return cfg, nil
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

// benchRunner runs a bench's campaigns and keeps each run's state in the
// store's bench_runs table.
type benchRunner struct {
	name       string
	configPath string
	sets       []string
	trials     int
	parallel   int
	rebuild    bool
	bundle     string
	st         *store.Store
	built      map[string]*build.Built // per bundle dir
	// lastKey and last are the release build made last: every release of
	// a bench builds into the same work dir binary, so a build is good
	// only until another release's replaces it.
	lastKey string
	last    *build.Built
	// buildBinaries builds a release (build.Binaries; a test's stand-in).
	buildBinaries func(context.Context, *config.Config) (*build.Built, error)
	// queue, with --queue, is the server each campaign's fault trials go
	// through (a coordinator per campaign); slots bounds them.
	queue *fleet.Conn
	slots int
	// workDir is the bench's work dir: a test bug's campaigns build and
	// keep their trials in workDir/test/<bug> (workDir/test/<bug>/<version>
	// for a side that names a version); testBuilt are the work dirs whose
	// test binary this bench built (--rebuild builds each once).
	workDir   string
	testBuilt map[string]bool
	// sources are the module copies of versioned test bugs' sides made
	// (or found) by this bench, by module@version (testSource).
	sources map[string]string
}

// runAll runs every run of the matrix that has no result yet (a run left
// running by an earlier, interrupted bench continues its own campaign) and
// returns every run's result.
func (b *benchRunner) runAll(ctx context.Context, bugs []bench.Bug, runs []bench.Run) (map[bench.Run]bench.Result, error) {
	rows, err := b.st.BenchRuns(ctx, b.name)
	if err != nil {
		return nil, err
	}
	stored := map[bench.Run]*store.BenchRun{}
	for _, r := range rows {
		stored[bench.Run{Bug: r.Bug, Side: bench.Side(r.Side), Policy: r.Policy, Seed: r.Seed}] = r
	}
	byID := map[string]*bench.Bug{}
	for i := range bugs {
		byID[bugs[i].ID] = &bugs[i]
	}
	results := map[bench.Run]bench.Result{}
	for i, run := range runs {
		bug := byID[run.Bug]
		spec := bench.Spec{
			Overrides:   append(slices.Clone(b.sets), bug.Overrides(run.Side)...),
			Match:       bug.Match,
			Trials:      b.trials,
			StopAtMatch: run.Side == bench.Affected,
			Test:        bug.Test,
		}
		if bug.Test != nil {
			spec.Overrides = bug.Overrides(run.Side) // env settings; --set is the clusters'
		}
		row := stored[run]
		if row != nil && row.Spec != spec.Key() {
			return nil, fmt.Errorf("bench %s: run %s was made with another spec (%s, now %s): the config, the known-bug file or the flags changed; give --name a new name to start afresh",
				b.name, run, row.Spec, spec.Key())
		}
		if row != nil && row.Status == store.StatusDone {
			var res bench.Result
			if err := json.Unmarshal([]byte(row.Result), &res); err != nil {
				return nil, fmt.Errorf("bench %s: run %s: decode result: %w", b.name, run, err)
			}
			results[run] = res
			fmt.Fprintf(os.Stderr, "bench: run %d of %d, %s: done earlier (campaign %d)\n", i+1, len(runs), run, res.Campaign)
			continue
		}
		var resume int64
		if row != nil {
			resume = row.Campaign
		}
		fmt.Fprintf(os.Stderr, "bench: run %d of %d, %s (%s)\n", i+1, len(runs), run, bug.Release(run.Side))
		var res bench.Result
		if bug.Test != nil {
			res, err = b.runTest(ctx, run, bug, spec, resume)
		} else {
			res, err = b.run(ctx, run, spec, resume)
		}
		if err != nil {
			return nil, err
		}
		results[run] = res
	}
	return results, nil
}

// run runs (or continues) one campaign of the bench and records its
// result: the row is written as running once the campaign exists, and as
// done with its result only when the campaign ended, so an interrupted
// bench leaves each run either done or resumable.
func (b *benchRunner) run(ctx context.Context, run bench.Run, spec bench.Spec, resume int64) (bench.Result, error) {
	sets := append(slices.Clone(spec.Overrides), "policy.name="+run.Policy, fmt.Sprintf("policy.seed=%d", run.Seed))
	cfg, err := config.Open(b.configPath, known(), sets...)
	if err != nil {
		return bench.Result{}, fmt.Errorf("bench run %s: %w", run, err)
	}
	bt, err := b.builtFor(ctx, cfg)
	if err != nil {
		return bench.Result{}, err
	}
	if resume != 0 {
		if _, err := b.st.Campaign(ctx, resume); errors.Is(err, store.ErrNotFound) {
			resume = 0 // deleted since: start afresh
		}
	}
	row := store.BenchRun{Bench: b.name, Bug: run.Bug, Side: string(run.Side), Policy: run.Policy, Seed: run.Seed, Spec: spec.Key(), Status: store.StatusRunning}
	ropts := report.Options{GenericSites: cfg.Checkers.GenericSites}
	opts := campaign.Options{
		Config: cfg, Trials: spec.Trials, Parallel: b.parallel, Built: bt, Campaign: resume,
		Opened: func(id int64) error {
			row.Campaign = id
			return b.st.PutBenchRun(context.WithoutCancel(ctx), row)
		},
	}
	if spec.StopAtMatch {
		opts.Until = func(ts []*record.Trial) bool {
			res, err := bench.Judge(0, ts, spec.Match, ropts)
			return err == nil && res.Hit != nil
		}
	}
	if b.queue != nil {
		co, err := b.coordinator(ctx, cfg, sets, bt)
		if err != nil {
			return bench.Result{}, fmt.Errorf("bench run %s: %w", run, err)
		}
		defer co.Close()
		opts.Remote = co
	}
	sum, err := campaign.Run(ctx, opts)
	baselineFails := errors.Is(err, campaign.ErrBaselineFails) && ctx.Err() == nil
	switch {
	case baselineFails:
		// The scenario fails without faults: a result (no fault trial
		// ran, its failures count as without faults), not a reason to
		// abandon the rest of the bench.
		fmt.Fprintf(os.Stderr, "bench: %s: campaign %d stopped before any fault: %v\n", run, row.Campaign, err)
		sum = &campaign.Summary{Campaign: row.Campaign}
	case err != nil:
		return bench.Result{}, fmt.Errorf("bench run %s: %w", run, err)
	case sum.Stopped || ctx.Err() != nil:
		return bench.Result{}, context.Canceled
	}
	return b.finish(ctx, run, row, sum.Campaign, spec.Match, ropts, baselineFails)
}

// finish judges the ended campaign of run and records the result in its
// row as done.
func (b *benchRunner) finish(ctx context.Context, run bench.Run, row store.BenchRun, campaign int64, m bench.Matcher, ropts report.Options, baselineFails bool) (bench.Result, error) {
	ts, err := b.st.Trials(ctx, campaign)
	if err != nil {
		return bench.Result{}, err
	}
	res, err := bench.Judge(campaign, ts, m, ropts)
	if err != nil {
		return bench.Result{}, err
	}
	res.BaselineFails = baselineFails
	data, err := json.Marshal(res)
	if err != nil {
		return bench.Result{}, err
	}
	row.Campaign, row.Status, row.Result = campaign, store.StatusDone, string(data)
	if err := b.st.PutBenchRun(context.WithoutCancel(ctx), row); err != nil {
		return bench.Result{}, err
	}
	how := "no matching finding"
	if res.Hit != nil {
		how = fmt.Sprintf("matching finding at fault trial %d (%s): %s", res.Hit.Trial, res.Hit.TrialID, res.Hit.Symptom)
	}
	fmt.Fprintf(os.Stderr, "bench: %s: campaign %d, %d fault trials, %s\n", run, campaign, res.Trials, how)
	return res, nil
}

// runTest runs (or continues) one gofault test campaign of a test bug
// (gotest.Run) and records its result as run does a cluster campaign's:
// the run's env is the scenario's and the side's, its store the bench's.
// Its module is the bug's directory, whose test binary both sides share
// in work dir workDir/test/<bug> (they differ only in env), or for a side
// that names a version the module's source at that version (testSource),
// built in workDir/test/<bug>/<version>.
func (b *benchRunner) runTest(ctx context.Context, run bench.Run, bug *bench.Bug, spec bench.Spec, resume int64) (bench.Result, error) {
	t := bug.Test
	kinds, err := t.FaultKinds()
	if err != nil {
		return bench.Result{}, fmt.Errorf("bench run %s: %w", run, err)
	}
	module, work := t.Module, filepath.Join(b.workDir, "test", bug.ID)
	if bug.Versioned() {
		version := bug.Release(run.Side).Version
		if module, err = b.testSource(ctx, t.Module, version); err != nil {
			return bench.Result{}, fmt.Errorf("bench run %s: bug %s: %s.version %s: %w (is %s a version of %s? go list -m -versions %s lists them)",
				run, bug.ID, run.Side, version, err, version, t.Module, t.Module)
		}
		work = filepath.Join(work, version)
	}
	if resume != 0 {
		if _, err := b.st.Campaign(ctx, resume); errors.Is(err, store.ErrNotFound) {
			resume = 0 // deleted since: start afresh
		}
	}
	row := store.BenchRun{Bench: b.name, Bug: run.Bug, Side: string(run.Side), Policy: run.Policy, Seed: run.Seed, Spec: spec.Key(), Status: store.StatusRunning}
	var ropts report.Options
	o := gotest.Options{
		Module: module, Package: t.Package, Run: t.Run, Kinds: kinds, Delay: t.Delay, Runs: t.Runs,
		Env: bug.Env(run.Side), WorkDir: work, DB: b.st.Path(), Config: t.Config,
		Policy: run.Policy, Seed: run.Seed, Trials: spec.Trials, Parallel: testParallel(b.parallel),
		Rebuild: b.rebuild && !b.testBuilt[work], Campaign: resume, Log: slog.Default(), Progress: os.Stderr,
		Opened: func(id int64) error {
			row.Campaign = id
			return b.st.PutBenchRun(context.WithoutCancel(ctx), row)
		},
	}
	if spec.StopAtMatch {
		o.Until = func(ts []*record.Trial) bool {
			res, err := bench.Judge(0, ts, spec.Match, ropts)
			return err == nil && res.Hit != nil
		}
	}
	sum, err := gotest.Run(ctx, o)
	switch {
	case ctx.Err() != nil:
		return bench.Result{}, context.Canceled
	case err != nil:
		return bench.Result{}, fmt.Errorf("bench run %s: %w", run, err)
	}
	b.testBuilt[work] = true
	if len(sum.Selection.Chosen) == 0 {
		fmt.Fprintf(os.Stderr, "bench: %s: campaign %d chose no test (of %d measured, %d failing and %d flaky fault-free): no fault trial ran\n",
			run, sum.Campaign, len(sum.Measured), len(sum.Selection.Failing), len(sum.Selection.Flaky))
	}
	return b.finish(ctx, run, row, sum.Campaign, spec.Match, ropts, false)
}

// testSource returns the directory of a writable copy of module at
// version, the source a versioned test bug's side runs:
// workDir/modules/<module>@<version>, fetched from the module proxy
// (checksum-verified, instrument.FetchModule) once and shared by every
// campaign of that version, in this bench and the next.
func (b *benchRunner) testSource(ctx context.Context, module, version string) (string, error) {
	key := module + "@" + version
	if dir, ok := b.sources[key]; ok {
		return dir, nil
	}
	c, err := instrument.FetchModule(ctx, module, version, filepath.Join(b.workDir, "modules"))
	if err != nil {
		return "", err
	}
	if b.sources == nil {
		b.sources = map[string]string{}
	}
	b.sources[key] = c.Dir
	return c.Dir, nil
}

// testParallel is a test campaign's gotest.Options.Parallel for the
// bench's --parallel n (0, not given: one test process at a time, as
// gofault test's default).
func testParallel(n int) int {
	switch {
	case n == campaign.ParallelAuto:
		return gotest.ParallelAuto
	case n < 1:
		return 1
	}
	return n
}

// coordinator hands the fault trials of a campaign of cfg (the config
// file with sets) to the queue's workers, with the bundle of its release
// and the campaign's own config.
func (b *benchRunner) coordinator(ctx context.Context, cfg *config.Config, sets []string, bt *build.Built) (*fleet.Coordinator, error) {
	raw, err := config.Load(b.configPath, sets...)
	if err != nil {
		return nil, err
	}
	conf := *raw
	conf.WorkDir = "" // the worker's own
	data, err := yaml.Marshal(&conf)
	if err != nil {
		return nil, fmt.Errorf("queue: config: %w", err)
	}
	dir := filepath.Join(b.bundle, cmp.Or(cfg.Target.Version, benchDefaultRelease))
	return fleet.NewCoordinator(ctx, b.queue, fleet.CoordinatorOptions{Bundle: dir, Config: data, Catalog: bt.Catalog, Slots: b.slots, Log: slog.Default()})
}

// builtFor returns what a campaign of cfg runs: the bundle of its release
// (--bundle), or its build, made once per set of build inputs.
func (b *benchRunner) builtFor(ctx context.Context, cfg *config.Config) (*build.Built, error) {
	if b.bundle != "" {
		dir := filepath.Join(b.bundle, cmp.Or(cfg.Target.Version, benchDefaultRelease))
		if bt := b.built[dir]; bt != nil {
			return bt, nil
		}
		bd, err := build.OpenBundle(dir)
		if err != nil {
			return nil, fmt.Errorf("%w (write the bundles with: gofault build --config %s --bundle %s --bugs FILE)", err, b.configPath, b.bundle)
		}
		bt, err := bd.Built(cfg)
		if err != nil {
			return nil, err
		}
		b.built[dir] = bt
		return bt, nil
	}
	key, err := json.Marshal(struct {
		T       config.Target
		P       string
		C       []string
		W, Work string
	}{cfg.Target, cfg.Workload.Package, cfg.Workload.Command, cfg.Dir, cfg.WorkDir})
	if err != nil {
		return nil, err
	}
	if b.last != nil && b.lastKey == string(key) {
		return b.last, nil
	}
	// Another release's build is in the work dir: build this one again
	// (build.Binaries reuses what its key file says is unchanged). A memo
	// per release handed out a catalog whose binary another release had
	// overwritten: the controller refused every fault of those campaigns
	// (a fixed release ran the affected one's binary).
	buildBinaries := b.buildBinaries
	if buildBinaries == nil {
		buildBinaries = func(ctx context.Context, cfg *config.Config) (*build.Built, error) {
			return build.Binaries(ctx, cfg, build.Options{Rebuild: b.rebuild}, slog.Default())
		}
	}
	bt, err := buildBinaries(ctx, cfg)
	if err != nil {
		return nil, err
	}
	b.lastKey, b.last = string(key), bt
	return bt, nil
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
			sub := cmp.Or(cfg.Target.Version, benchDefaultRelease)
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
