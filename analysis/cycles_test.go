package analysis

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// TestCycles: a call of any function of a recursive cycle offers what the
// cycle can return, whichever of its functions was summarised first
// (testdata/cycles: lib's Load and Hop call each other, only Load reads a
// file; Save and Relay likewise with a write). Before, the function
// reached second inside the cycle kept the empty summary its recursive
// call saw, so one of each pair's calls was no site.
func TestCycles(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("testdata", "cycles"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Dir: dir, Patterns: []string{"example.com/cy/node"}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := map[string][]string{}
	for _, s := range res.Catalog.Sites {
		var errs []string
		for _, e := range s.Errors {
			errs = append(errs, e.Name)
		}
		got[s.ID] = errs
	}
	const n = "example.com/cy/node."
	for _, id := range []string{
		n + "ReadFirst:lib.Load#0", n + "ReadThen:lib.Hop#0",
		n + "WriteFirst:lib.Relay#0", n + "WriteThen:lib.Save#0",
	} {
		errs, ok := got[id]
		if !ok {
			t.Errorf("%s: no site (sites: %v)", id, keys(got))
			continue
		}
		if !slices.Contains(errs, "EIO") {
			t.Errorf("%s offers %v, want the cycle's disk errors (EIO)", id, errs)
		}
	}
	// Both calls of a cycle offer the same errors.
	for _, pair := range [][2]string{{n + "ReadFirst:lib.Load#0", n + "ReadThen:lib.Hop#0"}, {n + "WriteThen:lib.Save#0", n + "WriteFirst:lib.Relay#0"}} {
		if a, b := got[pair[0]], got[pair[1]]; !slices.Equal(a, b) {
			t.Errorf("%s offers %v, %s %v: want the same", pair[0], a, pair[1], b)
		}
	}
}

func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
