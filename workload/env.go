package workload

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/gofault/gofault/agent/wire"
)

// Environment variables of the workload contract (defined in agent/wire).
// The runner sets them for Go workloads (Main) and external command
// workloads alike (cluster.RunWorkload runs both).
const (
	// EnvController is the controller address, "unix:/path" or
	// "tcp:host:port". Absent when a workload is run by hand: events are
	// then written to stdout as JSON lines.
	EnvController = wire.EnvController
	// EnvTrial is the trial key, echoed in the workload's Hello.
	EnvTrial = wire.EnvTrial
	// EnvNodes is the JSON array of nodes, see Node.
	EnvNodes = wire.EnvNodes
	// EnvDeadline is the RFC 3339 (nano) time at which the workload must
	// have finished; the context passed to the workload is cancelled then.
	EnvDeadline = wire.EnvDeadline
	// EnvSeed is a decimal int64 that makes the workload's choices
	// deterministic.
	EnvSeed = wire.EnvSeed
	// EnvLoadEnd is the file whose creation tells the workload it may end
	// its load early (see T.Load).
	EnvLoadEnd = wire.EnvLoadEnd
	// EnvLoadMin is the shortest load before an early end (a Go duration).
	EnvLoadMin = wire.EnvLoadMin
	// EnvLoadFull is the longest load the runner asks for (a Go duration):
	// the calibration trial's, long enough for a failover (see T.Load).
	EnvLoadFull = wire.EnvLoadFull
)

// Node is one node of the cluster under test as a workload sees it: an
// element of GOFAULT_NODES, e.g.
//
//	{"name":"n1","host":"127.0.0.1","ports":{"client":2379,"peer":2380}}
//
// Its one definition is wire.Node, which the runner writes too; Addr
// returns host:port of a named port.
type Node = wire.Node

// Env is the decoded workload environment.
type Env struct {
	Controller string
	Trial      string
	Nodes      []Node
	// Deadline is zero when GOFAULT_DEADLINE is absent.
	Deadline time.Time
	Seed     int64
	// LoadEnd is the file the runner creates when the load may end early
	// (GOFAULT_LOAD_END); empty: the load runs its full length.
	LoadEnd string
	// LoadMin is the shortest load before an early end (GOFAULT_LOAD_MIN).
	LoadMin time.Duration
	// LoadFull is the longest load the runner asks for (GOFAULT_LOAD_FULL);
	// 0: the workload's own length.
	LoadFull time.Duration
}

// ParseEnv decodes the workload environment through getenv (os.Getenv in
// production). GOFAULT_NODES is required and must name at least one node;
// the other variables are optional.
func ParseEnv(getenv func(string) string) (Env, error) {
	e := Env{Controller: getenv(EnvController), Trial: getenv(EnvTrial), LoadEnd: getenv(EnvLoadEnd)}
	raw := getenv(EnvNodes)
	if raw == "" {
		return e, fmt.Errorf("%s is not set (want a JSON array like [{\"name\":\"n1\",\"ports\":{\"client\":2379}}])", EnvNodes)
	}
	if err := json.Unmarshal([]byte(raw), &e.Nodes); err != nil {
		return e, fmt.Errorf("%s: %w", EnvNodes, err)
	}
	if len(e.Nodes) == 0 {
		return e, fmt.Errorf("%s: no nodes", EnvNodes)
	}
	seen := map[string]bool{}
	for i, n := range e.Nodes {
		if n.Name == "" {
			return e, fmt.Errorf("%s: node %d has no name", EnvNodes, i)
		}
		if seen[n.Name] {
			return e, fmt.Errorf("%s: duplicate node name %q", EnvNodes, n.Name)
		}
		seen[n.Name] = true
	}
	if s := getenv(EnvDeadline); s != "" {
		d, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return e, fmt.Errorf("%s: %w", EnvDeadline, err)
		}
		e.Deadline = d
	}
	if s := getenv(EnvSeed); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return e, fmt.Errorf("%s: %w", EnvSeed, err)
		}
		e.Seed = v
	}
	if s := getenv(EnvLoadMin); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return e, fmt.Errorf("%s: %q is not a duration of 0 or more", EnvLoadMin, s)
		}
		e.LoadMin = d
	}
	if s := getenv(EnvLoadFull); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return e, fmt.Errorf("%s: %q is not a duration of 0 or more", EnvLoadFull, s)
		}
		e.LoadFull = d
	}
	return e, nil
}

// Environ encodes e as NAME=value entries for exec.Cmd.Env. Empty fields are
// left out.
func (e Env) Environ() ([]string, error) {
	nodes, err := json.Marshal(e.Nodes)
	if err != nil {
		return nil, fmt.Errorf("encode nodes: %w", err)
	}
	out := []string{EnvNodes + "=" + string(nodes), EnvSeed + "=" + strconv.FormatInt(e.Seed, 10)}
	if e.Controller != "" {
		out = append(out, EnvController+"="+e.Controller)
	}
	if e.Trial != "" {
		out = append(out, EnvTrial+"="+e.Trial)
	}
	if !e.Deadline.IsZero() {
		out = append(out, EnvDeadline+"="+e.Deadline.UTC().Format(time.RFC3339Nano))
	}
	if e.LoadEnd != "" {
		out = append(out, EnvLoadEnd+"="+e.LoadEnd, EnvLoadMin+"="+e.LoadMin.String())
		if e.LoadFull > 0 {
			out = append(out, EnvLoadFull+"="+e.LoadFull.String())
		}
	}
	sort.Strings(out)
	return out, nil
}
