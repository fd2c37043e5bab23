// Command gofault finds fault-induced bugs in Go distributed systems: it
// analyses a target's source for fault sites, builds an instrumented copy,
// and runs campaigns of short trials on a real cluster, each with a chosen
// fault, judged by checkers.
//
// Usage:
//
//	gofault <command> [flags]
//
// Run "gofault help" for the list of commands.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/gofault/gofault/bench"
	"github.com/gofault/gofault/campaign"
	"github.com/gofault/gofault/config"
	"github.com/gofault/gofault/finding"
	"github.com/gofault/gofault/scaffold"
	"github.com/gofault/gofault/workdir"
)

// command is one subcommand. Each lives in its own file and registers itself
// from an init function.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout io.Writer) error
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// errUsage marks an error caused by bad command-line use; it exits with 2.
var errUsage = errors.New("usage")

// Exit statuses: 0 finished, 1 error, 2 usage, 3 a replay that did not
// reproduce, exitFound results that --fail-on names (failon.go),
// exitInterrupted stopped by a signal after a clean stop.
const exitInterrupted = 130

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel()})))
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "gofault: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := c.run(ctx, args[1:], stdout)
	if ctx.Err() != nil {
		// Stopped by Ctrl-C or SIGTERM, after a clean stop (a campaign
		// saved what it judged): 130, as shells report an interrupt, so
		// a script can tell it from a finished run.
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "gofault %s: %v\n", c.name, err)
		}
		return exitInterrupted
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "gofault %s: %v\n", c.name, err)
		if errors.Is(err, errUsage) || errors.Is(err, bench.ErrUsage) || errors.Is(err, scaffold.ErrUsage) || errors.Is(err, finding.ErrUsage) {
			return 2
		}
		if errors.Is(err, errNotReproduced) {
			return 3
		}
		if errors.Is(err, errFound) {
			return exitFound
		}
		return 1
	}
	return 0
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "gofault finds fault-induced bugs in Go distributed systems.")
	fmt.Fprintln(w, "\nUsage: gofault <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun \"gofault <command> -h\" for a command's flags.")
}

func logLevel() slog.Level {
	if os.Getenv("GOFAULT_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// parseInterleaved parses args with fs, allowing flags after positional
// arguments (gofault replay 1-7 --json), and returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// configFlags are the --config and --set flags of the commands that read a
// config.
type configFlags struct {
	path *string
	sets config.Overrides
}

// addConfigFlags adds --config and --set to fs; example, if not empty, is
// a --set argument shown in the help.
func addConfigFlags(fs *flag.FlagSet, example string) *configFlags {
	c := &configFlags{path: fs.String("config", "gofault.yaml", "config file")}
	usage := "override a config value (repeatable)"
	if example != "" {
		usage = "override a config value, e.g. --set " + example + " (repeatable)"
	}
	fs.Var(&c.sets, "set", usage)
	return c
}

// parseNoArgs parses args with fs and rejects positional arguments.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return errors.Join(errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	return nil
}

// newFlags returns a flag set for a subcommand that reports errors instead
// of exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("gofault "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// lockWork takes cfg's work dir for this command until the returned
// release: a second gofault command that would write to it (run, compare,
// replay, build) is refused at once, naming this one.
func lockWork(cfg *config.Config) (func(), error) {
	return workdir.Lock(cfg.Path(cmp.Or(cfg.WorkDir, config.DefaultWorkDir)), strings.Join(append([]string{"gofault"}, os.Args[1:]...), " "))
}

// count is a flag holding a count that must be at least 1 when given; 0
// means "not given" (the config's value applies).
type count int

func (c *count) String() string {
	if c == nil || *c == 0 {
		return ""
	}
	return strconv.Itoa(int(*c))
}

func (c *count) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want a whole number, e.g. 20")
	}
	if n < 1 {
		return fmt.Errorf("must be at least 1 (got %d); leave the flag out to use the config's value", n)
	}
	*c = count(n)
	return nil
}

// parallel is the --parallel flag: a number of clusters, "auto"
// (campaign.ParallelAuto), or 0 where a queue's workers run every fault
// trial (check); n is 0 also when the flag is not given (the config's
// trials.parallel applies, auto unless it says a number).
type parallel struct {
	n    int
	zero bool // given as 0
}

func (p *parallel) String() string {
	switch {
	case p == nil || (p.n == 0 && !p.zero):
		return ""
	case p.n == campaign.ParallelAuto:
		return config.Auto
	}
	return strconv.Itoa(p.n)
}

func (p *parallel) Set(s string) error {
	if s == "0" {
		p.n, p.zero = 0, true
		return nil
	}
	n, err := config.ParseParallel(s)
	if err != nil {
		return errors.New(`want "auto" or a number of clusters of at least 1, e.g. 2 (0 only with --queue)`)
	}
	p.n, p.zero = int(n), false
	if n.Auto() {
		p.n = campaign.ParallelAuto
	}
	return nil
}

// check says whether the value fits the command: 0 only with a queue.
func (p *parallel) check(queue bool) error {
	if p.zero && !queue {
		return fmt.Errorf(`%w: invalid value "0" for flag -parallel: must be at least 1 or auto (0 only with --queue, where workers run the trials)`, errUsage)
	}
	return nil
}

// parallelFlag defines the --parallel flag (see parallel).
func parallelFlag(fs *flag.FlagSet, usage string) *parallel {
	p := new(parallel)
	fs.Var(p, "parallel", usage)
	return p
}

// countFlag defines a count flag (see count).
func countFlag(fs *flag.FlagSet, name, usage string) *count {
	c := new(count)
	fs.Var(c, name, usage)
	return c
}
