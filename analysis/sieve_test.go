package analysis

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// runSieveData analyses testdata/sieve with the site and Sieve passes.
func runSieveData(t *testing.T) (*Result, string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "sieve"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Dir: dir, Patterns: []string{"example.com/sieve/..."},
		Passes: []*Pass{SitesPass, SievePass}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := res.Catalog.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	return res, dir
}

// writeSieve renders the Sieve annotations of a catalog for the golden
// file: one line per I/O site, then one per timeout point.
func writeSieve(cat *catalog.Catalog, base string) string {
	var b bytes.Buffer
	rel := func(f string) string {
		if r, err := filepath.Rel(base, f); err == nil {
			return filepath.ToSlash(r)
		}
		return f
	}
	for _, s := range cat.Sites {
		if s.IO == "" {
			continue
		}
		var tags []string
		if s.LockHeld {
			tags = append(tags, "lock")
		}
		if s.Barrier {
			tags = append(tags, "barrier")
		}
		if s.Timeout {
			tags = append(tags, fmt.Sprintf("timeout%v", s.Timeouts))
		}
		if s.Rep {
			tags = append(tags, "rep")
		}
		fmt.Fprintf(&b, "%s %s:%d [%s] block=%s\n", s.ID, rel(s.File), s.Line, strings.Join(tags, " "), s.Block)
	}
	for _, p := range cat.TimeoutPoints {
		fmt.Fprintf(&b, "point %d %s %s %s:%d:%d\n", p.Index, p.ID, p.Kind, rel(p.File), p.Line, p.Col)
	}
	return b.String()
}

func TestSieveGolden(t *testing.T) {
	res, dir := runSieveData(t)
	var b strings.Builder
	b.WriteString(writeSieve(res.Catalog, dir))
	keys := append([]string(nil), SieveCounters...)
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d\n", k, res.Stats.Totals[k])
	}
	got := b.String()
	golden := filepath.Join("testdata", "sieve.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if got != string(want) {
		t.Errorf("Sieve annotations differ from %s (run with -update after checking):\n%s", golden, diffLines(string(want), got))
	}
}

// TestSievePatterns states each pattern of testdata/sieve in code, so a
// golden update cannot silently accept a regression.
func TestSievePatterns(t *testing.T) {
	res, _ := runSieveData(t)
	byID := map[string]catalog.Site{}
	for _, s := range res.Catalog.Sites {
		byID[s.ID] = s
	}
	kinds := map[uint32]string{}
	for _, p := range res.Catalog.TimeoutPoints {
		kinds[p.Index] = p.Kind
	}
	const n = "example.com/sieve/node."
	tests := []struct {
		id                     string
		lock, barrier, timeout bool
		points                 string // kinds of the guarding points
	}{
		{n + "(*WAL).Append:(*os.File).Write#0", true, false, false, ""},
		{n + "(*WAL).sync:(*os.File).Sync#0", true, false, false, ""}, // in a callee
		{n + "(*WAL).Truncate:(*os.File).Write#0", true, false, false, ""},
		{n + "(*WAL).Truncate:(*os.File).Write#1", true, false, false, ""},
		{n + "(*WAL).Truncate:(*os.File).Sync#0", false, false, false, ""}, // after Unlock
		{n + "(*WAL).Meta:(*os.File).Read#0", true, false, false, ""},      // RWMutex
		{n + "(*WAL).Maybe:(*os.File).Write#0", false, false, false, ""},   // not on every path
		{n + "Flush:(*os.File).Write#0", false, true, false, ""},
		{n + "Flush:(*os.File).Write#1", false, true, false, ""},
		{n + "Notify:(*os.File).Write#0", false, true, false, ""},
		{n + "Notify:(*os.File).Sync#0", false, false, false, ""}, // after close
		{n + "Dial:(*net.Dialer).DialContext#0", false, false, true, "WithTimeout"},
		{n + "Get:(*http.Client).Do#0", false, false, true, "WithDeadline"},
		{n + "DialBackground:(*net.Dialer).DialContext#0", false, false, false, ""},
		{n + "Read$1:io.ReadFull#0", false, true, true, "After"},
		{n + "Apply:(*os.File).Write#0", false, false, true, "Since"},
		{n + "Apply:(*os.File).Sync#0", false, false, false, ""},
		{n + "Ping:(net.Conn).Write#0", false, false, true, "SetDeadline"},
		{n + "Ping:io.ReadFull#0", false, false, true, "SetDeadline"},
		{n + "Pong:(net.Conn).Write#0", false, false, true, ""},  // absolute deadline: no point
		{n + "Watch$1:(*os.File).Read#0", false, true, true, ""}, // the caller's context: no point
		{n + "Timed$1:(*os.File).Sync#0", false, true, true, "NewTimer"},
		{n + "Captured$1:(*net.Dialer).DialContext#0", false, false, true, "WithTimeout"},
		{n + "Sub:(*os.File).Write#0", false, false, true, "Since"},
	}
	for _, tt := range tests {
		s, ok := byID[tt.id]
		if !ok {
			t.Errorf("%s: missing", tt.id)
			continue
		}
		var pk []string
		for _, i := range s.Timeouts {
			pk = append(pk, kinds[i])
		}
		if s.LockHeld != tt.lock || s.Barrier != tt.barrier || s.Timeout != tt.timeout || strings.Join(pk, ",") != tt.points {
			t.Errorf("%s: lock=%v barrier=%v timeout=%v points=%q, want %v %v %v %q", tt.id,
				s.LockHeld, s.Barrier, s.Timeout, strings.Join(pk, ","), tt.lock, tt.barrier, tt.timeout, tt.points)
		}
	}
	// Grouping: Flush's two writes share a block; the second stands for it.
	w0, w1 := byID[n+"Flush:(*os.File).Write#0"], byID[n+"Flush:(*os.File).Write#1"]
	if w0.Block == "" || w0.Block != w1.Block || w0.Rep || !w1.Rep {
		t.Errorf("Flush writes: block %q rep %v, block %q rep %v; want one block, the second its representative",
			w0.Block, w0.Rep, w1.Block, w1.Rep)
	}
	tot := res.Stats.Totals
	if tot[CountGroupedSites] >= tot[CountSieveSites] || tot[CountSieveSites] == 0 {
		t.Errorf("grouped_sites=%d sieve_sites=%d; want grouping to merge sites", tot[CountGroupedSites], tot[CountSieveSites])
	}
	if tot[CountTimeoutUncaptured] != 1 {
		t.Errorf("timeout_uncaptured=%d, want 1 (Pong)", tot[CountTimeoutUncaptured])
	}
}

// TestSieveEtcd runs the Sieve pass on the etcd v3.5 server packages of
// targets/etcd and checks the counters and a sample read in etcd's source.
func TestSieveEtcd(t *testing.T) {
	dir := etcdDir(t)
	res, err := Run(context.Background(), Options{Dir: dir, Patterns: []string{"go.etcd.io/etcd/server/v3/..."},
		Passes: []*Pass{SitesPass, SievePass}})
	if err != nil {
		t.Fatal(err)
	}
	tot := res.Stats.Totals
	t.Logf("etcd: lock_held=%d barrier=%d timeout=%d union=%d grouped=%d points=%d in %.1fs",
		tot[CountLockHeldSites], tot[CountBarrierSites], tot[CountTimeoutSites], tot[CountSieveSites],
		tot[CountGroupedSites], tot[CountTimeoutPoints], res.Stats.Seconds)
	if tot[CountLockHeldSites] == 0 || tot[CountTimeoutSites] == 0 || tot[CountTimeoutPoints] == 0 {
		t.Errorf("want lock-held sites, timeout sites and timeout points: %v", tot)
	}
	// Grouping merges sites: fewer groups than Sieve's sites (the union
	// of lock-held, barrier and timeout sites). It compared against
	// lock-held + timeout sites, leaving the barrier sites out of one side
	// only; with io/ioutil's wrappers as primitives (etcd's snapshotter)
	// that read 36 groups against 29 + 7, of a union of 43.
	if tot[CountGroupedSites] >= tot[CountSieveSites] {
		t.Errorf("grouped_sites=%d, want < sieve_sites=%d", tot[CountGroupedSites], tot[CountSieveSites])
	}
	byID := map[string]catalog.Site{}
	for _, s := range res.Catalog.Sites {
		byID[s.ID] = s
	}
	const p = "go.etcd.io/etcd/server/v3/"
	for _, tt := range []struct {
		id            string
		lock, timeout bool
	}{
		{p + "wal.(*WAL).sync:fileutil.Fdatasync#0", true, true},                 // Save holds w.mu; Since(start) > warnSyncDuration
		{p + "wal.write:(io.Writer).Write#0", true, false},                       // encoder under Save's lock
		{p + "mvcc/backend.(*batchTx).commit:(*bbolt.Tx).Commit#0", true, false}, // batchTx.Commit locks, then commit
		{p + "lease/leasehttp.RenewHTTP:(*http.Client).Do#0", false, true},       // LeaseRenew's WithTimeout
		{p + "etcdserver.openSnapshotBackend:os.Rename#0", true, false},          // applySnapshot holds s.bemu
	} {
		s, ok := byID[tt.id]
		if !ok {
			t.Errorf("%s: missing", tt.id)
			continue
		}
		if s.LockHeld != tt.lock || s.Timeout != tt.timeout {
			t.Errorf("%s: lock=%v timeout=%v, want %v %v", tt.id, s.LockHeld, s.Timeout, tt.lock, tt.timeout)
		}
	}
}
