package analysis

import (
	"context"
	"testing"
)

// BenchmarkSitesPass measures the site pass alone (value flow, summaries,
// site assembly) on the loaded testdata module.
func BenchmarkSitesPass(b *testing.B) {
	ctx := context.Background()
	dir := "testdata/app"
	p, err := load(ctx, Options{Dir: dir, Patterns: []string{"example.com/app/..."}})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		res, err := SitesPass.Run(&Unit{Context: ctx, Prog: p, counts: map[string]Counts{}})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.(*Sites).List) == 0 {
			b.Fatal("no sites")
		}
	}
}

// BenchmarkRun measures a whole analysis (go list, type-checking, SSA,
// VTA, passes) of the testdata module.
func BenchmarkRun(b *testing.B) {
	for range b.N {
		if _, err := Run(context.Background(), Options{Dir: "testdata/app", Patterns: []string{"example.com/app/..."}}); err != nil {
			b.Fatal(err)
		}
	}
}
