package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/fleet"
	"github.com/gofault/gofault/gotest"
	"github.com/gofault/gofault/internal/version"
	"github.com/gofault/gofault/policy"
	"github.com/gofault/gofault/store"
)

func init() {
	register(command{
		name:    "test",
		summary: "run a package's own Go tests as the workload: measure them fault-free, then fault trials",
		run:     runTest,
	})
}

// testUsage starts gofault test -h, before its flags.
const testUsage = `usage: gofault test [flags] PACKAGE [-- go test flags]

Builds PACKAGE's test binary once with gofault's hooks (the same analysis
and instrumentation as gofault build, through go test -c -overlay), runs
every test fault-free --runs times (pass/fail, flakiness, time, the fault
sites each reaches), then runs --trials fault trials: each runs one test
that passed every fault-free run and reached a site, as one node (n1) with
the policy's faults; with a member rule (--member, or test.member in the
module's gofault.yaml) the requests made by the methods of an in-process
cluster's members are the members' nodes, n1, n2, ...; with test.transport
too (the in-process transport's sends) --kinds may name the cuts
(partition, disconnect, oneway, split, leadercut), which fail the sends
between members. Trials go to the tests by the sites they reach (each
site counts 1/k to each of the k tests that reach it), and only a trial's
own test's sites are live. A test that fails, hangs, panics or races with
a fault is a finding. Trials go to the store: gofault report --db DB shows them.
The go test flags after -- go to every run (-short, -test.short, ...);
-run REGEXP keeps only the tests it matches. With --fail-on findings it
exits 4 once the campaign has a finding, as gofault run does (docs/ci.md).

With --queue nats://HOST:PORT the fault-free pass runs here and the fault
trials go to gofault workers (docs/distributed.md): the campaign's bundle
(--bundle, default WORKDIR/bundle) is published, each trial names its
test, its hang bound and its live sites, and the workers' requests are
decided by this campaign's policy; --parallel K (default 0 with --queue)
also runs K here.

flags:
`

func runTest(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("test", os.Stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), testUsage)
		fs.PrintDefaults()
	}
	o := gotest.Options{Progress: os.Stderr}
	f := addTestFlags(fs, &o)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if err := f.options(fs, &o); err != nil {
		return err
	}
	if *f.q.url != "" {
		closeQueue := func() {}
		defer func() { closeQueue() }()
		o.Queue = func(ctx context.Context, qd gotest.Queued) (engine.Remote, error) {
			co, stop, err := fleet.DialCoordinator(ctx, *f.q.url, f.q.auth(), filepath.Join(qd.WorkDir, "nats"),
				fleet.CoordinatorOptions{Bundle: qd.Bundle, Catalog: qd.Catalog, Slots: *f.slots, Log: slog.Default()})
			if err != nil {
				return nil, err
			}
			closeQueue = stop
			return co, nil
		}
	}
	sum, err := gotest.Run(ctx, o)
	if sum != nil {
		store.Remember(sum.DB)
	}
	if err != nil {
		return err
	}
	if err := writeTestSummary(stdout, sum, *f.asJSON); err != nil {
		return err
	}
	return failOnResults(*f.fail, sum)
}

// writeTestSummary prints what the test campaign did, as JSON with
// gofault's version or as text.
func writeTestSummary(w io.Writer, sum *gotest.Summary, asJSON bool) error {
	if asJSON {
		return writeJSON(w, struct {
			Version version.Info `json:"version"`
			*gotest.Summary
		}{version.Current(), sum})
	}
	sum.WriteText(w)
	return nil
}

// testFlags are gofault test's flags that are not fields of
// gotest.Options as they are.
type testFlags struct {
	kinds, parallel *string
	race, asJSON    *bool
	q               *queueFlags
	slots           *int
	fail            *failOn
}

// addTestFlags defines gofault test's flags, most of them straight into o.
func addTestFlags(fs *flag.FlagSet, o *gotest.Options) *testFlags {
	fs.StringVar(&o.Module, "module", ".", "directory of the module that holds PACKAGE")
	fs.Var((*stringList)(&o.Packages), "packages", "package `pattern` to analyse and instrument, relative to --module (repeatable; default: PACKAGE)")
	fs.Var((*stringList)(&o.Env), "env", "`KEY=VALUE` set for every test run (repeatable); ${"+gotest.EnvPort+"} (or ${"+gotest.EnvPort+"+N}) in VALUE is the first (or N-th next) port of the run's own (--ports)")
	fs.IntVar(&o.Ports, "ports", 0, fmt.Sprintf("first `port` of the ranges of %d ports that the test processes run at once get, one each, in %s (the first) and %s (how many), never two at once on this machine (default %d)", gotest.PortSpan, gotest.EnvPort, gotest.EnvPorts, gotest.FirstPort))
	fs.StringVar(&o.Policy, "policy", "random", "injection policy ("+strings.Join(policy.Names(), ", ")+")")
	fs.Int64Var(&o.Seed, "seed", 1, "the policy's seed")
	fs.IntVar(&o.Trials, "trials", 20, "fault trials to run")
	fs.IntVar(&o.Runs, "runs", 2, "fault-free runs of every test (a test that fails in any is left out)")
	fs.DurationVar(&o.TwiceMax, "twice-max", gotest.DefaultTwiceMax, "longest fault-free run of a test whose fault trials run it twice in the process (a slower one runs once: a second run would double its trials' time)")
	fs.BoolVar(&o.Once, "once", false, "run each test once a process; by default the last fault-free run runs it twice in one process, and a test that passes both runs twice in its fault trials, the second run with no fault: its failure there is a finding (state the fault left behind)")
	f := &testFlags{kinds: fs.String("kinds", "error,delay", "fault kinds, comma-separated (crash is not offered in-process; the cuts only with test.transport)")}
	fs.DurationVar(&o.Delay, "delay", 2*time.Second, "length of an injected delay")
	fs.DurationVar(&o.HangFloor, "hang", 30*time.Second, "least time a fault trial runs before it is a hang (else 4 x the test's slowest fault-free run plus --delay)")
	fs.BoolVar(&o.Helpers, "helpers", false, "let faults strike test setup: sites in the package's files that import testing (test helpers such as raft's testing.go) and calls made under them (left out by default)")
	fs.DurationVar(&o.Timeout, "timeout", 3*time.Minute, "bound of a fault-free run: past it the test hung (and is left out)")
	fs.BoolVar(&o.Rebuild, "rebuild", false, "build the test binary afresh even when an earlier build's inputs (sources, test files, flags) are unchanged")
	f.race = fs.Bool("race", false, "build the test binary with -race (a race report fails the test)")
	fs.StringVar(&o.WorkDir, "workdir", "", "work dir: build, trial logs, store (default MODULE/.gofault/test)")
	fs.StringVar(&o.DB, "db", "", "database file (default WORKDIR/gofault.db)")
	f.parallel = fs.String("parallel", "auto", "test processes run at once, each its own trial (fault-free pass and fault trials), a number or auto: the fault-free pass one at a time, measuring the cores one uses, then as many as fit in 75% of the cores and the free memory (with --queue the default is 0: the workers run every fault trial)")
	fs.BoolVar(&o.Resume, "resume", false, "continue the newest campaign of the store made with the same flags (--trials aside): measured tests are not run again, fault trials go on from the next index with the policy's state, up to --trials in all")
	f.asJSON = fs.Bool("json", false, "print the summary as JSON")
	fs.Var((*stringList)(&o.Setup), "setup", "setup helper `pattern`: a function (\"createJetStreamCluster*\") or Type.method of the package's _test.go files during whose calls no fault strikes the process (repeatable; default: test.setup of the config)")
	fs.StringVar(&o.Member, "member", "", "member rule `pkg/path.Type.field`: the field that tells an in-process cluster's members apart (default: test.member of the config)")
	fs.StringVar(&o.Config, "config", "", "config `file` whose test section is read (default: gofault.yaml in --module, if there)")
	fs.StringVar(&o.Bundle, "bundle", "", "write the campaign's bundle into `DIR` once the test binary is built (test binary, catalog, the package dir's files and testdata, options): what gofault worker runs (default with --queue: WORKDIR/bundle)")
	f.q = addQueueFlags(fs)
	f.slots = fs.Int("queue-slots", 16, "with --queue: the fault trials queued or running at once at most")
	f.fail = failOnFlag(fs, failNever, "campaign")
	return f
}

// options completes o from the parsed flags and the arguments: the
// package, go test's flags after --, --parallel, --race and --kinds.
func (f *testFlags) options(fs *flag.FlagSet, o *gotest.Options) error {
	rest := fs.Args()
	// flag.Parse takes a "--" before any package as its own terminator:
	// what follows is then go test's flags, not a package.
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return fmt.Errorf("%w: name the package under test: gofault test [flags] PACKAGE [-- go test flags]", errUsage)
	}
	o.Package = rest[0]
	if *f.slots < 1 {
		return fmt.Errorf("%w: --queue-slots must be at least 1", errUsage)
	}
	if *f.q.url != "" && !flagSet(fs, "parallel") {
		o.Parallel = 0 // the workers run every fault trial
	} else if *f.parallel == "auto" {
		o.Parallel = gotest.ParallelAuto
	} else if n, err := strconv.Atoi(*f.parallel); err != nil || n < 0 || (n == 0 && *f.q.url == "") {
		return fmt.Errorf("%w: --parallel %s: a number of at least 1 (0 with --queue), or auto", errUsage, *f.parallel)
	} else {
		o.Parallel = n
	}
	rest = rest[1:]
	if len(rest) > 0 && rest[0] != "--" {
		return fmt.Errorf("%w: one package, then -- and go test flags: unexpected %q", errUsage, rest)
	}
	if len(rest) > 0 {
		var err error
		if o.Run, o.TestFlags, err = splitRun(rest[1:]); err != nil {
			return err
		}
	}
	if *f.race {
		o.BuildFlags = append(o.BuildFlags, "-race")
	}
	for _, k := range strings.Split(*f.kinds, ",") {
		kind, err := catalog.ParseKind(strings.TrimSpace(k))
		if err != nil {
			return fmt.Errorf("%w: --kinds: %w", errUsage, err)
		}
		o.Kinds = append(o.Kinds, kind)
	}
	return nil
}

// splitRun takes -run/-test.run and its value out of go test flags: the
// campaign runs one test at a time with -test.run of its own.
func splitRun(flags []string) (run string, rest []string, err error) {
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if !strings.HasPrefix(f, "-") || (name != "run" && name != "test.run") {
			rest = append(rest, f)
			continue
		}
		if !hasVal {
			if i+1 == len(flags) {
				return "", nil, fmt.Errorf("%w: %s needs a value", errUsage, f)
			}
			i++
			val = flags[i]
		}
		run = val
	}
	return run, rest, nil
}

// replayTest replays trial id of a gofault test campaign runs times
// (gotest.Replay) and says how often its test failed again; a replay in
// which it never did exits 3, as gofault replay's does.
func replayTest(ctx context.Context, st *store.Store, id string, runs int, asJSON bool, stdout io.Writer) error {
	r, err := gotest.Replay(ctx, st, id, runs, os.Stderr)
	if err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(stdout, r); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "replayed %s (%s) %d times: failed again in %d\n", id, r.Test, len(r.Outcomes), r.Recurred)
		if r.Missing > 0 {
			fmt.Fprintf(stdout, "  %d of its injections name sites the rebuilt test binary no longer has (the source changed)\n", r.Missing)
		}
	}
	if r.Recurred == 0 {
		return errNotReproduced
	}
	return nil
}
