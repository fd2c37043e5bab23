package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/fleet"
	"github.com/gofault/gofault/gotest"
	"github.com/gofault/gofault/instrument"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/report"
	"github.com/gofault/gofault/store"
)

// ErrUsage marks an error of a bench's options that the one who gave them
// must fix (a bug the file lacks, an override a bench of test bugs alone
// does not take); gofault bench exits 2 on it.
var ErrUsage = errors.New("usage")

// DefaultSeeds is a bench's seeds per bug, side and policy unless
// Options.Seeds says otherwise: five, the fewest whose smallest and
// largest trials-to-find bound the median with about 94% confidence
// (Row.TrialsCI), so that policies can be told apart (issue 46).
const DefaultSeeds = 5

// CampaignsAuto is Options.Campaigns for --campaigns auto: as many
// campaigns at once as the machine runs clusters (campaign.AutoClusters),
// divided by each campaign's Parallel.
const CampaignsAuto = -1

// DefaultRelease names the bundle subdirectory of a release without a
// version (a bundle dir DIR holds DIR/<version>, or DIR/default).
const DefaultRelease = "default"

// Options are what a bench runs: the bugs of a known-bug file, each on
// both sides, under every policy and seed, and where it keeps them.
type Options struct {
	// BugsPath is the known-bug file; Only, if not empty, the IDs of the
	// bugs of it to run.
	BugsPath string
	Only     []string
	// ConfigPath is the cluster config file, and Sets the overrides
	// applied to it ("path=value", as --set takes). A file of test bugs
	// alone reads no config unless ConfigGiven: its work dir and store are
	// then beside the known-bug file (or where Sets' workdir and store.db
	// say).
	ConfigPath  string
	ConfigGiven bool
	Sets        []string
	// Known are the names config validation accepts.
	Known config.Known
	// Policies and Seeds: each bug runs on each side under every policy
	// with seeds 1..Seeds (0: DefaultSeeds).
	Policies []string
	Seeds    int
	// Trials caps each campaign's fault trials (0: the config's
	// trials.count); Parallel is each campaign's clusters at once
	// (campaign.Options.Parallel; 0: the config's).
	Trials   int
	Parallel int
	// Campaigns is how many of the bench's campaigns run at once (0 or
	// 1: one after another), each with Parallel clusters and a work dir
	// of its own for its trials (the config's work dir's lanes/<k>): the
	// campaigns of one release at a time, as the releases share the work
	// dir's build. A test bug's campaigns run one after another.
	Campaigns int
	// Name names the bench (default: a hash of the config, the
	// overrides, the known-bug file and the options but Parallel); the
	// same name resumes it.
	Name string
	// Rebuild builds every release afresh; Bundle, if set, runs the
	// prebuilt bundles DIR/<version> (DIR/DefaultRelease) instead.
	Rebuild bool
	Bundle  string
	// Queue, if set, is the NATS JetStream server whose workers run each
	// campaign's fault trials (with QueueAuth; at most QueueSlots queued
	// or running at once).
	Queue      string
	QueueAuth  fleet.Auth
	QueueSlots int
	// Lock, if set, takes the work dir of the bench's config until the
	// function it returns is called.
	Lock func(*config.Config) (func(), error)
	// Progress receives a line per run (os.Stderr if nil); Log the
	// builds' and campaigns' logs (slog.Default if nil).
	Progress io.Writer
	Log      *slog.Logger
}

// Measure runs (or, by name, continues) a bench and summarises it: every run
// of the matrix of bugs, sides, policies and seeds that has no result in
// the config's store yet runs its campaign, and each run's state is kept
// in the store's bench_runs table, so an interrupted bench continues where
// it stopped.
func Measure(ctx context.Context, o Options) (*Summary, error) {
	o.Progress = cmp.Or[io.Writer](o.Progress, os.Stderr)
	o.Log = cmp.Or(o.Log, slog.Default())
	o.Seeds = cmp.Or(o.Seeds, DefaultSeeds)
	file, bugsData, err := Load(o.BugsPath, o.Known.Checkers)
	if err != nil {
		return nil, err
	}
	bugs, err := file.Select(o.Only)
	if err != nil {
		return nil, fmt.Errorf("%w: --bug: %v", ErrUsage, err)
	}
	tests := slices.ContainsFunc(bugs, func(b Bug) bool { return b.Test != nil })
	if tests && (o.Bundle != "" || o.Queue != "") {
		return nil, fmt.Errorf("%w: --bundle and --queue do not take test bugs (a bug with a test section) yet; choose the cluster bugs with --bug", ErrUsage)
	}
	testsOnly := !o.ConfigGiven && !slices.ContainsFunc(bugs, func(b Bug) bool { return b.Test == nil })
	base, err := baseConfig(o, testsOnly)
	if err != nil {
		return nil, err
	}
	o.Trials = cmp.Or(o.Trials, base.Trials.Count)
	if o.Name == "" {
		if o.Name, err = name(o, testsOnly, bugsData, bugs); err != nil {
			return nil, err
		}
	}
	if o.Lock != nil {
		release, err := o.Lock(base)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	if o.Campaigns == CampaignsAuto {
		per := max(1, o.Parallel)
		n, why := campaign.AutoClusters(engine.ThisMachine(), base.Cluster.Nodes)
		o.Campaigns = max(1, n/per)
		fmt.Fprintf(o.Progress, "bench: campaigns auto: %d at once, %d clusters each (%s)\n", o.Campaigns, per, why)
	}
	if o.Campaigns > 1 && (o.Parallel == 0 || o.Parallel == campaign.ParallelAuto) {
		// Campaigns at once each run one cluster unless told: their own
		// auto would each size the whole machine.
		o.Parallel = 1
	}
	b, err := newBencher(o, base)
	if err != nil {
		return nil, err
	}
	defer b.close()
	results, err := b.runAll(ctx, bugs, Matrix(bugs, o.Policies, o.Seeds))
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(o.Progress, "interrupted; every finished run is kept: run the same command again to continue bench %s\n", o.Name)
		}
		return nil, err
	}
	sum, err := Summarise(o.Name, bugs, o.Policies, o.Seeds, o.Trials, results)
	if err != nil {
		return nil, err
	}
	sum.DB = b.st.Path()
	return sum, nil
}

// baseConfig is the config of the bench as a whole (its work dir, store
// and trials.count): the config file's, or for a bench of test bugs alone
// testConfig.
func baseConfig(o Options, testsOnly bool) (*config.Config, error) {
	if testsOnly {
		return testConfig(o.BugsPath, o.Sets)
	}
	return config.Open(o.ConfigPath, o.Known, o.Sets...)
}

// name is the name of a bench that was given none: Name over the config
// file (none for test bugs alone), the known-bug file and the options.
func name(o Options, testsOnly bool, bugsData []byte, bugs []Bug) (string, error) {
	var configData []byte
	if !testsOnly {
		var err error
		if configData, err = os.ReadFile(o.ConfigPath); err != nil {
			return "", err
		}
	}
	var ids []string
	for _, b := range bugs {
		ids = append(ids, b.ID)
	}
	return Name(configData, bugsData, o.Sets, ids, o.Policies, o.Seeds, o.Trials), nil
}

// newBencher opens what the bench's runs share: the store of base, and
// with a queue the connection to its server.
func newBencher(o Options, base *config.Config) (*bencher, error) {
	b := &bencher{
		name: o.Name, configPath: o.ConfigPath, sets: o.Sets, trials: o.Trials, parallel: o.Parallel, campaigns: max(1, o.Campaigns),
		rebuild: o.Rebuild, bundle: o.Bundle, built: map[string]*build.Built{}, slots: o.QueueSlots,
		workDir: base.Path(base.WorkDir), testBuilt: map[string]bool{},
		known: o.Known, progress: o.Progress, log: o.Log,
	}
	if o.Queue != "" {
		var err error
		if b.queue, err = fleet.Dial(o.Queue, o.QueueAuth, filepath.Join(base.Path(base.WorkDir), "nats"), o.Log); err != nil {
			return nil, err
		}
	}
	st, err := store.Open(base.Path(base.Store.DB))
	if err != nil {
		b.close()
		return nil, err
	}
	b.st = st
	return b, nil
}

// close closes the bench's store and queue connection.
func (b *bencher) close() {
	if b.st != nil {
		b.st.Close()
	}
	if b.queue != nil {
		b.queue.Close()
	}
}

// testOnlySets are the overrides a bench of test bugs alone takes: it reads
// no config file, so only where its work dir and store are.
var testOnlySets = []string{"workdir", "store.db"}

// testConfig is the config of a bench of test bugs alone: no file,
// only the --set overrides of testOnlySets, paths relative to the known-bug
// file's directory.
func testConfig(bugsPath string, sets []string) (*config.Config, error) {
	for _, o := range sets {
		path, _, _ := strings.Cut(o, "=")
		if !slices.Contains(testOnlySets, strings.TrimSpace(path)) {
			return nil, fmt.Errorf("%w: --set %s: a bench of test bugs alone reads no config, so only --set %s apply (give --config for cluster bugs)", ErrUsage, o, strings.Join(testOnlySets, "=..., --set ")+"=...")
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

// bencher runs a bench's campaigns and keeps each run's state in the
// store's bench_runs table.
type bencher struct {
	name       string
	configPath string
	sets       []string
	trials     int
	parallel   int
	campaigns  int
	rebuild    bool
	bundle     string
	st         *store.Store
	built      map[string]*build.Built // per bundle dir
	// lastKey and last are the release build made last: every release of
	// a bench builds into the same work dir binary, so a build is good
	// only until another release's replaces it.
	lastKey string
	last    *build.Built
	// mu guards built, lastKey and last: campaigns run at once ask
	// builtFor together.
	mu sync.Mutex
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
	// known are the names config validation accepts; progress and log
	// as Options'.
	known    config.Known
	progress io.Writer
	log      *slog.Logger
}

// runAll runs every run of the matrix that has no result yet (a run left
// running by an earlier, interrupted bench continues its own campaign) and
// returns every run's result.
func (b *bencher) runAll(ctx context.Context, bugs []Bug, runs []Run) (map[Run]Result, error) {
	rows, err := b.st.BenchRuns(ctx, b.name)
	if err != nil {
		return nil, err
	}
	stored := map[Run]*store.BenchRun{}
	for _, r := range rows {
		stored[Run{Bug: r.Bug, Side: Side(r.Side), Policy: r.Policy, Seed: r.Seed}] = r
	}
	byID := map[string]*Bug{}
	for i := range bugs {
		byID[bugs[i].ID] = &bugs[i]
	}
	results := map[Run]Result{}
	var pending []pendingRun
	for i, run := range runs {
		bug := byID[run.Bug]
		spec := Spec{
			Overrides:   append(slices.Clone(b.sets), bug.Overrides(run.Side)...),
			Match:       bug.Match,
			Trials:      b.trials,
			StopAtMatch: run.Side == Affected,
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
			var res Result
			if err := json.Unmarshal([]byte(row.Result), &res); err != nil {
				return nil, fmt.Errorf("bench %s: run %s: decode result: %w", b.name, run, err)
			}
			results[run] = res
			fmt.Fprintf(b.progress, "bench: run %d of %d, %s: done earlier (campaign %d)\n", i+1, len(runs), run, res.Campaign)
			continue
		}
		p := pendingRun{index: i, run: run, bug: bug, spec: spec}
		if row != nil {
			p.resume = row.Campaign
		}
		if bug.Test == nil {
			p.sets = b.runSets(run, spec)
			if p.cfg, err = config.Open(b.configPath, b.known, p.sets...); err != nil {
				return nil, fmt.Errorf("bench run %s: %w", run, err)
			}
			if p.buildKey, err = b.buildKey(p.cfg); err != nil {
				return nil, err
			}
		}
		pending = append(pending, p)
	}
	var mu sync.Mutex
	do := func(ctx context.Context, p pendingRun, lane int) error {
		fmt.Fprintf(b.progress, "bench: run %d of %d, %s (%s)\n", p.index+1, len(runs), p.run, p.bug.Release(p.run.Side))
		var res Result
		var err error
		if p.bug.Test != nil {
			res, err = b.runTest(ctx, p.run, p.bug, p.spec, p.resume)
		} else {
			res, err = b.run(ctx, p, lane)
		}
		if err != nil {
			return err
		}
		mu.Lock()
		results[p.run] = res
		mu.Unlock()
		return nil
	}
	// The clusters' campaigns k at once, release by release; then the
	// test bugs' one after another (each runs its own test processes at
	// once).
	clusters := slices.DeleteFunc(slices.Clone(pending), func(p pendingRun) bool { return p.bug.Test != nil })
	tests := slices.DeleteFunc(slices.Clone(pending), func(p pendingRun) bool { return p.bug.Test == nil })
	if err := lanes(ctx, clusters, b.campaigns, func(p pendingRun) string { return p.buildKey }, do); err != nil {
		return nil, err
	}
	if err := lanes(ctx, tests, 1, func(pendingRun) string { return "" }, do); err != nil {
		return nil, err
	}
	return results, nil
}

// pendingRun is a run of the matrix still to run (or to continue): its
// place in the matrix, bug, spec and the campaign it continues; a cluster
// bug's run also its overrides (runSets), its config and the key of its
// release's build.
type pendingRun struct {
	index    int
	run      Run
	bug      *Bug
	spec     Spec
	resume   int64
	sets     []string
	cfg      *config.Config
	buildKey string
}

// runSets are the overrides of a cluster bug's run: the bench's and the
// run's, its policy and seed, and the memory off.
func (b *bencher) runSets(run Run, spec Spec) []string {
	// Each run starts without the memory of the bench's other runs (the
	// seeds and releases share one store): a scenario may turn it on.
	sets := append([]string{"policy.memory=off"}, spec.Overrides...)
	return append(sets, "policy.name="+run.Policy, fmt.Sprintf("policy.seed=%d", run.Seed))
}

// run runs (or continues) one campaign of the bench and records its
// result: the row is written as running once the campaign exists, and as
// done with its result only when the campaign ended, so an interrupted
// bench leaves each run either done or resumable.
func (b *bencher) run(ctx context.Context, p pendingRun, lane int) (Result, error) {
	run, spec, resume, cfg, sets := p.run, p.spec, p.resume, p.cfg, p.sets
	bt, err := b.builtFor(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	if b.campaigns > 1 {
		// Its trials in a dir of its own: a campaign's keeper takes the
		// trial dirs it finds in its work dir that still hold data for
		// an earlier run's, and would pack another campaign's running
		// trial. The store and the build stay the config's.
		c := *cfg
		c.WorkDir = filepath.Join(cfg.WorkDir, "lanes", strconv.Itoa(lane+1))
		cfg = &c
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
			res, err := Score(0, ts, spec.Match, ropts)
			return err == nil && res.Hit != nil
		}
	}
	if b.queue != nil {
		co, err := b.coordinator(ctx, cfg, sets, bt)
		if err != nil {
			return Result{}, fmt.Errorf("bench run %s: %w", run, err)
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
		fmt.Fprintf(b.progress, "bench: %s: campaign %d stopped before any fault: %v\n", run, row.Campaign, err)
		sum = &campaign.Summary{Campaign: row.Campaign}
	case err != nil:
		return Result{}, fmt.Errorf("bench run %s: %w", run, err)
	case sum.Stopped || ctx.Err() != nil:
		return Result{}, context.Canceled
	}
	return b.finish(ctx, run, row, sum.Campaign, spec.Match, ropts, baselineFails)
}

// finish judges the ended campaign of run and records the result in its
// row as done.
func (b *bencher) finish(ctx context.Context, run Run, row store.BenchRun, campaign int64, m Matcher, ropts report.Options, baselineFails bool) (Result, error) {
	ts, err := b.st.Trials(ctx, campaign)
	if err != nil {
		return Result{}, err
	}
	res, err := Score(campaign, ts, m, ropts)
	if err != nil {
		return Result{}, err
	}
	res.BaselineFails = baselineFails
	data, err := json.Marshal(res)
	if err != nil {
		return Result{}, err
	}
	row.Campaign, row.Status, row.Result = campaign, store.StatusDone, string(data)
	if err := b.st.PutBenchRun(context.WithoutCancel(ctx), row); err != nil {
		return Result{}, err
	}
	how := "no matching finding"
	if res.Hit != nil {
		how = fmt.Sprintf("matching finding at fault trial %d (%s): %s", res.Hit.Trial, res.Hit.TrialID, res.Hit.Symptom)
	}
	fmt.Fprintf(b.progress, "bench: %s: campaign %d, %d fault trials, %s\n", run, campaign, res.Trials, how)
	return res, nil
}

// runTest runs (or continues) one gofault test campaign of a test bug
// (gotest.Run) and records its result as run does a cluster campaign's:
// the run's env is the scenario's and the side's, its store the bench's.
// Its module is the bug's directory, whose test binary both sides share
// in work dir workDir/test/<bug> (they differ only in env), or for a side
// that names a version the module's source at that version (testSource),
// built in workDir/test/<bug>/<version>.
func (b *bencher) runTest(ctx context.Context, run Run, bug *Bug, spec Spec, resume int64) (Result, error) {
	t := bug.Test
	kinds, err := t.FaultKinds()
	if err != nil {
		return Result{}, fmt.Errorf("bench run %s: %w", run, err)
	}
	module, work := t.Module, filepath.Join(b.workDir, "test", bug.ID)
	if bug.Versioned() {
		version := bug.Release(run.Side).Version
		if module, err = b.testSource(ctx, t.Module, version); err != nil {
			return Result{}, fmt.Errorf("bench run %s: bug %s: %s.version %s: %w (is %s a version of %s? go list -m -versions %s lists them)",
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
		Rebuild: b.rebuild && !b.testBuilt[work], Campaign: resume, Log: b.log, Progress: b.progress,
		Opened: func(id int64) error {
			row.Campaign = id
			return b.st.PutBenchRun(context.WithoutCancel(ctx), row)
		},
	}
	if spec.StopAtMatch {
		o.Until = func(ts []*record.Trial) bool {
			res, err := Score(0, ts, spec.Match, ropts)
			return err == nil && res.Hit != nil
		}
	}
	sum, err := gotest.Run(ctx, o)
	switch {
	case ctx.Err() != nil:
		return Result{}, context.Canceled
	case err != nil:
		return Result{}, fmt.Errorf("bench run %s: %w", run, err)
	}
	b.testBuilt[work] = true
	if len(sum.Selection.Chosen) == 0 {
		fmt.Fprintf(b.progress, "bench: %s: campaign %d chose no test (of %d measured, %d failing and %d flaky fault-free): no fault trial ran\n",
			run, sum.Campaign, len(sum.Measured), len(sum.Selection.Failing), len(sum.Selection.Flaky))
	}
	return b.finish(ctx, run, row, sum.Campaign, spec.Match, ropts, false)
}

// testSource returns the directory of a writable copy of module at
// version, the source a versioned test bug's side runs:
// workDir/modules/<module>@<version>, fetched from the module proxy
// (checksum-verified, instrument.FetchModule) once and shared by every
// campaign of that version, in this bench and the next.
func (b *bencher) testSource(ctx context.Context, module, version string) (string, error) {
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
// bench's --parallel n (0, not given: one test process at a time, so
// that a bench's timings compare; gofault test itself defaults to auto).
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
func (b *bencher) coordinator(ctx context.Context, cfg *config.Config, sets []string, bt *build.Built) (*fleet.Coordinator, error) {
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
	dir := b.bundleDir(cfg)
	return fleet.NewCoordinator(ctx, b.queue, fleet.CoordinatorOptions{Bundle: dir, Config: data, Catalog: bt.Catalog, Slots: b.slots, Log: b.log})
}

// builtFor returns what a campaign of cfg runs: the bundle of its release
// (--bundle), or its build, made once per set of build inputs.
func (b *bencher) builtFor(ctx context.Context, cfg *config.Config) (*build.Built, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bundle != "" {
		dir := b.bundleDir(cfg)
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
	key, err := b.buildKey(cfg)
	if err != nil {
		return nil, err
	}
	if b.last != nil && b.lastKey == key {
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
			return build.Binaries(ctx, cfg, build.Options{Rebuild: b.rebuild}, b.log)
		}
	}
	bt, err := buildBinaries(ctx, cfg)
	if err != nil {
		return nil, err
	}
	b.lastKey, b.last = key, bt
	return bt, nil
}

// buildKey says which build a campaign of cfg runs: the bundle dir of its
// release (--bundle), or the inputs of its build; campaigns of one key
// can run at once.
func (b *bencher) buildKey(cfg *config.Config) (string, error) {
	if b.bundle != "" {
		return b.bundleDir(cfg), nil
	}
	key, err := json.Marshal(struct {
		T       config.Target
		P       string
		C       []string
		W, Work string
	}{cfg.Target, cfg.Workload.Package, cfg.Workload.Command, cfg.Dir, cfg.WorkDir})
	return string(key), err
}

// bundleDir is the bundle of cfg's release under --bundle DIR:
// DIR/<version>, or DIR/DefaultRelease for a release without one.
func (b *bencher) bundleDir(cfg *config.Config) string {
	return filepath.Join(b.bundle, cmp.Or(cfg.Target.Version, DefaultRelease))
}
