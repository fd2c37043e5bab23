package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gofault/gofault/engine"
)

// TestEvictIdleHosts: a campaign's runner that ran no trial for HostIdle
// is closed and forgotten with its work dir, and its bundle once no other
// runner uses it; a runner with a trial running, or one used lately, stays.
func TestEvictIdleHosts(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	closed := map[string]bool{}
	mkHost := func(key, bundle string, running int, idle time.Duration) *host {
		return &host{Host: closer(func() { closed[key] = true }), bundle: bundle, work: mk("work-" + key),
			running: running, last: now.Add(-idle)}
	}
	shared, own, busy := mk("bundle-shared"), mk("bundle-own"), mk("bundle-busy")
	w := &worker{opts: WorkerOptions{HostIdle: 10 * time.Minute, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, hosts: map[string]*host{
		"c/1": mkHost("c/1", shared, 0, time.Hour),   // idle, its bundle still used by c/2
		"c/2": mkHost("c/2", shared, 0, time.Minute), // used lately
		"d/1": mkHost("d/1", own, 0, 11*time.Minute), // idle, its own bundle
		"e/1": mkHost("e/1", busy, 1, 2*time.Hour),   // a trial running
	}}
	if got := fmt.Sprint(w.evict(now)); got != "[c/1 d/1]" {
		t.Errorf("evicted %s, want [c/1 d/1]", got)
	}
	if fmt.Sprint(closed) != "map[c/1:true d/1:true]" {
		t.Errorf("closed %v", closed)
	}
	for p, want := range map[string]bool{
		shared: true, own: false, busy: true,
		filepath.Join(dir, "work-c/1"): false, filepath.Join(dir, "work-d/1"): false,
		filepath.Join(dir, "work-c/2"): true, filepath.Join(dir, "work-e/1"): true,
	} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", p, err == nil, want)
		}
	}
	if len(w.hosts) != 2 || w.hosts["c/2"] == nil || w.hosts["e/1"] == nil {
		t.Errorf("hosts left %v, want c/2 and e/1", w.hosts)
	}
}

// closer is an engine.Host that only closes.
type closer func()

func (c closer) Trial(context.Context, engine.RemoteJob) (*engine.RemoteResult, error) {
	return nil, errors.New("not used")
}
func (c closer) Close() { c() }
