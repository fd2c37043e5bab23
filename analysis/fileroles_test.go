package analysis

import (
	"testing"

	"github.com/gofault/gofault/catalog"
)

func TestFileRole(t *testing.T) {
	cases := []struct {
		pkg, fn, file string
		want          string
	}{
		{"example.com/minikv/server", "(*Node).writeSnapshot", "/src/server/wal.go", catalog.FileSnapshot},
		{"example.com/minikv/server", "loadSnapshot", "/src/server/wal.go", catalog.FileSnapshot},
		{"example.com/minikv/server", "readSegment", "/src/server/wal.go", catalog.FileLog},
		{"example.com/minikv/server", "writeRecord", "/src/server/wal.go", catalog.FileLog},
		{"example.com/minikv/server", "beginRecovery", "/src/server/recovery.go", catalog.FileMetadata},
		{"go.etcd.io/etcd/server/v3/storage/wal", "(*WAL).cut", "/x/wal.go", catalog.FileLog},
		{"go.etcd.io/etcd/server/v3/etcdserver/api/snap", "(*Snapshotter).save", "/x/snapshotter.go", catalog.FileSnapshot},
		{"github.com/nats-io/nats-server/v2/server", "(*msgBlock).loadBlock", "/x/filestore.go", catalog.FileLog},
		{"github.com/hashicorp/raft", "(*FileSnapshotStore).Create", "/x/file_snapshot.go", catalog.FileSnapshot},
		{"github.com/hashicorp/raft", "(*fileStore).writeMeta", "/x/store.go", catalog.FileMetadata},
		{"example.com/kv/store", "(*DB).flush", "/x/db.go", catalog.FileData},
		// "catalog" and "dialog" hold the letters of "log" but not the word.
		{"example.com/catalog", "dialogue", "/x/catalog.go", catalog.FileData},
	}
	for _, c := range cases {
		t.Run(c.fn, func(t *testing.T) {
			if got := fileRole(c.pkg, c.fn, c.file); got != c.want {
				t.Fatalf("fileRole(%q, %q, %q) = %q, want %q", c.pkg, c.fn, c.file, got, c.want)
			}
		})
	}
}
