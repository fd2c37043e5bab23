package store

import (
	"context"
	"strings"
	"testing"
)

func TestBenchRuns(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	id, err := s.CreateCampaign(ctx, Campaign{Name: "minikv", ConfigHash: "h", Policy: "random", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	run := BenchRun{Bench: "b", Bug: "split", Side: "affected", Policy: "random", Seed: 1, Campaign: id, Spec: "{}", Status: StatusRunning}
	if err := s.PutBenchRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	other := run
	other.Bench, other.Campaign = "other", 0
	if err := s.PutBenchRun(ctx, other); err != nil {
		t.Fatal(err)
	}
	run.Status, run.Result = StatusDone, `{"trials":3}`
	if err := s.PutBenchRun(ctx, run); err != nil { // replaces the first
		t.Fatal(err)
	}
	if names, err := s.Benches(ctx); err != nil || strings.Join(names, ",") != "b,other" {
		t.Fatalf("benches: %v, %v", names, err)
	}
	rs, err := s.BenchRuns(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Status != StatusDone || rs[0].Result != `{"trials":3}` || rs[0].Campaign != id || rs[0].Updated.IsZero() {
		t.Fatalf("bench b runs: %+v", rs)
	}
	if rs, err := s.BenchRuns(ctx, "other"); err != nil || len(rs) != 1 || rs[0].Campaign != 0 {
		t.Fatalf("bench other runs: %+v, %v", rs, err)
	}
	// Deleting the campaign keeps the run, without its campaign.
	if _, err := s.db.ExecContext(ctx, `DELETE FROM campaigns WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	if rs, err := s.BenchRuns(ctx, "b"); err != nil || len(rs) != 1 || rs[0].Campaign != 0 {
		t.Fatalf("after deleting the campaign: %+v, %v", rs, err)
	}
}
