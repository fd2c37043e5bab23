package policy

import (
	"fmt"
	"testing"

	"github.com/gofault/gofault/catalog"
)

// TestDecisionLast checks Decision.Last, which lets the runner end a
// trial's workload early: no policy grants a fault after one it marked
// Last, and a policy that used its quota marked the quota's last fault.
func TestDecisionLast(t *testing.T) {
	cat := testCatalog()
	for _, name := range []string{"random", "exhaustive", "fate", "bsrr", "new-state-only", "sieve", "fuzz"} {
		for _, per := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/per_trial=%d", name, per), func(t *testing.T) {
				p := mustNew(t, name, Env{Catalog: cat, Seed: 3, PerTrial: per, MaxPerTrial: 3})
				lastSeen := 0
				for trial := 0; trial < 20; trial++ {
					plan := p.Begin(TrialInfo{Index: trial, Nodes: []string{"n1", "n2", "n3"}})
					live := map[uint32]bool{}
					for _, s := range plan.Sites {
						live[s] = true
					}
					granted, last, done := 0, false, false
					for i, r := range syntheticTrial(cat, 200) {
						if done || !live[r.Site.Index] || !plan.LiveOn(r.Node) {
							continue
						}
						r.Trial, r.Seq = trial, i
						d := p.Decide(&r)
						if d.Fault.Kind != catalog.KindNone {
							if last {
								t.Fatalf("trial %d: fault %d granted after one marked Last", trial, granted+1)
							}
							granted++
							last = d.Last
						}
						if d.Done && d.Fault.Kind != catalog.KindNone && !d.Last {
							t.Fatalf("trial %d: Done without Last on a granted fault", trial)
						}
						done = d.Done
					}
					if name != "fuzz" && granted == per && !last {
						t.Fatalf("trial %d: the quota's last fault (%d) not marked Last", trial, granted)
					}
					if last {
						lastSeen++
					}
					p.End(Outcome{Index: trial, Requests: 200})
				}
				if lastSeen == 0 {
					t.Fatalf("no trial of 20 marked a fault Last")
				}
			})
		}
	}
}
