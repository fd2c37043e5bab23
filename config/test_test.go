package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadTest: gofault test reads the test section of a config that has
// no other section, and a malformed member rule is refused naming the
// field and the fix.
func TestLoadTest(t *testing.T) {
	for _, tc := range []struct {
		yaml    string
		want    string
		wantErr string
	}{
		{"test:\n  member: github.com/hashicorp/raft.Raft.localID\n", "github.com/hashicorp/raft.Raft.localID", ""},
		{"name: x\n", "", ""},
		{"test:\n  member: Raft.localID\n", "", "test.member: must be pkg/path.Type.field"},
		{"test:\n  member: github.com/hashicorp/raft.Raft\n", "", "e.g. \"member: github.com/hashicorp/raft.Raft.localID\""},
		{"test:\n  membre: x.T.f\n", "", "membre"},
		{"test:\n  transport:\n    address: localAddr\n    send: [github.com/hashicorp/raft.InmemTransport.makeRPC(target)]\n", "", "test.transport: needs test.member"},
		{"test:\n  member: a/b.T.id\n  transport:\n    address: addr\n", "", "test.transport.send: is empty"},
		{"test:\n  member: a/b.T.id\n  transport:\n    address: addr\n    send: [a/b.Tr.send]\n", "", "test.transport.send[0]: must be pkg/path.Type.method(peer)"},
		{"test:\n  member: a/b.T.id\n  transport:\n    address: addr\n    send: ['a/b.Tr.send(t.from, to)', a/b.Tr.send(p.to())]\n", "", "test.transport.send[1]"},
		{"test:\n  member: a/b.T.id\n  transport:\n    send: [a/b.Tr.send(to)]\n", "", "test.transport.address: must be a field name"},
		{"test:\n  member: a/b.T.id\n  transport:\n    address: addr\n    send: [a/b.Tr.send(to), a/b.pipe.send(p.peer)]\n    error: no route\n", "a/b.T.id", ""},
		{"test:\n  setup: ['createJetStreamCluster*', RunServer, 'cluster.restart?', 'run[AB]']\n", "", ""},
		{"test:\n  setup: [a/b.createCluster]\n", "", "test.setup[0]: must be a function name or Type.method"},
		{"test:\n  setup: [ok, 'T.f.g']\n", "", "test.setup[1]"},
		{"test:\n  setup: ['create[Cluster']\n", "", "test.setup[0]: \"create[Cluster\" is not a valid pattern"},
		{"test:\n  setup: ['']\n", "", "test.setup[0]"},
	} {
		path := filepath.Join(t.TempDir(), "gofault.yaml")
		if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := LoadTest(path)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want one containing %q", tc.yaml, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.Member != tc.want {
			t.Errorf("%q: %+v, %v; want member %q", tc.yaml, got, err, tc.want)
		}
	}
}
