package analysis

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// TestCallbacks checks the sites at calls of a bbolt-like callee that
// returns its visitor's error (testdata/callbacks: kv is not a target,
// node is): each offers what the visitors passed at that call can return,
// not what every visitor in the program can. Before, every ForEach of
// node offered the disk errors of kv.Dump's and kv.Log's visitors, and
// every Update the write errors of kv's own Restore function.
func TestCallbacks(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "callbacks"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Dir: dir, Patterns: []string{"example.com/cb/node"}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := res.Catalog.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	byID := map[string]catalog.Site{}
	for _, s := range res.Catalog.Sites {
		byID[s.ID] = s
	}
	const n = "example.com/cb/node."
	disk := catalog.KindError | catalog.KindDelay | catalog.KindCrash | catalog.KindCrashAfter
	tests := []struct {
		id     string
		kind   catalog.Kind // 0: must be absent
		io     string
		errors []string
	}{
		// A visitor that returns nil: ForEach cannot fail but for misuse.
		{n + "Count:(*kv.Bucket).ForEach#0", 0, "", nil},
		// kv's visitor writes files: its errors, and ForEach's sentinel.
		{n + "Export:(*kv.Bucket).ForEach#0", disk, "disk", []string{"EIO", "ENOSPC", "ErrTxClosed"}},
		// The node's visitor returns the node's sentinel.
		{n + "Check:(*kv.Bucket).ForEach#0", catalog.KindError, "", []string{"ErrBadKey"}},
		// A captured error is the node's own: nothing to offer.
		{n + "Limit:(*kv.Bucket).ForEach#0", 0, "", nil},
		// The visitor's Write is the site, not ForEach.
		{n + "Copy:(*kv.Bucket).ForEach#0", 0, "", nil},
		{n + "Copy$1:(*os.File).Write#0", disk | catalog.KindTorn, "disk", []string{"EIO", "ENOSPC"}},
		// Method values: the node's, and kv's, which writes a file.
		{n + "Index:(*kv.Bucket).ForEach#0", catalog.KindError, "", []string{"ErrBadKey"}},
		{n + "Append:(*kv.Bucket).ForEach#0", disk, "disk", []string{"EIO", "ENOSPC", "ErrTxClosed"}},
		// Either of two visitors (a phi): kv.Log's counts.
		{n + "Pick:(*kv.Bucket).ForEach#0", disk, "disk", []string{"EIO", "ENOSPC", "ErrTxClosed"}},
		// A parameter no call in the program binds: every visitor, as
		// before (kv.Dump's and kv.Log's disk errors).
		{n + "Each:(*kv.Bucket).ForEach#0", disk, "disk", []string{"EIO", "ENOSPC", "ErrTxClosed"}},
		// A parameter whose only caller passes a visitor returning nil.
		{n + "each:(*kv.Bucket).ForEach#0", 0, "", nil},
		// Parameters bound by callers: kv's disk writer counts, the
		// node's sentinel is not offered at a call its callers share.
		{n + "visitAll:(*kv.Bucket).ForEach#0", disk, "disk", []string{"EIO", "ENOSPC", "ErrTxClosed"}},
		{n + "forwardChecked:(*kv.Bucket).ForEach#0", 0, "", nil},
		// Update's own sync stays; the functions passed add nothing:
		// not kv's Restore's write errors (ENOSPC).
		{n + "Save:(*kv.DB).Update#0", disk, "disk", []string{"EIO"}},
		{n + "SaveChecked:(*kv.DB).Update#0", disk, "disk", []string{"EIO"}},
	}
	for _, tt := range tests {
		s, ok := byID[tt.id]
		if tt.kind == 0 {
			if ok {
				t.Errorf("%s: unexpected site %s io=%q errors=%v", tt.id, s.Kind.String(), s.IO, errorNames(s))
			}
			continue
		}
		if !ok {
			t.Errorf("%s: missing", tt.id)
			continue
		}
		if got := errorNames(s); s.Kind != tt.kind || s.IO != tt.io || strings.Join(got, ",") != strings.Join(tt.errors, ",") {
			t.Errorf("%s: got kind=%s io=%q errors=%v, want kind=%s io=%q errors=%v",
				tt.id, s.Kind.String(), s.IO, got, tt.kind.String(), tt.io, tt.errors)
		}
	}
}

func errorNames(s catalog.Site) []string {
	var names []string
	for _, e := range s.Errors {
		names = append(names, e.Name)
	}
	return names
}
