package analysis

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// etcdDir returns the etcd target module's directory, skipping the test
// with -short (it analyses etcd) or when the module is missing.
func etcdDir(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("analyses etcd")
	}
	dir, err := filepath.Abs(filepath.Join("..", "targets", "etcd"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Skip("no etcd target module")
	}
	// The target module joins gofault's modules through its own go.work
	// (TestMain turns workspaces off for the testdata modules).
	t.Setenv("GOWORK", filepath.Join(dir, "go.work"))
	return dir
}

// TestEtcd analyses the etcd v3.5 server packages of targets/etcd and
// checks a sample of sites read by hand in etcd's source. It takes a few
// seconds with a warm build cache.
func TestEtcd(t *testing.T) {
	dir := etcdDir(t)
	res, err := Run(context.Background(), Options{Dir: dir, Patterns: []string{"go.etcd.io/etcd/server/v3/..."}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd: %v in %.1fs", res.Stats.Totals, res.Stats.Seconds)
	if n := res.Stats.Totals[CountErrorSites]; n < 300 {
		t.Errorf("error sites = %d, want hundreds", n)
	}
	if n := res.Stats.Totals[CountDelaySites]; n < 100 {
		t.Errorf("delay sites = %d, want hundreds", n)
	}
	byID := map[string]catalog.Site{}
	for _, s := range res.Catalog.Sites {
		byID[s.ID] = s
	}
	const p = "go.etcd.io/etcd/server/v3/"
	tests := []struct {
		id, io, firstErr string
	}{
		// wal.(*WAL).sync: fileutil.Fdatasync(w.tail().File)
		{p + "wal.(*WAL).sync:fileutil.Fdatasync#0", "disk", "EIO"},
		// wal.write: w.Write(...) on the WAL's page writer over the file
		{p + "wal.write:(io.Writer).Write#0", "disk", "EIO"},
		// wal.(*WAL).cut: os.Rename(newTail.Name(), fpath)
		{p + "wal.(*WAL).cut:os.Rename#0", "disk", "EIO"},
		// wal.(*decoder).decodeRecord: rec.Validate(d.crc.Sum32()) returns walpb.ErrCRCMismatch
		{p + "wal.(*decoder).decodeRecord:(*walpb.Record).Validate#0", "", "ErrCRCMismatch"},
		// rafthttp.(*pipeline).post: p.tr.pipelineRt.RoundTrip(req)
		{p + "etcdserver/api/rafthttp.(*pipeline).post:(http.RoundTripper).RoundTrip#0", "net", "ECONNREFUSED"},
		// snap.(*Snapshotter).SaveDBFrom: io.Copy(f, r) into a file
		{p + "etcdserver/api/snap.(*Snapshotter).SaveDBFrom:io.Copy#0", "disk", "EIO"},
		// v3rpc.(*serverWatchStream).recvLoop: sws.gRPCStream.Recv()
		{p + "etcdserver/api/v3rpc.(*serverWatchStream).recvLoop:(etcdserverpb.Watch_WatchServer).Recv#0", "net", "Canceled"},
	}
	for _, tt := range tests {
		s, ok := byID[tt.id]
		if !ok {
			t.Errorf("%s: missing", tt.id)
			continue
		}
		if s.IO != tt.io || len(s.Errors) == 0 || s.Errors[0].Name != tt.firstErr {
			t.Errorf("%s: io=%q errors=%v, want io=%q first error %s", tt.id, s.IO, s.Errors, tt.io, tt.firstErr)
		}
	}
}
