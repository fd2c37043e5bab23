package analysis

import (
	"path"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/gofault/gofault/catalog"
)

// roleWords are the words that give a file read or write its role, most
// telling first: a snapshot written by a log's package is a snapshot.
var roleWords = []struct {
	role  string
	words []string
}{
	{catalog.FileSnapshot, []string{"snap", "snapshot", "snapshots", "snapshotter", "checkpoint", "checkpoints"}},
	{catalog.FileLog, []string{"wal", "log", "logs", "journal", "segment", "segments", "entries", "logstore", "raftlog", "blk", "block", "blocks", "msgblock"}},
	{catalog.FileMetadata, []string{"meta", "metadata", "manifest", "marker", "term", "vote", "hardstate", "conf", "config", "peers", "version", "lock", "pid", "recovery"}},
}

// fileRole classifies the file a disk read or write at a site reads or
// writes — catalog.FileSnapshot, FileLog, FileMetadata or, for any other,
// FileData — from the words of the enclosing function's name (fn), then of
// the source file's name (file), then of the package path's last element
// (pkg): "(*Node).writeSnapshot" in wal.go is a snapshot,
// "readSegment" a log, "beginRecovery" metadata. It is a guess from names,
// shown with each finding; it never decides whether a fault is injected
// unless the campaign asks for some roles only.
func fileRole(pkg, fn, file string) string {
	base := strings.TrimSuffix(filepath.Base(file), ".go")
	for _, text := range []string{fn, base, path.Base(pkg)} {
		ws := words(text)
		for _, r := range roleWords {
			for _, w := range r.words {
				if ws[w] {
					return r.role
				}
			}
		}
	}
	return catalog.FileData
}

// words splits an identifier-like text into its lower-case words: at
// every non-letter and at each lower-to-upper case change
// ("(*Node).writeSnapshot" → node, write, snapshot; "raft_log" → raft, log).
func words(s string) map[string]bool {
	out := map[string]bool{}
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out[strings.ToLower(string(cur))] = true
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}
