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
