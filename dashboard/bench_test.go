package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gofault/gofault/bench"
	"github.com/gofault/gofault/store"
)

// benchFixture adds the runs of bench "b1" to a fixture store, all of them
// on campaign id: bug split under policy random, seeds 1-3 done (found by
// seeds 1 and 2, a false positive on the fixed release of seed 2), and
// under policy sieve seeds 2 and 3 done (nothing injected, the baseline of
// affected seed 3 fails) and seed 1 still running on the affected side.
func benchFixture(t *testing.T) (*store.Store, int64) {
	t.Helper()
	st, id := fixture(t)
	ctx := context.Background()
	spec := bench.Spec{Trials: 10, StopAtMatch: true}.Key()
	put := func(policy, side string, seed int64, status string, res *bench.Result) {
		t.Helper()
		r := store.BenchRun{Bench: "b1", Bug: "split", Side: side, Policy: policy, Seed: seed, Campaign: id, Spec: spec, Status: status}
		if res != nil {
			res.Campaign = id
			data, _ := json.Marshal(res)
			r.Result = string(data)
		}
		if err := st.PutBenchRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	hit := func(n int, min float64) *bench.Hit {
		return &bench.Hit{Trial: n, TrialID: fmt.Sprintf("%d-%d", id, n), Minutes: min, Symptom: "hang: stalled"}
	}
	put("random", "affected", 1, store.StatusDone, &bench.Result{Trials: 3, Injected: 3, Minutes: 1, Hit: hit(3, 0.5)})
	put("random", "affected", 2, store.StatusDone, &bench.Result{Trials: 5, Injected: 4, Minutes: 2, Hit: hit(5, 1.5)})
	put("random", "affected", 3, store.StatusDone, &bench.Result{Trials: 10, Injected: 9, Minutes: 4})
	put("random", "fixed", 1, store.StatusDone, &bench.Result{Trials: 10, Injected: 10, Minutes: 4})
	put("random", "fixed", 2, store.StatusDone, &bench.Result{Trials: 10, Injected: 10, Minutes: 4, Hit: hit(2, 0.2), FaultFree: 1})
	put("random", "fixed", 3, store.StatusDone, &bench.Result{Trials: 10, Injected: 4, Minutes: 4})
	// Two campaigns of their own for a row's compare link.
	for _, c := range []int64{7, 8} {
		r := store.BenchRun{Bench: "b1", Bug: "other", Side: map[int64]string{7: "affected", 8: "fixed"}[c], Policy: "random", Seed: 1, Spec: spec, Status: store.StatusDone}
		data, _ := json.Marshal(bench.Result{Campaign: c, Trials: 1})
		r.Result = string(data)
		if err := st.PutBenchRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	put("sieve", "affected", 1, store.StatusRunning, nil)
	put("sieve", "fixed", 1, store.StatusDone, &bench.Result{Minutes: 1})
	put("sieve", "affected", 2, store.StatusDone, &bench.Result{Minutes: 1})
	put("sieve", "fixed", 2, store.StatusDone, &bench.Result{Minutes: 1})
	put("sieve", "affected", 3, store.StatusDone, &bench.Result{Minutes: 1, BaselineFails: true})
	put("sieve", "fixed", 3, store.StatusDone, &bench.Result{Minutes: 1})
	return st, id
}

func TestBenchResults(t *testing.T) {
	st, id := benchFixture(t)
	runs, err := st.BenchRuns(context.Background(), "b1")
	if err != nil {
		t.Fatal(err)
	}
	v, err := BenchResults("b1", runs)
	if err != nil {
		t.Fatal(err)
	}
	if v.Info.Done != 13 || v.Info.Running != 1 || v.Info.Seeds != 3 || strings.Join(v.Info.Policies, ",") != "random,sieve" {
		t.Fatalf("info: %+v", v.Info)
	}
	s := v.Summary
	// Rows: other random, other sieve (no runs), split random, split sieve.
	if s.Trials != 10 || len(s.Rows) != 4 || s.Rows[1].Seeds != 0 || !strings.Contains(v.Pending[1], "0 of 3 seeds") {
		t.Fatalf("summary: %+v", s)
	}
	r := s.Rows[2]
	if r.Policy != "random" || r.Seeds != 3 || r.Found != 2 || r.MedianTrials != 5 || r.MedianMinutes != 1.5 || r.FalsePositives != 1 ||
		r.FaultFreeFixed != 1 || r.FaultTrials != 48 || len(r.Campaigns) != 6 || v.Pending[2] != "" {
		t.Fatalf("random row: %+v, pending %q", r, v.Pending[2])
	}
	r = s.Rows[3]
	want := fmt.Sprintf("affected seed 3, campaign %d", id)
	// No sieve campaign injected a fault (no fault trial ran, or the
	// baseline failed): it cannot find the bug, and has no median.
	if r.Policy != "sieve" || r.Seeds != 2 || r.Found != 0 || r.Cannot != 2 || !r.AllCannot() || r.MedianTrials != 0 || r.FaultTrials != 0 ||
		r.Outcomes[0].Seed != 2 || r.Outcomes[1].Seed != 3 ||
		len(r.BaselineFails) != 1 || r.BaselineFails[0] != want || !strings.Contains(v.Pending[3], "2 of 3 seeds") {
		t.Fatalf("sieve row: %+v, pending %q", r, v.Pending[3])
	}
	if s.Minutes != 23 {
		t.Fatalf("minutes %v, want 23", s.Minutes)
	}
}

func TestBenchPages(t *testing.T) {
	st, id := benchFixture(t)
	h := (&Server{Store: st}).Handler()

	code, body := get(t, h, "/benches")
	if code != http.StatusOK {
		t.Fatalf("/benches: %d %s", code, body)
	}
	for _, want := range []string{`href="bench/b1"`, "random, sieve", "<td>13</td><td>1</td>", `href="./benches"`} {
		if !strings.Contains(body, want) {
			t.Errorf("/benches lacks %q", want)
		}
	}

	code, body = get(t, h, "/bench/b1")
	if code != http.StatusOK {
		t.Fatalf("/bench/b1: %d %s", code, body)
	}
	for _, want := range []string{
		"<h1>Bench b1</h1>",
		`<td class="found">2/3</td>`,
		"<td>5.0</td><td>[3, &gt;10] 75%</td><td>1.50</td>", // random: most seeds found it
		`<td class="found">cannot</td>
<td>-</td><td>-</td><td>-</td>`, // sieve: no seed injected a fault
		"split, sieve: cannot find it in 2 of 2 seeds: 1 campaign ran no fault trial",
		"<td>nothing</td>",
		fmt.Sprintf(`1/3 (<a href="../c/%d/trial-%d-2.html">%d-2</a>)`, id, id, id),
		fmt.Sprintf(`<a href="../c/%d/index.html">%d</a>`, id, id),
		"2 of 3 seeds done on both releases; 1 runs still running",
		"Runs still running are left out",
		fmt.Sprintf("split, sieve: affected seed 3, campaign %d: stopped before any fault", id),
		`href="../benches"`,
		`<a href="../compare?c=7&amp;c=8">compare</a>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/bench/b1 lacks %q", want)
		}
	}

	if code, _ := get(t, h, "/bench/nope"); code != http.StatusNotFound {
		t.Errorf("/bench/nope: %d, want 404", code)
	}
	if _, body := get(t, h, "/"); !strings.Contains(body, `href="benches"`) {
		t.Error("the campaigns list does not link the benches")
	}
}

func TestBenchesEmpty(t *testing.T) {
	st, _ := fixture(t)
	code, body := get(t, (&Server{Store: st}).Handler(), "/benches")
	if code != http.StatusOK || !strings.Contains(body, "no benches yet") {
		t.Fatalf("/benches: %d %s", code, body)
	}
}
