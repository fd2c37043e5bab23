package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/engine"
	"github.com/gofault/gofault/fleet"
	"github.com/gofault/gofault/gotest"
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

func runTest(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlags("test", os.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: gofault test [flags] PACKAGE [-- go test flags]

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
-run REGEXP keeps only the tests it matches.

With --queue nats://HOST:PORT the fault-free pass runs here and the fault
trials go to gofault workers (docs/distributed.md): the campaign's bundle
(--bundle, default WORKDIR/bundle) is published, each trial names its
test, its hang bound and its live sites, and the workers' requests are
decided by this campaign's policy; --parallel K (default 0 with --queue)
also runs K here.

flags:
`)
		fs.PrintDefaults()
	}
	module := fs.String("module", ".", "directory of the module that holds PACKAGE")
	var pkgs, env stringList
	fs.Var(&pkgs, "packages", "package `pattern` to analyse and instrument, relative to --module (repeatable; default: PACKAGE)")
	fs.Var(&env, "env", "`KEY=VALUE` set for every test run (repeatable)")
	pol := fs.String("policy", "random", "injection policy ("+strings.Join(policy.Names(), ", ")+")")
	seed := fs.Int64("seed", 1, "the policy's seed")
	trials := fs.Int("trials", 20, "fault trials to run")
	runs := fs.Int("runs", 2, "fault-free runs of every test (a test that fails in any is left out)")
	kinds := fs.String("kinds", "error,delay", "fault kinds, comma-separated (crash is not offered in-process; the cuts only with test.transport)")
	delay := fs.Duration("delay", 2*time.Second, "length of an injected delay")
	hang := fs.Duration("hang", 30*time.Second, "least time a fault trial runs before it is a hang (else 4 x the test's slowest fault-free run plus --delay)")
	helpers := fs.Bool("helpers", false, "let faults strike test setup: sites in the package's files that import testing (test helpers such as raft's testing.go) and calls made under them (left out by default)")
	timeout := fs.Duration("timeout", 3*time.Minute, "bound of a fault-free run: past it the test hung (and is left out)")
	rebuild := fs.Bool("rebuild", false, "build the test binary afresh even when an earlier build's inputs (sources, test files, flags) are unchanged")
	race := fs.Bool("race", false, "build the test binary with -race (a race report fails the test)")
	workDir := fs.String("workdir", "", "work dir: build, trial logs, store (default MODULE/.gofault/test)")
	db := fs.String("db", "", "database file (default WORKDIR/gofault.db)")
	parallel := fs.String("parallel", "1", "test processes run at once, each its own trial (fault-free pass and fault trials); auto: the fault-free pass one at a time, measuring the cores one uses, then as many as fit in 75% of the cores")
	resume := fs.Bool("resume", false, "continue the newest campaign of the store made with the same flags (--trials aside): measured tests are not run again, fault trials go on from the next index with the policy's state, up to --trials in all")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	member := fs.String("member", "", "member rule `pkg/path.Type.field`: the field that tells an in-process cluster's members apart (default: test.member of the config)")
	cfgPath := fs.String("config", "", "config `file` whose test section is read (default: gofault.yaml in --module, if there)")
	bundle := fs.String("bundle", "", "write the campaign's bundle into `DIR` once the test binary is built (test binary, catalog, the package dir's files and testdata, options): what gofault worker runs (default with --queue: WORKDIR/bundle)")
	q := addQueueFlags(fs)
	slots := fs.Int("queue-slots", 16, "with --queue: the fault trials queued or running at once at most")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	rest := fs.Args()
	// flag.Parse takes a "--" before any package as its own terminator:
	// what follows is then go test's flags, not a package.
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return fmt.Errorf("%w: name the package under test: gofault test [flags] PACKAGE [-- go test flags]", errUsage)
	}
	o := gotest.Options{
		Module: *module, Package: rest[0], Packages: []string(pkgs), Env: []string(env), WorkDir: *workDir, DB: *db,
		Policy: *pol, Seed: *seed, Trials: *trials, Runs: *runs, Delay: *delay, HangFloor: *hang, Timeout: *timeout,
		Helpers: *helpers, Rebuild: *rebuild, Progress: os.Stderr, Member: *member, Config: *cfgPath,
		Resume: *resume,
	}
	if *slots < 1 {
		return fmt.Errorf("%w: --queue-slots must be at least 1", errUsage)
	}
	o.Bundle = *bundle
	if *q.url != "" && !flagSet(fs, "parallel") {
		o.Parallel = 0 // the workers run every fault trial
	} else if *parallel == "auto" {
		o.Parallel = gotest.ParallelAuto
	} else if n, err := strconv.Atoi(*parallel); err != nil || n < 0 || (n == 0 && *q.url == "") {
		return fmt.Errorf("%w: --parallel %s: a number of at least 1 (0 with --queue), or auto", errUsage, *parallel)
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
	if *race {
		o.BuildFlags = append(o.BuildFlags, "-race")
	}
	for _, k := range strings.Split(*kinds, ",") {
		kind, err := catalog.ParseKind(strings.TrimSpace(k))
		if err != nil {
			return fmt.Errorf("%w: --kinds: %w", errUsage, err)
		}
		o.Kinds = append(o.Kinds, kind)
	}
	if *q.url != "" {
		closeQueue := func() {}
		defer func() { closeQueue() }()
		o.Queue = func(ctx context.Context, qd gotest.Queued) (engine.Remote, error) {
			conn, err := fleet.Dial(*q.url, q.auth(), filepath.Join(qd.WorkDir, "nats"), slog.Default())
			if err != nil {
				return nil, err
			}
			co, err := fleet.NewCoordinator(ctx, conn, fleet.CoordinatorOptions{Bundle: qd.Bundle, Catalog: qd.Catalog, Slots: *slots, Log: slog.Default()})
			if err != nil {
				conn.Close()
				return nil, err
			}
			closeQueue = func() { co.Close(); conn.Close() }
			return co, nil
		}
	}
	sum, err := gotest.Run(ctx, o)
	if sum != nil {
		rememberDB(sum.DB)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, struct {
			Version versionInfo `json:"version"`
			*gotest.Summary
		}{gofaultVersion(), sum})
	}
	writeTestSummary(stdout, sum)
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

// writeTestSummary prints what a gofault test campaign did.
func writeTestSummary(w io.Writer, s *gotest.Summary) {
	sel := s.Selection
	reused := ""
	if s.Reused {
		reused = "; reused, inputs unchanged"
	}
	fmt.Fprintf(w, "campaign %d: test binary %s (%d fault sites%s)\n", s.Campaign, s.Binary, s.Sites, reused)
	if s.HelperSites > 0 {
		fmt.Fprintf(w, "  %d sites in test helper files left out (--helpers keeps them): %s\n", s.HelperSites, strings.Join(s.HelperFiles, ", "))
	}
	fmt.Fprintf(w, "  fault-free pass: %d tests measured; %d chosen, %d flaky, %d failing, %d skipped, %d reached no site\n",
		len(s.Measured), len(sel.Chosen), len(sel.Flaky), len(sel.Failing), len(sel.Skipped), len(sel.NoSites))
	for _, group := range []struct {
		what string
		ms   []gotest.Measure
	}{{"flaky (left out)", sel.Flaky}, {"failing fault-free (left out)", sel.Failing}, {"skipped (left out)", sel.Skipped}, {"reached no site (left out)", sel.NoSites}} {
		if len(group.ms) == 0 {
			continue
		}
		var names []string
		for _, m := range group.ms {
			names = append(names, fmt.Sprintf("%s (%d/%d passed)", m.Test, m.Passed, m.Runs))
		}
		fmt.Fprintf(w, "  %s: %s\n", group.what, strings.Join(names, ", "))
	}
	if s.ResumedTests > 0 || s.ResumedTrials > 0 {
		fmt.Fprintf(w, "  resumed: %d tests measured and %d fault trials stored by earlier runs\n", s.ResumedTests, s.ResumedTrials)
	}
	if len(s.Shares) > 0 {
		fmt.Fprintf(w, "  trials by test (weight: each site it reached counts 1/k, k the chosen tests that reached it):\n")
		for _, sh := range s.Shares {
			fmt.Fprintf(w, "    %-40s %3d trials  weight %5.2f  %d sites, %d its own\n", sh.Test, sh.Trials, sh.Weight, sh.Sites, sh.Own)
		}
	}
	fmt.Fprintf(w, "  fault trials: %d (%d with a fault), %d failed (%d with a fault); %d at once here (%s)\n", s.Trials, s.Injected, s.Failed, s.FaultFailed, s.Parallel, s.ParallelHow)
	if s.Bundle != "" {
		fmt.Fprintf(w, "  bundle %s (%d bytes); %d fault trials ran on workers%s\n", s.Bundle, s.BundleBytes, s.RemoteTrials, byWorker(s.Workers))
	}
	if s.Member != "" {
		fmt.Fprintf(w, "  members (%s, %d methods hooked): %d requests named a member (the policy was asked %d times; a request of no member is the process's, n0), at most %d members in a run\n",
			s.Member, s.MemberMethods, s.MemberRequests, s.Requests, s.MostMembers)
	}
	if s.Sends > 0 {
		fmt.Fprintf(w, "  transport: %d send methods hooked; %d sends named the member sending and the member sent to\n", s.Sends, s.MemberSends)
	}
	if s.SetupRequests > 0 {
		fmt.Fprintf(w, "  %d requests made under a test helper got no fault (--helpers offers them)\n", s.SetupRequests)
	}
	fmt.Fprintf(w, "  %.0fs (build %.0fs, fault-free pass %.0fs, fault trials %.0fs); store %s\n", s.Seconds, s.BuildSecs, s.MeasureSecs, s.FaultSecs, s.DB)
	if s.Failed > 0 {
		fmt.Fprintf(w, "  see them with: gofault report --db %s\n", s.DB)
	}
}

// byWorker says how many fault trials each worker ran, " (w0 12, w1 8)"
// in the workers' order, "" for none.
func byWorker(workers map[string]int) string {
	if len(workers) == 0 {
		return ""
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(workers)) {
		parts = append(parts, fmt.Sprintf("%s %d", name, workers[name]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
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
