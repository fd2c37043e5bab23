package analysis

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// wantRE matches an expectation on a testdata line, in the manner of
// golang.org/x/tools/go/analysis/analysistest: // want "lock timeout".
var wantRE = regexp.MustCompile(`// want "([^"]*)"`)

// wants returns the expectations of file by line.
func wants(t *testing.T, file string) map[int]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for i, line := range strings.Split(string(data), "\n") {
		if m := wantRE.FindStringSubmatch(line); m != nil {
			out[i+1] = m[1]
		}
	}
	return out
}

// sieveContexts names the Sieve contexts of an I/O site: "lock",
// "barrier", "timeout", in that order.
func sieveContexts(s *catalog.Site) string {
	var cs []string
	for _, c := range []struct {
		name string
		on   bool
	}{{"lock", s.LockHeld}, {"barrier", s.Barrier}, {"timeout", s.Timeout}} {
		if c.on {
			cs = append(cs, c.name)
		}
	}
	return strings.Join(cs, " ")
}

// TestSieveWant checks the Sieve pass against the expectations written on
// the lines of testdata/sieve/node/node.go: every I/O call Sieve puts in a
// context has a // want naming exactly its contexts, and every // want is
// met, so the expectation sits next to the code it is about.
func TestSieveWant(t *testing.T) {
	res, dir := runSieveData(t)
	file := filepath.Join(dir, "node", "node.go")
	want := wants(t, file)
	got := map[int]string{}
	for i := range res.Catalog.Sites {
		s := &res.Catalog.Sites[i]
		if s.File != file || s.IO == "" {
			continue
		}
		if c := sieveContexts(s); c != "" {
			got[s.Line] = c
		}
	}
	lines := map[int]bool{}
	for l := range want {
		lines[l] = true
	}
	for l := range got {
		lines[l] = true
	}
	var sorted []int
	for l := range lines {
		sorted = append(sorted, l)
	}
	sort.Ints(sorted)
	for _, l := range sorted {
		if got[l] != want[l] {
			t.Errorf("node.go:%d: Sieve contexts %q, want %q", l, got[l], want[l])
		}
	}
	if len(want) == 0 {
		t.Fatal("no // want expectations in node.go")
	}
}
