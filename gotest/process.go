package gotest

// What a test process owns while it runs, so that processes run at once
// (--parallel, a worker's trials, a campaign and a worker on one machine)
// never share it: a temp dir and a range of ports.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/gofault/gofault/workdir"
)

// The variables a test process gets that name its own ports: EnvPort the
// first, EnvPorts how many (PortSpan). A test that binds a port of its
// own reads one of them; a test that reads a port from a variable of its
// own gets it mapped with --env NAME=${GOFAULT_TEST_PORT} (or
// ${GOFAULT_TEST_PORT+N}, the N-th port after the first; ExpandPorts).
const (
	EnvPort  = "GOFAULT_TEST_PORT"
	EnvPorts = "GOFAULT_TEST_PORTS"
)

// FirstPort is the first port of the ranges (Options.Ports when 0), and
// PortSpan the ports of each: range k is FirstPort+k*PortSpan and the
// PortSpan-1 after it. 20000 is below Linux's ephemeral ports (32768 and
// up), so a port the kernel hands out for ":0" is never in one.
const (
	FirstPort = 20000
	PortSpan  = 100
)

// portVar matches ${GOFAULT_TEST_PORT} and ${GOFAULT_TEST_PORT+N} in an
// --env value.
var portVar = regexp.MustCompile(`\$\{` + EnvPort + `(?:\+([0-9]+))?\}`)

// ExpandPorts replaces ${GOFAULT_TEST_PORT} in value with first, and
// ${GOFAULT_TEST_PORT+N} with first+N; the rest of value is kept as it is
// (no other variable is expanded).
func ExpandPorts(value string, first int) string {
	return portVar.ReplaceAllStringFunc(value, func(m string) string {
		n := 0
		if sub := portVar.FindStringSubmatch(m); sub[1] != "" {
			n, _ = strconv.Atoi(sub[1]) // checked by checkPorts
		}
		return strconv.Itoa(first + n)
	})
}

// checkPorts refuses a first port whose range does not fit below 65536,
// and an Env value whose ${GOFAULT_TEST_PORT+N} is outside a process's
// range (N ≥ PortSpan).
func (o *Options) checkPorts() error {
	if o.Ports != 0 && (o.Ports < 1 || o.Ports+PortSpan-1 > 65535) {
		return fmt.Errorf("--ports %d: the first port of a range of %d, from 1 to %d", o.Ports, PortSpan, 65536-PortSpan)
	}
	for _, kv := range o.Env {
		for _, sub := range portVar.FindAllStringSubmatch(kv, -1) {
			if n, err := strconv.Atoi(sub[1]); sub[1] != "" && (err != nil || n >= PortSpan) {
				return fmt.Errorf("--env %s: %s: a test process has %d ports, ${%s} to ${%s+%d}", kv, sub[0], PortSpan, EnvPort, EnvPort, PortSpan-1)
			}
		}
	}
	return nil
}

// process is what one run of the test binary owns while it runs.
type process struct {
	// tmp is its temp dir (TMPDIR, GOTMPDIR).
	tmp string
	// port is the first of its PortSpan ports; release gives them back.
	port    int
	release func()
}

// startProcess takes a temp dir in root and the lowest range of ports
// from first that no other test process on this machine holds.
func startProcess(root string, first int) (*process, error) {
	port, release, err := takePorts(first)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(root, "t")
	if err != nil {
		release()
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	return &process{tmp: tmp, port: port, release: release}, nil
}

// env is the process's variables: its temp dir and its ports, and the
// --env values with its ports in them (ExpandPorts).
func (p *process) env(extra []string) []string {
	env := make([]string, 0, len(extra)+4)
	for _, kv := range extra {
		env = append(env, ExpandPorts(kv, p.port))
	}
	return append(env, "TMPDIR="+p.tmp, "GOTMPDIR="+p.tmp,
		EnvPort+"="+strconv.Itoa(p.port), EnvPorts+"="+strconv.Itoa(PortSpan))
}

// end gives the process's ports back and removes its temp dir, or, when
// keep is set, moves what the test left there to keep (a failed fault
// trial's, for a look at what the test wrote); an empty one is removed.
// It says what went wrong with the move: the temp dir is gone anyway.
func (p *process) end(keep string) error {
	p.release()
	defer os.RemoveAll(p.tmp)
	if keep == "" {
		return nil
	}
	if ents, err := os.ReadDir(p.tmp); err != nil || len(ents) == 0 {
		return nil
	}
	if err := os.Rename(p.tmp, keep); err == nil {
		return nil
	}
	// Another file system (a tmpfs /tmp): copy it.
	if err := os.CopyFS(keep, os.DirFS(p.tmp)); err != nil {
		return fmt.Errorf("keep temp dir %s in %s: %w", p.tmp, keep, err)
	}
	return nil
}

// takePorts takes the lowest range of ports from first (first+k*PortSpan)
// that no gofault process on this machine holds: an OS file lock
// (workdir.Lock) on a dir of the range's own, in a dir of the user's under
// os.TempDir(), so a campaign's processes, a worker's and another
// campaign's on the same machine never get the same range at once, and a
// process killed with -9 holds none. It returns the first port and how to
// give the range back.
func takePorts(first int) (int, func(), error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("gofault-ports-%d", os.Getuid()))
	for port := first; port+PortSpan-1 <= 65535; port += PortSpan {
		release, err := workdir.Lock(filepath.Join(dir, strconv.Itoa(port)), "gofault test: ports "+portsOf(port))
		if errors.Is(err, workdir.ErrBusy) {
			continue
		}
		if err != nil {
			return 0, nil, fmt.Errorf("ports of a test process: %w", err)
		}
		return port, release, nil
	}
	return 0, nil, fmt.Errorf("ports of a test process: every range of %d ports from %d to 65535 is held by a test process of gofault", PortSpan, first)
}

// portsOf names the range from port, "20000-20099".
func portsOf(port int) string { return fmt.Sprintf("%d-%d", port, port+PortSpan-1) }
