// Package gotest runs a project's own Go tests as gofault's workload
// (gofault test): it builds the package's test binary once with the same
// analysis and instrumentation as a node binary (go test -c -overlay),
// measures every test fault-free (pass/fail, flakiness, time, the fault
// sites it reaches), then runs fault trials, each one chosen test in a
// process whose agent connects to the controller as node "n1" and whose
// faults the policy decides. A test that passed every fault-free run and
// fails, hangs, panics or races with a fault is a finding. Trials and
// verdicts go to the same store as a campaign's, so gofault report shows
// them.
//
// The decisions (how a run ended, which tests get trials, the hang bound)
// are the pure functions of judge.go; this file does the I/O.
package gotest

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/gofault/gofault/agent/wire"
	"github.com/gofault/gofault/build"
	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/cluster"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/controller"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/instrument"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/procgroup"
	"github.com/gofault/gofault/record"
	"github.com/gofault/gofault/store"
	"github.com/gofault/gofault/workdir"
)

// Node is the name of the node a test process is; with a member rule
// (Options.Member) the requests that name a member of an in-process
// cluster are that member's node instead (controller.MemberNode: n1, n2,
// ... in the order the process first saw them), and the process is
// ProcessNode.
const Node = "n1"

// ProcessNode is the node a test process is with a member rule: the
// requests made outside every member's method (test code, package
// functions). It is controller.MemberNode(0), rank 0 being "no member",
// so that it is never taken for the first member, n1.
const ProcessNode = "n0"

// node returns the node the test process is: ProcessNode with a member
// rule, else Node.
func (o *Options) node() string {
	if o.Member != "" {
		return ProcessNode
	}
	return Node
}

// Options is what a gofault test campaign runs.
type Options struct {
	// Module is the directory of the module that holds the package under
	// test.
	Module string `json:"module"`
	// Package is the package under test, as go test -c takes it (one
	// package, relative to Module or an import path).
	Package string `json:"package"`
	// Packages are the patterns analysed and instrumented (default:
	// Package): the package under test and what it reaches.
	Packages []string `json:"packages,omitempty"`
	// BuildFlags are extra flags of the go test -c build, e.g. "-race".
	BuildFlags []string `json:"build_flags,omitempty"`
	// TestFlags are passed to every run of the test binary, in its own
	// form (-test.short, or -short: the go test spelling is mapped).
	TestFlags []string `json:"test_flags,omitempty"`
	// Run, if set, keeps only the listed tests this regexp matches.
	Run string `json:"run,omitempty"`
	// Env are extra KEY=VALUE variables of every test run; a value's
	// ${GOFAULT_TEST_PORT} (or ${GOFAULT_TEST_PORT+N}) is the first (or
	// N-th next) of the run's own ports (ExpandPorts).
	Env []string `json:"env,omitempty"`
	// Ports is the first port of the ranges of PortSpan ports that the
	// test processes run at once get, one each (default FirstPort): its
	// own in EnvPort and EnvPorts, and in Env's ${GOFAULT_TEST_PORT}.
	Ports int `json:"ports,omitempty"`
	// WorkDir holds the build, the trials' logs and, by default, the
	// store.
	WorkDir string `json:"work_dir"`
	// DB is the store (default <WorkDir>/gofault.db).
	DB string `json:"db,omitempty"`

	Policy string         `json:"policy"`
	Seed   int64          `json:"seed"`
	Kinds  []catalog.Kind `json:"kinds"`
	// Delay is the length of an injected delay (policy default if 0).
	Delay time.Duration `json:"delay,omitempty"`
	// Trials is the number of fault trials.
	Trials int `json:"trials"`
	// Runs is the number of fault-free runs of every test (default 2).
	Runs int `json:"runs"`
	// Once runs each test once a process. By default the last of a
	// test's fault-free runs runs it twice in one process
	// (-test.count=2), and a test that passes both runs twice in each
	// fault trial: a second run that fails after a fault struck the first
	// is a finding, the state the fault left in the process (again.go).
	Once bool `json:"once,omitempty"`
	// TwiceMax is the longest fault-free run of a test whose fault
	// trials run it twice (default DefaultTwiceMax): a slower test runs
	// once, since a second run would double its trials' time.
	TwiceMax time.Duration `json:"twice_max,omitempty"`
	// Timeout bounds a fault-free run (default 3m): past it the run hung.
	Timeout time.Duration `json:"timeout,omitempty"`
	// HangFloor is the least time a fault trial may run before it is a
	// hang (HangBound; default 30s).
	HangFloor time.Duration `json:"hang_floor,omitempty"`
	// Helpers lets faults strike the sites in files of the package that
	// import "testing" (HelperSites), left out by default.
	Helpers bool `json:"helpers,omitempty"`
	// Rebuild builds the test binary afresh even when an earlier build of
	// the same package sources is there.
	Rebuild bool `json:"-"`
	// Parallel is how many test processes run at once, each its own
	// trial (0 or 1: one at a time; ParallelAuto: the fault-free pass
	// one at a time, the fault trials as AutoParallel decides from it).
	// With Queue, it is how many fault trials also run here (0: none,
	// the workers run them all; the fault-free pass runs one at a time).
	Parallel int `json:"-"`
	// Bundle, if set, is the directory the campaign's bundle is written
	// into once the test binary is built (OpenBundle opens it); with
	// Queue it defaults to <WorkDir>/bundle.
	Bundle string `json:"-"`
	// Queue, if set, hands the fault trials to other machines: it is
	// called once with the bundle's directory and catalog, after the
	// fault-free pass's build, and returns what runs them (package
	// fleet's coordinator). A fault trial runs there whenever none of
	// the Parallel local processes is free. The fault-free pass stays
	// here: it measures the sites each test reaches.
	Queue func(ctx context.Context, q Queued) (engine.Remote, error) `json:"-"`
	// Resume continues the newest campaign of the store made with the
	// same options (Trials aside): the tests its fault-free pass
	// measured are not run again, fault trials go on from its next index
	// with the policy's stored state, until Trials fault trials are
	// stored in all. A campaign whose test binary had other inputs is
	// refused.
	Resume bool `json:"-"`
	// Member is the member rule, "pkg/path.Type.field" (gofault.yaml's
	// test.member): the field that tells the members of an in-process
	// cluster apart. Every method of Type tags the goroutine running it,
	// and a request from a tagged goroutine is its member's node. Empty:
	// Config's test.member, if any; none, the process is one node.
	Member string `json:"member,omitempty"`
	// Transport is the in-process transport the members send through
	// (gofault.yaml's test.transport, read with Member): with its sends
	// the cut kinds (partition, disconnect, oneway, split, leadercut)
	// are offered, between members.
	Transport config.Transport `json:"transport,omitempty"`
	// Setup names the tests' setup helpers (gofault.yaml's test.setup):
	// path.Match patterns of functions ("createJetStreamCluster*") and
	// methods ("cluster.restartAll") declared in the package's _test.go
	// files. While one runs, in any goroutine, no fault strikes the test
	// process and its requests count as no site a fault may strike.
	// Empty: Config's test.setup, if any.
	Setup []string `json:"setup,omitempty"`
	// Config is the config file whose test section Run reads when
	// Member is empty (default: gofault.yaml in Module, if there).
	Config string `json:"-"`
	// Campaign, if set, is the campaign to continue (as Resume, but this
	// one; it must have been made with the same options, Trials aside):
	// gofault bench resumes its own runs by ID.
	Campaign int64 `json:"-"`
	// Opened, if set, is called with the campaign's ID once it is made or
	// found, before any test runs.
	Opened func(id int64) error `json:"-"`
	// Until, if set, is called with every trial of the campaign so far
	// (an earlier run's included) before the fault trials and after each
	// of them is stored; once it returns true no further trial begins,
	// those under way finish and are stored, and the campaign is done
	// (Summary.Ended). gofault bench stops at a known bug's finding.
	Until func(trials []*record.Trial) bool `json:"-"`

	// Log receives gofault's own log; Progress a line per test measured
	// and per trial (both may be nil).
	Log      *slog.Logger `json:"-"`
	Progress io.Writer    `json:"-"`
}

// Summary is what a gofault test campaign did.
type Summary struct {
	Campaign int64  `json:"campaign"`
	DB       string `json:"db"`
	Binary   string `json:"binary"`
	// Reused is set when the test binary of an earlier build with the
	// same inputs was reused.
	Reused bool `json:"reused,omitempty"`
	Sites  int  `json:"sites"`
	// HelperSites counts the sites left out because their call is in a
	// test helper file (HelperFiles), unless Options.Helpers.
	HelperSites int      `json:"helper_sites,omitempty"`
	HelperFiles []string `json:"helper_files,omitempty"`
	// SetupRequests counts the fault trials' requests whose stack passed
	// through a test helper, answered "no fault" unless Options.Helpers.
	SetupRequests int `json:"setup_requests,omitempty"`
	// Setup is the setup rule used (Options.Setup), SetupFuncs the
	// functions of the test files it hooked.
	Setup      []string `json:"setup,omitempty"`
	SetupFuncs int      `json:"setup_funcs,omitempty"`
	// Member is the member rule used ("" none). Requests counts every
	// run's requests, MemberRequests those that named a member (the
	// others are node n1's); MostMembers is the most members one run
	// saw, MemberMethods the member type's methods hooked.
	Member         string `json:"member,omitempty"`
	Requests       int    `json:"requests"`
	MemberRequests int    `json:"member_requests,omitempty"`
	MostMembers    int    `json:"most_members,omitempty"`
	MemberMethods  int    `json:"member_methods,omitempty"`
	// Sends are the transport's send methods hooked (Options.Transport),
	// MemberSends the requests at them that named both the member sending
	// and the member sent to: the sends a cut between members can strike.
	Sends       int `json:"sends,omitempty"`
	MemberSends int `json:"member_sends,omitempty"`
	// Measured are the tests of the fault-free pass, in list order.
	Measured  []Measure `json:"measured"`
	Selection Selection `json:"selection"`
	// Twice counts the chosen tests whose fault trials run them twice in
	// the process (Measure.Again; again.go), TooSlowTwice those that
	// passed twice but run once, slower than Options.TwiceMax.
	Twice        int `json:"twice,omitempty"`
	TooSlowTwice int `json:"too_slow_twice,omitempty"`
	// Shares are the fault trials each chosen test got, and its weight
	// (Allot), in chosen order.
	Shares []Share `json:"shares,omitempty"`
	// Parallel is how many test processes ran the fault trials at once,
	// ParallelHow why.
	Parallel    int    `json:"parallel"`
	ParallelHow string `json:"parallel_how,omitempty"`
	// Resumed counts the tests measured and the fault trials stored by
	// earlier runs of a resumed campaign (counted in Measured and
	// Trials too).
	ResumedTests  int `json:"resumed_tests,omitempty"`
	ResumedTrials int `json:"resumed_trials,omitempty"`
	// Trials counts the fault trials run, Injected those with a fault,
	// Failed those whose test failed, FaultFailed those with a fault.
	Trials      int `json:"trials"`
	Injected    int `json:"injected"`
	Failed      int `json:"failed"`
	FaultFailed int `json:"fault_failed"`
	// Findings counts the campaign's findings and FaultFreeFailures its
	// failures with no fault injected, fault-free runs' included, as
	// gofault report --db DB clusters them (an earlier run's trials of a
	// resumed campaign counted too): what --fail-on reads (Failures).
	Findings          int `json:"findings"`
	FaultFreeFailures int `json:"fault_free_failures"`
	// Assumptions counts the fault trials whose test failed by its own
	// report of the error injected into it (AssumptionSymptom), or after
	// it discarded that error where its own call returned it
	// (IgnoredSymptom): the test's assumption, not a finding.
	Assumptions int `json:"assumptions"`
	// FailStops counts the fault trials whose process the code under test
	// stopped on purpose on the injected error (FailStopSymptom), Timing
	// those whose test's own wait ran out while an injected delay held
	// the call (TimingSymptom): not findings either.
	FailStops int `json:"fail_stops,omitempty"`
	Timing    int `json:"timing,omitempty"`
	// Bundle is the bundle written (Options.Bundle), BundleBytes its
	// binary's and package files' size; RemoteTrials counts the fault
	// trials other machines ran (Options.Queue), Workers those by the
	// worker that ran them (engine.RemoteResult.Worker).
	Bundle       string         `json:"bundle,omitempty"`
	BundleBytes  int64          `json:"bundle_bytes,omitempty"`
	RemoteTrials int            `json:"remote_trials,omitempty"`
	Workers      map[string]int `json:"workers,omitempty"`
	Seconds      float64        `json:"seconds"`
	BuildSecs    float64        `json:"build_seconds"`
	// MeasureSecs and FaultSecs are the wall time of this run's
	// fault-free pass and fault trials.
	MeasureSecs float64 `json:"measure_seconds"`
	FaultSecs   float64 `json:"fault_seconds"`
	// Ended: Options.Until ended the campaign before its trial count.
	Ended bool `json:"ended,omitempty"`
}

// absolute turns o's directories and files into absolute paths. The
// options are stored with the campaign, and gofault replay (or the
// dashboard) reads them from another directory: a relative --module, the
// default ".", named the wrong module there.
func (o *Options) absolute() error {
	for _, p := range []*string{&o.Module, &o.WorkDir, &o.DB, &o.Config} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("gofault test: %w", err)
		}
		*p = abs
	}
	return nil
}

// defaults fills in what o leaves zero.
func (o *Options) defaults() {
	o.Module = cmp.Or(o.Module, ".")
	o.Package = cmp.Or(o.Package, ".")
	if len(o.Packages) == 0 {
		o.Packages = []string{o.Package}
	}
	o.WorkDir = cmp.Or(o.WorkDir, filepath.Join(o.Module, ".gofault", "test"))
	o.DB = cmp.Or(o.DB, filepath.Join(o.WorkDir, "gofault.db"))
	o.Policy = cmp.Or(o.Policy, "random")
	if len(o.Kinds) == 0 {
		o.Kinds = []catalog.Kind{catalog.KindError, catalog.KindDelay}
	}
	if o.Runs == 0 {
		o.Runs = 2
	}
	o.TwiceMax = cmp.Or(o.TwiceMax, DefaultTwiceMax)
	if ownCount(o.TestFlags) {
		o.Once = true // the user's -count decides how often a process runs the test
	}
	if o.Parallel == 0 && o.Queue == nil {
		o.Parallel = 1
	}
	o.HangFloor = cmp.Or(o.HangFloor, 30*time.Second)
	o.Timeout = cmp.Or(o.Timeout, 3*time.Minute)
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
}

// memberRule fills o.Member (and o.Transport with it) and o.Setup from
// the config's test section where they are empty: o.Config, or
// gofault.yaml in o.Module when there is one.
func (o *Options) memberRule() error {
	if o.Member == "" || len(o.Setup) == 0 {
		path := o.Config
		if path == "" {
			path = filepath.Join(o.Module, "gofault.yaml")
		}
		if _, err := os.Stat(path); err == nil || o.Config != "" {
			t, err := config.LoadTest(path)
			if err != nil {
				return err
			}
			if o.Member == "" {
				o.Member = t.Member
				if len(o.Transport.Send) == 0 {
					o.Transport = t.Transport
				}
			}
			if len(o.Setup) == 0 {
				o.Setup = t.Setup
			}
		}
	}
	if err := (config.Test{Member: o.Member, Transport: o.Transport, Setup: o.Setup}).Validate(); err != nil {
		return err
	}
	return nil
}

// cutKinds are the fault kinds that cut members apart: offered in-process
// only with a transport rule (Options.Transport), between members.
const cutKinds = catalog.KindPartition | catalog.KindDisconnect | catalog.KindOneWay | catalog.KindSplit | catalog.KindLeaderCut

// checkKinds refuses the fault kinds a test process cannot take: crash
// and power loss always (every member would die at once), the cuts
// without a transport rule.
func checkKinds(kinds []catalog.Kind, t config.Test) error {
	for _, k := range kinds {
		switch {
		case k&(catalog.KindError|catalog.KindDelay) != 0:
		case k&cutKinds != 0 && t.Partitions() && t.Member != "":
		case k&cutKinds != 0:
			return fmt.Errorf("fault kind %s needs test.transport in gofault.yaml (with test.member): the in-process transport's sends between members are what a cut fails (docs/gotest.md)", k)
		default:
			return notOffered(k)
		}
	}
	return nil
}

// notOffered is the error of a fault kind a test process never takes.
func notOffered(k catalog.Kind) error {
	return fmt.Errorf("fault kind %s is not offered in-process: a test process is one node (error and delay are, and the cuts with test.transport)", k)
}

// importPaths turns the relative directories among o.Package and
// o.Packages ("." and "./x", no "...") into the import paths of the
// module's packages: the analysis analyses a package that imports
// "testing" only when a pattern names it by its path (hashicorp/raft's
// testing.go is in the library package).
func (o *Options) importPaths() error {
	data, err := os.ReadFile(filepath.Join(o.Module, "go.mod"))
	if err != nil {
		return fmt.Errorf("module of the package under test: %w", err)
	}
	mod := modfile.ModulePath(data)
	if mod == "" {
		return fmt.Errorf("%s: no module path", filepath.Join(o.Module, "go.mod"))
	}
	o.Package = importPath(mod, o.Package)
	for i, p := range o.Packages {
		o.Packages[i] = importPath(mod, p)
	}
	return nil
}

// importPath is the import path of pattern, a package directory relative
// to the root of module mod ("." or "./x"); other patterns (import paths,
// "..." patterns) are returned unchanged.
func importPath(mod, pattern string) string {
	if strings.Contains(pattern, "...") || (pattern != "." && !strings.HasPrefix(pattern, "./")) {
		return pattern
	}
	rel := path.Clean(pattern)
	if rel == "." {
		return mod
	}
	return mod + "/" + rel
}

// campaignRun is one campaign in progress.
type campaignRun struct {
	o        Options
	bin      string
	key      string // the test binary's build key (build.Result.Key)
	reused   bool   // the test binary of an earlier build was reused
	pkgDir   string
	cat      *catalog.Catalog
	st       *store.Store
	id       int64
	next     int // the next trial index
	delay    time.Duration
	helpers  map[uint32]string // sites no fault may strike (HelperSites)
	setup    atomic.Int64      // requests under a test helper, answered "no fault" (withoutHelpers)
	reach    *reach            // the measuring pass's policy
	measure  *controller.Controller
	faults   *controller.Controller
	sockDirs []string
	tmpRoot  string          // the runs' temp dirs are made here (exec)
	prior    prior           // what earlier runs of a resumed campaign stored
	trials   []*record.Trial // every trial stored so far, for Options.Until
	parallel int             // test processes run at once now
	remote   engine.Remote   // runs fault trials elsewhere (Options.Queue)
	// sum, when set, counts the runs' requests and members.
	sum           *Summary
	setupFuncs    int // test setup functions hooked (Options.Setup)
	memberMethods int
	sends         int // the transport's send sites in the catalog
}

// Run builds the test binary of o.Package, measures its tests fault-free
// and runs o.Trials fault trials, storing every run as a trial.
func Run(ctx context.Context, o Options) (*Summary, error) {
	t0 := time.Now()
	o.defaults()
	if err := o.absolute(); err != nil {
		return nil, err
	}
	for _, k := range o.Kinds {
		if k&(catalog.KindError|catalog.KindDelay|cutKinds) == 0 {
			return nil, notOffered(k) // before reading the module: a usage error
		}
	}
	if err := o.importPaths(); err != nil {
		return nil, err
	}
	if err := o.memberRule(); err != nil {
		return nil, err
	}
	if err := checkKinds(o.Kinds, config.Test{Member: o.Member, Transport: o.Transport}); err != nil {
		return nil, err
	}
	if err := o.checkPorts(); err != nil {
		return nil, err
	}
	release, err := workdir.Lock(o.WorkDir, "gofault test "+o.Package)
	if err != nil {
		return nil, err
	}
	defer release()
	c := &campaignRun{o: o, delay: cmp.Or(o.Delay, 2*time.Second)}
	if err := c.build(ctx); err != nil {
		return nil, err
	}
	sum := &Summary{Binary: c.bin, Reused: c.reused, Sites: len(c.cat.Sites), BuildSecs: time.Since(t0).Seconds(), DB: o.DB,
		Member: o.Member, MemberMethods: c.memberMethods, Sends: c.sends, Setup: o.Setup, SetupFuncs: c.setupFuncs}
	c.sum = sum
	tests, err := c.list(ctx)
	if err != nil {
		return nil, err
	}
	if !o.Helpers {
		c.helpers = HelperSites(c.cat)
		sum.HelperSites, sum.HelperFiles = len(c.helpers), files(c.helpers)
	}
	defer c.close()
	if err := c.open(ctx); err != nil {
		return nil, err
	}
	sum.Campaign = c.id
	if err := c.distribute(ctx, sum); err != nil {
		return nil, err
	}
	c.parallel, sum.ParallelHow = o.Parallel, "set by --parallel"
	if o.Queue != nil && o.Parallel == 0 {
		sum.ParallelHow = "--queue: the workers run every fault trial"
	}
	if o.Parallel == ParallelAuto {
		c.parallel = 1 // the fault-free pass measures one process at a time
	}
	status := store.StatusFailed
	defer func() {
		if ctx.Err() != nil {
			status = store.StatusInterrupted
		}
		if err := c.st.SetCampaignStatus(context.WithoutCancel(ctx), c.id, status); err != nil {
			o.Log.Warn("campaign status", "err", err)
		}
	}()
	t1, meter := time.Now(), engine.StartMeter()
	if sum.Measured, err = c.measureAll(ctx, tests, sum); err != nil {
		return nil, err
	}
	sum.MeasureSecs = time.Since(t1).Seconds()
	if o.Parallel == ParallelAuto {
		cores := 0.0
		if sum.ResumedTests < len(tests) && sum.MeasureSecs > 0 {
			cores = meter.Cores()
		}
		c.parallel, sum.ParallelHow = AutoParallel(engine.ThisMachine(), cores, o.Trials-len(c.prior.fault))
		sum.ParallelHow = "auto: " + sum.ParallelHow
		o.Log.Info(fmt.Sprintf("parallel auto: %d test processes at once (%s)", c.parallel, sum.ParallelHow))
	}
	sum.Parallel = c.parallel
	sum.Selection = Select(sum.Measured)
	for _, m := range sum.Selection.Chosen {
		switch {
		case twice(m, o):
			sum.Twice++
		case m.Again && !o.Once:
			sum.TooSlowTwice++
		}
	}
	t2 := time.Now()
	if len(sum.Selection.Chosen) > 0 {
		if err := c.faultTrials(ctx, sum); err != nil {
			return nil, err
		}
	}
	sum.FaultSecs = time.Since(t2).Seconds()
	sum.countFindings(c.trials)
	status = store.StatusDone
	sum.Seconds = time.Since(t0).Seconds()
	sum.SetupRequests = int(c.setup.Load())
	return sum, nil
}

// build analyses, instruments and builds the test binary.
func (c *campaignRun) build(ctx context.Context) error {
	o := c.o
	t := instrument.Target{
		Module:     o.Module,
		Main:       o.Package,
		Test:       true,
		Packages:   o.Packages,
		BuildFlags: o.BuildFlags,
		WorkDir:    filepath.Join(o.WorkDir, "build"),
		// The agent's coverage table is read unsynchronised; the test
		// trials do not use coverage yet.
		NoCoverage: true,
	}
	out := filepath.Join(o.WorkDir, "bin", "pkg.test")
	// The build key hashes the test files too (go list -test): an
	// unchanged package's test binary is reused.
	t.Member = o.Member
	t.Transport = instrument.Transport{Address: o.Transport.Address, Send: o.Transport.Send, Error: o.Transport.Error}
	t.Setup = o.Setup
	res, err := build.Node(ctx, t, out, nil, build.Options{Rebuild: o.Rebuild})
	if err != nil {
		if o.Member != "" {
			return fmt.Errorf("build test binary of %s (test.member %s): %w", o.Package, o.Member, err)
		}
		return fmt.Errorf("build test binary of %s: %w", o.Package, err)
	}
	c.bin, c.cat, c.reused, c.key = res.Binary, res.Catalog, res.Reused, res.Key
	c.memberMethods = res.Stats.MemberMethods
	c.setupFuncs = res.Stats.SetupFuncs
	if len(res.Stats.SetupUnmatched) > 0 {
		return fmt.Errorf("test.setup: no function or method of %s's _test.go files matches %s (a pattern names a function, e.g. \"createJetStreamCluster*\", or a method by its receiver type, e.g. \"cluster.restartAll\")", o.Package, strings.Join(res.Stats.SetupUnmatched, ", "))
	}
	for _, st := range c.cat.Sites {
		if st.Peer == catalog.PeerSend {
			c.sends++
		}
	}
	if len(o.Transport.Send) > 0 && c.sends == 0 {
		return fmt.Errorf("test.transport: no send method was hooked (%s), so no cut can strike", strings.Join(o.Transport.Send, ", "))
	}
	if o.Member != "" && res.Stats.MemberMethods == 0 {
		return fmt.Errorf("test.member %s: no method of the member type was hooked, so no request can name a member (does the type have methods in %s?)", o.Member, o.Package)
	}
	cmd := procgroup.Command(ctx, "go", append(append([]string{"list"}, res.Work.AllBuildFlags()...), "-f", "{{.Dir}}", o.Package)...)
	cmd.Dir, cmd.Env = res.Work.ModuleDir, res.Work.Env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := procgroup.Run(cmd); err != nil {
		return fmt.Errorf("go list %s: %w: %s", o.Package, err, strings.TrimSpace(stderr.String()))
	}
	c.pkgDir = strings.TrimSpace(stdout.String())
	return nil
}

// list runs the test binary's -test.list and returns the tests o.Run
// keeps.
func (c *campaignRun) list(ctx context.Context) ([]string, error) {
	var keep *regexp.Regexp
	if c.o.Run != "" {
		var err error
		if keep, err = regexp.Compile(c.o.Run); err != nil {
			return nil, fmt.Errorf("-run: %w", err)
		}
	}
	cmd := procgroup.Command(ctx, c.bin, "-test.list", ".")
	cmd.Dir = c.pkgDir
	cmd.Env = withoutGofault(os.Environ())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := procgroup.Run(cmd); err != nil {
		return nil, fmt.Errorf("%s -test.list: %w: %s", c.bin, err, strings.TrimSpace(stderr.String()))
	}
	var tests []string
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		name := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(name, "Test") && (keep == nil || keep.MatchString(name)) {
			tests = append(tests, name)
		}
	}
	if len(tests) == 0 {
		return nil, fmt.Errorf("%s lists no test to run (-run %q)", c.o.Package, c.o.Run)
	}
	return tests, nil
}

// open creates the campaign in the store and the two controllers: one
// that measures (reach: the candidate sites live, no fault) and one with
// the policy, wrapped so that test setup gets no fault unless
// o.Helpers.
func (c *campaignRun) open(ctx context.Context) error {
	o := c.o
	env := policy.Env{Catalog: c.cat, Seed: o.Seed, Kinds: o.Kinds, Delay: o.Delay}
	pol, err := policy.New(o.Policy, env)
	if err != nil {
		return err
	}
	if _, ok := pol.(policy.Observer); ok {
		return fmt.Errorf("policy %s partitions members on observed peer messages: a test process is one node, which it cannot cut", o.Policy)
	}
	if !o.Helpers {
		pol = withoutHelpers{Policy: pol, drop: c.helpers, isHelper: helperFiles(), setup: &c.setup}
	}
	if err := os.MkdirAll(filepath.Dir(o.DB), 0o755); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if c.st, err = store.Open(o.DB); err != nil {
		return err
	}
	if err := c.campaign(ctx); err != nil {
		return err
	}
	if err := engine.RestorePolicy(pol, c.prior.policy); err != nil {
		return err
	}
	c.reach = &reach{sites: env.CandidateSites(), reachedIDs: map[int]map[string]bool{}, requests: map[int]int{}}
	if !o.Helpers {
		c.reach.isHelper = helperFiles()
	}
	if c.measure, err = c.listen(c.reach); err != nil {
		return err
	}
	c.faults, err = c.listen(pol)
	return err
}

// listen starts a controller with pol on a socket of its own.
func (c *campaignRun) listen(pol policy.Policy) (*controller.Controller, error) {
	sock, err := controller.SocketPath()
	if err != nil {
		return nil, err
	}
	c.sockDirs = append(c.sockDirs, sock)
	if c.tmpRoot == "" {
		c.tmpRoot = filepath.Dir(sock)
	}
	return controller.Listen("unix", sock, controller.Options{Catalog: c.cat, Policy: pol, Logger: c.o.Log})
}

func (c *campaignRun) close() {
	for _, ctl := range []*controller.Controller{c.measure, c.faults} {
		if ctl != nil {
			ctl.Close()
		}
	}
	for _, s := range c.sockDirs {
		controller.RemoveSocketDir(s)
	}
	if c.st != nil {
		c.st.Close()
	}
}

// attempt runs j's test as trial id under ctl and judges it: once, or
// twice in the process when j.again (again.go); j.reach, when not nil,
// are the only sites live (TrialSpec.Reach).
func (c *campaignRun) attempt(ctx context.Context, ctl *controller.Controller, id string, j job) (Attempt, *record.Trial, controller.Result, error) {
	index, test, bound := j.index, j.test, j.bound
	dir := filepath.Join(c.o.WorkDir, "trials", id)
	if err := os.RemoveAll(dir); err != nil {
		return Attempt{}, nil, controller.Result{}, fmt.Errorf("trial dir: %w", err)
	}
	p, err := startProcess(c.tmpRoot, cmp.Or(c.o.Ports, FirstPort))
	if err != nil {
		return Attempt{}, nil, controller.Result{}, fmt.Errorf("run %s: %w", test, err)
	}
	keep := "" // where the process's temp dir is kept: a failed fault trial's
	defer func() {
		if err := p.end(keep); err != nil {
			c.o.Log.Warn("test temp dir", "trial", id, "err", err)
		}
	}()
	node := c.o.node()
	ct, err := ctl.BeginTrial(controller.TrialSpec{ID: id, Index: index, Nodes: []string{node}, Members: c.o.Member != "", Reach: j.reach, Expected: j.expected})
	if err != nil {
		return Attempt{}, nil, controller.Result{}, err
	}
	ct.Arm()
	start := time.Now()
	var onEnd func() // the first of two runs ends: the second gets no fault
	if j.again {
		onEnd = ct.Disarm
	}
	r, exit, err := c.exec(ctx, p, ctl.Addr(), id, node, test, bound, filepath.Join(dir, node+".log"), onEnd, j.left)
	res := ct.End()
	end := time.Now() // the process ended
	if err != nil {
		return r, nil, res, err
	}
	if ctx.Err() != nil {
		return r, nil, res, ctx.Err()
	}
	seen := map[string]bool{}
	for _, rc := range res.Reached {
		if !seen[rc.SiteID] {
			seen[rc.SiteID] = true
			r.Sites = append(r.Sites, rc.SiteID)
		}
	}
	r.Requested = res.Requests
	tr := &record.Trial{
		ID: id, Campaign: "test " + c.o.Package, Index: index, Policy: ctl.Policy().Name(), Seed: c.o.Seed,
		Start: start, End: time.Now(), Dir: dir, Status: record.StatusOK,
		Injections: res.Injections, Requests: res.Requests, Reached: res.Reached, States: res.States, Roles: res.Roles,
		Nodes: []record.Node{{Name: node, PID: exit.PID, Exited: true, ExitTime: exit.Time, ExitCode: exit.Code,
			Signal: exit.Signal, Log: filepath.Join(dir, node+".log")}},
		Client:   []record.ClientEvent{record.TestEvent(start, node, test)},
		Verdicts: []record.Verdict{leftVerdict(r, res.Injections, end, j.left, againVerdict(r, bound, res.Injections, Verdict(r, bound, res.Injections)))},
	}
	if tr.Verdicts[0].Failed {
		tr.Status = record.StatusFailed
		tr.Verdicts[0].Nodes = []string{node}
		if len(res.Injections) > 0 {
			keep = filepath.Join(dir, "tmp")
		}
	}
	return r, tr, res, nil
}

// testOf returns the test trial tr ran, "" if it is not a gofault test
// trial.
func testOf(tr *record.Trial) string { return tr.Test() }

// exec runs the test binary once for test as process p, trial id's node
// node, killed past bound (plus a grace for the test's own timeout
// report), its output in log. With onEnd, the process runs the test twice
// (-test.count=2), the agent marks the faults it carries out
// (wire.EnvStrikes), onEnd is called as the first run ends, and the
// attempt is the first run's with the second's in Again (splitAttempt).
// left, when checked, is the test's baseline of the leak check, passed to
// the agent (wire.EnvLeftBase).
func (c *campaignRun) exec(ctx context.Context, p *process, ctlAddr, id, node, test string, bound time.Duration, log string, onEnd func(), left Leftovers) (Attempt, cluster.Exit, error) {
	count := "-test.count=1"
	if onEnd != nil {
		count = "-test.count=2"
	}
	args := []string{c.bin, "-test.run", "^" + regexp.QuoteMeta(test) + "$", "-test.v", count,
		"-test.timeout=" + bound.String()}
	args = append(args, TestFlags(c.o.TestFlags)...)
	// The process's own temp dir and ports: what the test leaves in the
	// temp dir (a hung test killed before its t.TempDir cleanup) goes
	// with it, and runs at once share neither. The temp dir is in a
	// controller's socket dir (c.tmpRoot), which is short (tests put unix
	// sockets in t.TempDir) and which the next gofault removes if this
	// one dies without cleaning up.
	env := append(withoutGofault(os.Environ()), p.env(c.o.Env)...)
	env = append(env, wire.EnvController+"="+ctlAddr, wire.EnvNode+"="+node, wire.EnvTrial+"="+id)
	if left.Checked && len(left.Keys) <= maxLeftBase {
		env = append(env, wire.EnvLeftBase+"="+strings.Join(left.Keys, wire.LeftBaseSep))
	}
	clock := &reportClock{now: time.Now}
	if onEnd != nil {
		env = append(env, wire.EnvStrikes+"=1")
		clock.test, clock.onEnd = test, onEnd
	}
	start := time.Now()
	// The test's stdout also goes through clock, which times the lines its
	// test files write (the timing rule, timing), and its stderr goes
	// through the same pipe, so the log keeps the order the process wrote
	// them in (a panic after a run's last line; splitRuns).
	proc, err := cluster.StartProcess(ctx, cluster.ProcSpec{Args: args, Dir: c.pkgDir, Env: env, Log: log, Stdout: clock, StderrToStdout: true, Timeout: bound + 10*time.Second})
	if err != nil {
		return Attempt{}, cluster.Exit{}, fmt.Errorf("run %s: %w", test, err)
	}
	exit := proc.Wait()
	r := Attempt{Test: test, ExitCode: exit.Code, Signal: exit.Signal, Elapsed: time.Since(start), Reports: clock.Reports(c.pkgDir)}
	out, err := os.ReadFile(log)
	if err != nil {
		return r, exit, fmt.Errorf("test output: %w", err)
	}
	r.Output = string(out)
	r.Passed = passed(test, r.Output, exit.Code)
	r.Skipped = skipped(test, r.Output, exit.Code)
	r.TimedOut = exit.Reason == cluster.ReasonTimeout || strings.Contains(r.Output, "panic: test timed out after")
	if onEnd != nil {
		r = splitAttempt(r, start, clock.Began())
	}
	return r, exit, nil
}

// TestFlags maps go test's flag spelling (-short, -race is a build flag
// and not here) to the test binary's (-test.short); flags already in
// -test. form and values pass unchanged.
func TestFlags(flags []string) []string {
	out := make([]string, 0, len(flags))
	for _, f := range flags {
		name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if strings.HasPrefix(f, "-") && !strings.HasPrefix(name, "test.") && testFlag[name] {
			f = "-test." + strings.TrimLeft(f, "-")
		}
		out = append(out, f)
	}
	return out
}

// ownCount reports whether flags (go test's, as TestFlags takes them)
// set -count.
func ownCount(flags []string) bool {
	for _, f := range TestFlags(flags) {
		if name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "="); name == "test.count" {
			return true
		}
	}
	return false
}

// testFlag are the go test flags the test binary takes as -test.NAME.
var testFlag = map[string]bool{
	"short": true, "v": true, "count": true, "cpu": true, "parallel": true, "timeout": true,
	"failfast": true, "run": true, "skip": true, "benchtime": true, "bench": true, "shuffle": true,
}

// withoutGofault drops the GOFAULT_* variables of env: a trial sets its
// own.
func withoutGofault(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOFAULT_") {
			out = append(out, kv)
		}
	}
	return out
}

// reach is the measuring pass's policy: every site at which a fault of
// the campaign's kinds may strike is live, so its requests reach the
// controller, and none is granted. It keeps, per trial, the sites the
// trial reached, outside test setup (underHelper) when isHelper is set (it
// then asks for stacks): the sites a fault trial of the test can strike.
// The controller serialises Begin and Decide; reached is called by the
// trials' goroutines, so the sets are guarded.
type reach struct {
	sites    []uint32 // live: the sites a fault of the campaign's kinds may strike
	isHelper func(string) bool

	mu         sync.Mutex
	reachedIDs map[int]map[string]bool // by trial index
	requests   map[int]int             // requests outside setup, by trial index
}

func (*reach) Name() string { return "measure" }

func (p *reach) Begin(info policy.TrialInfo) policy.Plan {
	p.mu.Lock()
	p.reachedIDs[info.Index] = map[string]bool{}
	p.mu.Unlock()
	return policy.Plan{Sites: p.sites, Stacks: p.isHelper != nil}
}

func (p *reach) Decide(req *policy.Request) policy.Decision {
	if req.Site != nil && (p.isHelper == nil || !underHelper(req.Stack, p.isHelper)) {
		p.mu.Lock()
		if ids := p.reachedIDs[req.Trial]; ids != nil {
			ids[req.Site.ID] = true
			p.requests[req.Trial]++
		}
		p.mu.Unlock()
	}
	return policy.Decision{}
}

func (*reach) End(policy.Outcome) {}

// reached returns the sites trial index reached outside test setup,
// sorted, and how many requests it made there, and forgets the trial.
func (p *reach) reached(index int) ([]string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids, n := p.reachedIDs[index], p.requests[index]
	delete(p.reachedIDs, index)
	delete(p.requests, index)
	return slices.Sorted(maps.Keys(ids)), n
}
