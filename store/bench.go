package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// BenchRun is one campaign of a gofault bench: a bug on its affected or
// fixed release, one policy, one seed. Its spec and result are the bench
// package's, kept as JSON.
type BenchRun struct {
	Bench  string
	Bug    string
	Side   string
	Policy string
	Seed   int64
	// Campaign is the run's campaign (0: none yet, or deleted).
	Campaign int64
	// Spec says what the run does; a resumed run must do the same.
	Spec string
	// Status is StatusRunning until the run's result is recorded, then
	// StatusDone.
	Status  string
	Result  string
	Updated time.Time
}

// PutBenchRun records a bench run, replacing the one with the same bench,
// bug, side, policy and seed.
func (s *Store) PutBenchRun(ctx context.Context, r BenchRun) error {
	if r.Updated.IsZero() {
		r.Updated = time.Now()
	}
	var campaign any
	if r.Campaign != 0 {
		campaign = r.Campaign
	}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO bench_runs (bench, bug, side, policy, seed, campaign_id, spec, status, result, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT (bench, bug, side, policy, seed) DO UPDATE SET
		   campaign_id = excluded.campaign_id, spec = excluded.spec, status = excluded.status, result = excluded.result, updated = excluded.updated`,
		r.Bench, r.Bug, r.Side, r.Policy, r.Seed, campaign, r.Spec, r.Status, r.Result, nanos(r.Updated))
	if err != nil {
		return fmt.Errorf("record bench %s run %s %s %s seed %d: %w", r.Bench, r.Bug, r.Side, r.Policy, r.Seed, err)
	}
	return nil
}

// BenchRuns lists the runs of the named bench.
func (s *Store) BenchRuns(ctx context.Context, bench string) ([]*BenchRun, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT bench, bug, side, policy, seed, campaign_id, spec, status, result, updated FROM bench_runs WHERE bench = ? ORDER BY bug, side, policy, seed`, bench)
	if err != nil {
		return nil, fmt.Errorf("list bench %s: %w", bench, err)
	}
	defer rows.Close()
	var out []*BenchRun
	for rows.Next() {
		var r BenchRun
		var campaign sql.NullInt64
		var updated int64
		if err := rows.Scan(&r.Bench, &r.Bug, &r.Side, &r.Policy, &r.Seed, &campaign, &r.Spec, &r.Status, &r.Result, &updated); err != nil {
			return nil, fmt.Errorf("list bench %s: %w", bench, err)
		}
		r.Campaign = campaign.Int64
		r.Updated = fromNanos(updated)
		out = append(out, &r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list bench %s: %w", bench, err)
	}
	return out, nil
}

// Benches lists the names of the store's benches, sorted.
func (s *Store) Benches(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT bench FROM bench_runs ORDER BY bench`)
	if err != nil {
		return nil, fmt.Errorf("list benches: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("list benches: %w", err)
		}
		out = append(out, name)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list benches: %w", err)
	}
	return out, nil
}
