package repro

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nats-io/nats-server/v2/server"
)

// BlockRaftGroup makes the creation of Raft group group fail on the server
// that stores JetStream under storeDir (Cluster.StoreDir): nats-server
// keeps a group's log in <storeDir>/$SYS/_js_/<group>, and a regular file
// there is not a directory (docs/found.md N2). An ordinary stand-in for
// any failure to create the group's store — the EIO gofault injected, a
// full disk, a permission error.
func BlockRaftGroup(storeDir, group string) error {
	path := filepath.Join(storeDir, "$SYS", "_js_", group)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("block raft group %s: %w", group, err)
	}
	if err := os.WriteFile(path, []byte("not a directory\n"), 0o644); err != nil {
		return fmt.Errorf("block raft group %s: %w", group, err)
	}
	return nil
}

// ConsumerLeaders names the running servers of c whose own copy of the
// consumer says it leads the consumer (its cluster info, as the server's
// monitoring endpoint /jsz reports it, names the server itself). One
// server at most, in a healthy cluster.
func ConsumerLeaders(c *Cluster, account, stream, consumer string) []string {
	var names []string
	for i := range c.Servers() {
		s := c.Server(i)
		if s == nil {
			continue
		}
		d, err := s.JszAccount(&server.JSzOptions{Account: account, Streams: true, Consumer: true})
		if err != nil {
			continue
		}
		for _, sd := range d.Streams {
			if sd.Name != stream {
				continue
			}
			for _, ci := range sd.Consumer {
				if ci.Name == consumer && ci.Cluster != nil && ci.Cluster.Leader == s.Name() {
					names = append(names, s.Name())
				}
			}
		}
	}
	return names
}
