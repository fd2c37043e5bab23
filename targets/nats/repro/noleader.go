package repro

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// BlockNewTermVotes makes the first write of the term and vote of every
// Raft group whose name starts with prefix that the server storing
// JetStream under storeDir (Cluster.StoreDir) creates from now on fail,
// as BlockTermVote does for a group that exists (docs/found.md N8): it
// looks at <storeDir>/$SYS/_js_ every millisecond and puts a directory at
// the tav.idx of each new group it sees there. A new group's node writes
// its term and vote first when it campaigns or answers a vote request,
// 50 ms or more after its store is created, which the watch beats.
// blocked says the groups blocked so far, in the order seen; stop ends
// the watch.
func BlockNewTermVotes(storeDir, prefix string) (blocked func() []string, stop func()) {
	dir := filepath.Join(storeDir, "$SYS", "_js_")
	seen := map[string]bool{}
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			seen[e.Name()] = true
		}
	}
	var (
		mu     sync.Mutex
		groups []string
	)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				continue // not created yet
			}
			for _, e := range entries {
				name := e.Name()
				if seen[name] || !e.IsDir() || !strings.HasPrefix(name, prefix) {
					continue
				}
				seen[name] = true
				if os.MkdirAll(filepath.Join(dir, name, "tav.idx"), 0o755) == nil {
					mu.Lock()
					groups = append(groups, name)
					mu.Unlock()
				}
			}
		}
	}()
	blocked = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), groups...)
	}
	stop = func() {
		close(quit)
		<-done
	}
	return blocked, stop
}
