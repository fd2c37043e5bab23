package repro

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Cluster is a JetStream cluster of real nats-servers in this process,
// each storing under its own directory, that a test can stop and start
// again one server at a time with the same options and store.
type Cluster struct {
	opts    []*server.Options
	servers []*server.Server
	logs    []*Log
}

// StartCluster starts n nats-servers named n1…nn, clustered by routes on
// loopback ports, JetStream on, server i storing under dirs[i], and waits
// until every server takes connections and the cluster has a JetStream
// meta leader that knows them all; Shutdown ends them.
func StartCluster(dirs []string) (*Cluster, error) {
	n := len(dirs)
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, err
	}
	routes := make([]string, n)
	for i := range n {
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", ports[n+i])
	}
	c := &Cluster{opts: make([]*server.Options, n), servers: make([]*server.Server, n), logs: make([]*Log, n)}
	for i := range n {
		c.opts[i] = &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       ports[i],
			JetStream:  true,
			StoreDir:   dirs[i],
			Cluster:    server.ClusterOpts{Name: "repro", Host: "127.0.0.1", Port: ports[n+i]},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
			NoSigs:     true,
		}
		c.logs[i] = &Log{}
	}
	for i := range n {
		if err := c.Start(i); err != nil {
			c.Shutdown()
			return nil, err
		}
	}
	// The meta leader places a stream only on the servers it has heard from.
	if err := WaitFor(20*time.Second, "JetStream meta leader that knows every server", func() bool {
		m := c.MetaLeader()
		return m >= 0 && len(c.servers[m].JetStreamClusterPeers()) == n
	}); err != nil {
		c.Shutdown()
		return nil, err
	}
	return c, nil
}

// MetaLeader is the index of the server that leads the JetStream meta
// group now, or -1 if none does.
func (c *Cluster) MetaLeader() int {
	for i, s := range c.servers {
		if s != nil && s.JetStreamIsLeader() {
			return i
		}
	}
	return -1
}

// Server is server i, nil while it is stopped.
func (c *Cluster) Server(i int) *server.Server { return c.servers[i] }

// Servers is the number of servers, stopped ones included.
func (c *Cluster) Servers() int { return len(c.servers) }

// Log is what server i has logged (Log says which lines) since the
// cluster started, restarts included.
func (c *Cluster) Log(i int) *Log { return c.logs[i] }

// StoreDir is the directory JetStream stores under on server i (the
// server's StoreDir and "jetstream", as nats-server lays it out).
func (c *Cluster) StoreDir(i int) string {
	return filepath.Join(c.opts[i].StoreDir, "jetstream")
}

// Start starts server i with its options (again, after Stop: same ports
// and store) and waits until it takes connections.
func (c *Cluster) Start(i int) error {
	opts := c.opts[i].Clone()
	s, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("start %s: %w", c.opts[i].ServerName, err)
	}
	s.SetLogger(c.logs[i], false, false)
	if err := run(s); err != nil {
		return fmt.Errorf("start %s: %w", c.opts[i].ServerName, err)
	}
	c.servers[i] = s
	return nil
}

// Stop shuts server i down and waits until it has ended.
func (c *Cluster) Stop(i int) {
	if s := c.servers[i]; s != nil {
		s.Shutdown()
		s.WaitForShutdown()
		c.servers[i] = nil
	}
}

// Shutdown stops every server.
func (c *Cluster) Shutdown() {
	for i := range c.servers {
		c.Stop(i)
	}
}

// Log keeps the lines a nats-server logs at warning level and above, and
// its notices of leadership changes; it is a server.Logger.
type Log struct {
	mu    sync.Mutex
	lines []string
}

// Lines is a copy of the lines logged so far that contain sub.
func (l *Log) Lines(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

func (l *Log) add(level, format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, time.Now().Format("15:04:05.000")+" ["+level+"] "+fmt.Sprintf(format, v...))
}

// Noticef keeps the line if it is about a leader (server.Logger).
func (l *Log) Noticef(format string, v ...any) {
	if strings.Contains(format, "leader") {
		l.add("INF", format, v...)
	}
}

// Warnf keeps the line (server.Logger).
func (l *Log) Warnf(format string, v ...any) { l.add("WRN", format, v...) }

// Fatalf keeps the line (server.Logger).
func (l *Log) Fatalf(format string, v ...any) { l.add("FTL", format, v...) }

// Errorf keeps the line (server.Logger).
func (l *Log) Errorf(format string, v ...any) { l.add("ERR", format, v...) }

// Debugf logs nothing (server.Logger).
func (l *Log) Debugf(string, ...any) {}

// Tracef logs nothing (server.Logger).
func (l *Log) Tracef(string, ...any) {}

// WaitFor polls cond every 10 ms until it holds, or fails after timeout
// saying what it waited for.
func WaitFor(timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s after %v", what, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// freePorts is n distinct loopback TCP ports that were free a moment ago
// (each is held until all are chosen).
func freePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}
