package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gofault/gofault/record"
)

// A campaign's state between its runs (what a resumed campaign, a replay
// or a report reads back) lives in the blobs table, one row per kind under
// the keys below; every kind has its typed accessors here, so no other
// package names a key.
const (
	blobPolicy     = "policy"     // the policy's snapshot (policy.Stateful)
	blobBaseline   = "baseline"   // the log checker's baseline (record.LogBaseline)
	blobBuild      = "build_key"  // the build key of the campaign's trials
	blobReruns     = "reruns"     // fault-free re-runs: map[trial ID]record.Rerun
	blobInvariants = "invariants" // the invariants a cofi campaign mined
	blobCoverage   = "coverage"   // the coverage union (record.Coverage)
	blobPaused     = "paused"     // the pause flag (SetPaused)
	blobTestPass   = "test_pass"  // a gofault test campaign's fault-free pass (TestPass)
	// blobCalibration is the progress bound a campaign's calibration
	// trial measured, with the key of the build and scenario it holds for
	// (Calibration).
	blobCalibration = "calibration"
)

// upsertBlob stores a blob (campaign_id, key, value, updated), replacing
// any previous value.
const upsertBlob = `INSERT INTO blobs (campaign_id, key, value, updated) VALUES (?, ?, ?, ?)
	ON CONFLICT (campaign_id, key) DO UPDATE SET value = excluded.value, updated = excluded.updated`

// putBlob stores value under key for a campaign, replacing any previous
// value.
func (s *Store) putBlob(ctx context.Context, campaignID int64, key string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	_, err := s.db.ExecContext(ctx, upsertBlob, campaignID, key, value, time.Now().UnixNano())
	if err != nil {
		return fmt.Errorf("put blob %q of campaign %d: %w", key, campaignID, err)
	}
	return nil
}

// getBlob returns the value stored under key for a campaign, or ErrNotFound.
func (s *Store) getBlob(ctx context.Context, campaignID int64, key string) ([]byte, error) {
	var v []byte
	err := s.db.QueryRowContext(ctx, `SELECT value FROM blobs WHERE campaign_id = ? AND key = ?`, campaignID, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("blob %q of campaign %d: %w", key, campaignID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get blob %q of campaign %d: %w", key, campaignID, err)
	}
	return v, nil
}

// putJSON stores v, encoded as JSON, under key; what names the kind of
// data in the error.
func (s *Store) putJSON(ctx context.Context, campaignID int64, key, what string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s of campaign %d: %w", what, campaignID, err)
	}
	return s.putBlob(ctx, campaignID, key, data)
}

// getJSON decodes the JSON stored under key into v; ErrNotFound when there
// is none.
func (s *Store) getJSON(ctx context.Context, campaignID int64, key, what string, v any) error {
	data, err := s.getBlob(ctx, campaignID, key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s of campaign %d: %w", what, campaignID, err)
	}
	return nil
}

// PutPolicyState stores the snapshot of a campaign's policy
// (policy.Stateful.Snapshot), replacing the last one.
func (s *Store) PutPolicyState(ctx context.Context, campaignID int64, snapshot []byte) error {
	return s.putBlob(ctx, campaignID, blobPolicy, snapshot)
}

// PolicyState returns the last snapshot of a campaign's policy, or
// ErrNotFound when none was stored (a new campaign, a stateless policy).
func (s *Store) PolicyState(ctx context.Context, campaignID int64) ([]byte, error) {
	return s.getBlob(ctx, campaignID, blobPolicy)
}

// PutTestPass stores what the fault-free pass of a gofault test campaign
// measured so far (gotest's measures, JSON), replacing the last one, so
// that a resumed campaign does not run those tests again.
func (s *Store) PutTestPass(ctx context.Context, campaignID int64, data []byte) error {
	return s.putBlob(ctx, campaignID, blobTestPass, data)
}

// TestPass returns what PutTestPass stored last, or ErrNotFound.
func (s *Store) TestPass(ctx context.Context, campaignID int64) ([]byte, error) {
	return s.getBlob(ctx, campaignID, blobTestPass)
}

// PutBaseline stores a campaign's log baseline, replacing the last one.
// The caller keeps b from changing meanwhile.
func (s *Store) PutBaseline(ctx context.Context, campaignID int64, b *record.LogBaseline) error {
	return s.putJSON(ctx, campaignID, blobBaseline, "log baseline", b)
}

// Baseline returns a campaign's log baseline: an empty one when none was
// stored.
func (s *Store) Baseline(ctx context.Context, campaignID int64) (*record.LogBaseline, error) {
	b := &record.LogBaseline{}
	if err := s.getJSON(ctx, campaignID, blobBaseline, "log baseline", b); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return b, nil
}

// PutBuildKey stores the build key of a campaign's trials (build
// Built.Key).
func (s *Store) PutBuildKey(ctx context.Context, campaignID int64, key string) error {
	return s.putBlob(ctx, campaignID, blobBuild, []byte(key))
}

// BuildKey returns the build key of a campaign's trials, or ErrNotFound
// when none was stored.
func (s *Store) BuildKey(ctx context.Context, campaignID int64) (string, error) {
	key, err := s.getBlob(ctx, campaignID, blobBuild)
	return string(key), err
}

// PutReruns stores what the re-runs of a campaign's fault-free failures
// showed, by trial ID, replacing what was stored.
func (s *Store) PutReruns(ctx context.Context, campaignID int64, reruns map[string]record.Rerun) error {
	return s.putJSON(ctx, campaignID, blobReruns, "fault-free re-runs", reruns)
}

// Reruns returns what the re-runs of a campaign's fault-free failures
// showed, by trial ID (empty when there were none).
func (s *Store) Reruns(ctx context.Context, campaignID int64) (map[string]record.Rerun, error) {
	m := map[string]record.Rerun{}
	if err := s.getJSON(ctx, campaignID, blobReruns, "fault-free re-runs", &m); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return m, nil
}

// PutInvariants stores the invariants a campaign's policy mined.
func (s *Store) PutInvariants(ctx context.Context, campaignID int64, invs []record.Invariant) error {
	return s.putJSON(ctx, campaignID, blobInvariants, "invariants", invs)
}

// Invariants returns the invariants a campaign's policy mined, or
// ErrNotFound when it mined none.
func (s *Store) Invariants(ctx context.Context, campaignID int64) ([]record.Invariant, error) {
	var out []record.Invariant
	if err := s.getJSON(ctx, campaignID, blobInvariants, "invariants", &out); err != nil {
		return nil, err
	}
	return out, nil
}

// PutCoverage stores a campaign's coverage, replacing what was stored.
func (s *Store) PutCoverage(ctx context.Context, campaignID int64, c *record.Coverage) error {
	return s.putJSON(ctx, campaignID, blobCoverage, "coverage", c)
}

// Coverage returns a campaign's coverage, or ErrNotFound when it has none
// (no trial saved yet, or a build without coverage counters).
func (s *Store) Coverage(ctx context.Context, campaignID int64) (*record.Coverage, error) {
	var c record.Coverage
	if err := s.getJSON(ctx, campaignID, blobCoverage, "coverage", &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// SetPaused pauses (or resumes) campaign id: a running campaign, in this
// process or another, begins no new fault trial while it is paused; the
// trials under way finish.
func (s *Store) SetPaused(ctx context.Context, id int64, paused bool) error {
	v := []byte{}
	if paused {
		v = []byte("1")
	}
	return s.putBlob(ctx, id, blobPaused, v)
}

// Paused reports whether campaign id is paused (SetPaused).
func (s *Store) Paused(ctx context.Context, id int64) (bool, error) {
	v, err := s.getBlob(ctx, id, blobPaused)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return len(v) > 0, err
}

// Calibration is a progress bound a calibration trial measured and what it
// holds for: campaigns whose Key is the same (the same build and scenario)
// reuse it instead of measuring again.
type Calibration struct {
	// Key identifies the build and the scenario the bound was measured
	// on (campaign's calibration key).
	Key string `json:"key"`
	// Bound is the progress bound chosen from the measurement, How says
	// how ("measured failover 1.2s × 2, floor 3s; ...").
	Bound time.Duration `json:"bound"`
	How   string        `json:"how"`
}

// PutCalibration stores the calibration a campaign measured, replacing
// the last one.
func (s *Store) PutCalibration(ctx context.Context, campaignID int64, c Calibration) error {
	return s.putJSON(ctx, campaignID, blobCalibration, "calibration", c)
}

// FindCalibration returns the calibration stored under key by the newest
// campaign that stored one, and that campaign's ID; ErrNotFound when none
// did.
func (s *Store) FindCalibration(ctx context.Context, key string) (Calibration, int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT campaign_id, value FROM blobs WHERE key = ? ORDER BY campaign_id DESC`, blobCalibration)
	if err != nil {
		return Calibration{}, 0, fmt.Errorf("find calibration %s: %w", key, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id   int64
			data []byte
			c    Calibration
		)
		if err := rows.Scan(&id, &data); err != nil {
			return Calibration{}, 0, fmt.Errorf("find calibration %s: %w", key, err)
		}
		if err := json.Unmarshal(data, &c); err != nil {
			return Calibration{}, 0, fmt.Errorf("decode calibration of campaign %d: %w", id, err)
		}
		if c.Key == key && c.Bound > 0 {
			return c, id, nil
		}
	}
	if err := rows.Err(); err != nil {
		return Calibration{}, 0, fmt.Errorf("find calibration %s: %w", key, err)
	}
	return Calibration{}, 0, fmt.Errorf("calibration %s: %w", key, ErrNotFound)
}
