// Package memcluster is a three-member "cluster" in one process, for
// gofault test's in-process members: a leader appends every entry to its
// log file and replicates it to the followers' files. With
// MEMCLUSTER_BUG=drop, Replicate drops a follower's failed append and
// acknowledges the entry anyway: a planted bug that only a fault on a
// follower (n2, n3) can show.
package memcluster

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Member is one member, told apart by its id (gofault.yaml's
// test.member).
type Member struct {
	id  string
	dir string
}

// New returns member id keeping its log in dir.
func New(id, dir string) *Member { return &Member{id: id, dir: dir} }

// Append adds entry to the member's log.
func (m *Member) Append(entry string) error {
	f, err := os.OpenFile(filepath.Join(m.dir, "log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(entry + "\n")
	return err
}

// Entries returns the member's log.
func (m *Member) Entries() ([]string, error) {
	data, err := os.ReadFile(filepath.Join(m.dir, "log"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(data)), nil
}

// Cluster is a leader (Members[0]) and its followers.
type Cluster struct {
	Members []*Member
}

// Replicate appends entry on the leader, then on every follower; an
// error means the entry is not acknowledged.
func (c *Cluster) Replicate(entry string) error {
	if err := c.Members[0].Append(entry); err != nil {
		return err
	}
	for _, f := range c.Members[1:] {
		if err := f.Append(entry); err != nil && os.Getenv("MEMCLUSTER_BUG") != "drop" {
			return err
		}
	}
	return nil
}
