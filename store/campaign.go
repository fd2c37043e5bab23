package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gofault/gofault/record"
)

// Campaign statuses.
const (
	StatusRunning     = "running"     // trials are being run (or the process died)
	StatusDone        = "done"        // all trials ran
	StatusInterrupted = "interrupted" // stopped early (Ctrl-C); resumable
	StatusFailed      = "failed"      // stopped by an error (a cluster that cannot start, a broken baseline); resumable
)

// Campaign is one run of gofault over a config.
type Campaign struct {
	ID int64
	// Name is the target's name (config name).
	Name string
	// ConfigHash is config.Config.Hash(): a resume must match it.
	ConfigHash string
	Policy     string
	Seed       int64
	Created    time.Time
	Status     string
	// Config is the effective config (YAML or JSON) for reports and replay.
	Config string
	// Progress is the progress bound the hang and gray checkers judged the
	// campaign's trials with (zero: not chosen yet, or a campaign older
	// than the column); ProgressHow says how it was chosen ("set by
	// checkers.progress", "measured failover 1.2s × 2, floor 3s").
	Progress    time.Duration
	ProgressHow string
}

// CreateCampaign records a new campaign and returns its ID. Created defaults
// to now and Status to StatusRunning.
func (s *Store) CreateCampaign(ctx context.Context, c Campaign) (int64, error) {
	if c.Created.IsZero() {
		c.Created = time.Now()
	}
	if c.Status == "" {
		c.Status = StatusRunning
	}
	res, err := s.db.ExecContext(ctx,
		`INSERT INTO campaigns (name, config_hash, policy, seed, created, status, config, progress, progress_how) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.Name, c.ConfigHash, c.Policy, c.Seed, nanos(c.Created), c.Status, c.Config, int64(c.Progress), c.ProgressHow)
	if err != nil {
		return 0, fmt.Errorf("create campaign %q: %w", c.Name, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("create campaign %q: %w", c.Name, err)
	}
	return id, nil
}

const campaignCols = `id, name, config_hash, policy, seed, created, status, config, progress, progress_how`

func scanCampaign(row interface{ Scan(...any) error }) (*Campaign, error) {
	var c Campaign
	var created, progress int64
	if err := row.Scan(&c.ID, &c.Name, &c.ConfigHash, &c.Policy, &c.Seed, &created, &c.Status, &c.Config, &progress, &c.ProgressHow); err != nil {
		return nil, err
	}
	c.Created = fromNanos(created)
	c.Progress = time.Duration(progress)
	return &c, nil
}

// Campaign returns the campaign with the given ID, or ErrNotFound.
func (s *Store) Campaign(ctx context.Context, id int64) (*Campaign, error) {
	c, err := scanCampaign(s.db.QueryRowContext(ctx, `SELECT `+campaignCols+` FROM campaigns WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("campaign %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("campaign %d: %w", id, err)
	}
	return c, nil
}

// FindCampaign returns the most recent campaign with the given name and
// config hash (for --resume), or ErrNotFound. An empty configHash matches
// any hash.
func (s *Store) FindCampaign(ctx context.Context, name, configHash string) (*Campaign, error) {
	c, err := scanCampaign(s.db.QueryRowContext(ctx,
		`SELECT `+campaignCols+` FROM campaigns WHERE name = ? AND (? = '' OR config_hash = ?) ORDER BY id DESC LIMIT 1`,
		name, configHash, configHash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("campaign %q with config hash %q: %w", name, configHash, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("find campaign %q: %w", name, err)
	}
	return c, nil
}

// Campaigns lists all campaigns, oldest first.
func (s *Store) Campaigns(ctx context.Context) ([]*Campaign, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+campaignCols+` FROM campaigns ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list campaigns: %w", err)
	}
	defer rows.Close()
	var out []*Campaign
	for rows.Next() {
		c, err := scanCampaign(rows)
		if err != nil {
			return nil, fmt.Errorf("list campaigns: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list campaigns: %w", err)
	}
	return out, nil
}

// SetCampaignStatus updates a campaign's status (StatusDone, ...).
func (s *Store) SetCampaignStatus(ctx context.Context, id int64, status string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE campaigns SET status = ? WHERE id = ?`, status, id)
	if err != nil {
		return fmt.Errorf("set campaign %d status: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("set campaign %d status: %w", id, ErrNotFound)
	}
	return nil
}

// SetCampaignProgress records the progress bound a campaign's trials are
// judged with and how it was chosen.
func (s *Store) SetCampaignProgress(ctx context.Context, id int64, bound time.Duration, how string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE campaigns SET progress = ?, progress_how = ? WHERE id = ?`, int64(bound), how, id)
	if err != nil {
		return fmt.Errorf("set campaign %d progress bound: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("set campaign %d progress bound: %w", id, ErrNotFound)
	}
	return nil
}

// CampaignState is what a campaign's earlier runs stored: all that a run
// needs to resume it, read at once (CampaignState). A new campaign's is
// its record and nothing else.
type CampaignState struct {
	Campaign Campaign
	// BuildKey is the build key of its trials (PutBuildKey); "" when none
	// was stored.
	BuildKey string
	// Policy is its policy's last snapshot (PutPolicyState); nil when
	// none was stored.
	Policy []byte
	// Baseline is its log baseline (PutBaseline); empty when none was
	// stored.
	Baseline *record.LogBaseline
	// Reruns is what the re-runs of its fault-free failures showed, by
	// trial ID (PutReruns); empty when there were none.
	Reruns map[string]record.Rerun
	// Coverage is its coverage union (PutCoverage); nil when none was
	// stored.
	Coverage *record.Coverage
	// TestPass is a gofault test campaign's fault-free pass (PutTestPass);
	// nil when none was stored.
	TestPass []byte
	// Trials are its trials in index order.
	Trials []*record.Trial
}

// CampaignState reads what campaign id stored (ErrNotFound when there is
// no such campaign).
func (s *Store) CampaignState(ctx context.Context, id int64) (*CampaignState, error) {
	c, err := s.Campaign(ctx, id)
	if err != nil {
		return nil, err
	}
	out := &CampaignState{Campaign: *c}
	// blob reads the blob under key into *into, leaving it alone when
	// there is none.
	blob := func(key string, into *[]byte) error {
		data, err := s.getBlob(ctx, id, key)
		switch {
		case errors.Is(err, ErrNotFound):
			return nil
		case err != nil:
			return err
		}
		*into = append([]byte{}, data...) // found: never nil
		return nil
	}
	var key []byte
	if err := errors.Join(blob(blobBuild, &key), blob(blobPolicy, &out.Policy), blob(blobTestPass, &out.TestPass)); err != nil {
		return nil, err
	}
	out.BuildKey = string(key)
	if out.Baseline, err = s.Baseline(ctx, id); err != nil {
		return nil, err
	}
	if out.Reruns, err = s.Reruns(ctx, id); err != nil {
		return nil, err
	}
	if out.Coverage, err = s.Coverage(ctx, id); errors.Is(err, ErrNotFound) {
		out.Coverage = nil
	} else if err != nil {
		return nil, err
	}
	if out.Trials, err = s.Trials(ctx, id); err != nil {
		return nil, err
	}
	return out, nil
}

// MixedBuilds is the build key of a campaign whose trials ran more than
// one build: no build matches it.
const MixedBuilds = "mixed"

// Opening says which campaign a run adds trials to (OpenCampaign), and
// the build its trials run.
type Opening struct {
	// ID is the campaign; 0: with Resume the newest campaign made with
	// New's Name and ConfigHash (ErrNotFound: none), else New, made now.
	ID     int64
	Resume bool
	New    Campaign
	// Check, if set, refuses the campaign found, from what it stored:
	// its error is OpenCampaign's, and nothing is recorded.
	Check func(*CampaignState) error
	// BuildKey is the build key of the run's trials: a campaign's first
	// run records it, a later run of another build MixedBuilds.
	BuildKey string
}

// OpenCampaign opens the campaign o names for a run and returns what it
// stored: the campaign is then running again (gofault ui shows it live),
// its trials' build key as o.BuildKey says.
func (s *Store) OpenCampaign(ctx context.Context, o Opening) (*CampaignState, error) {
	id := o.ID
	switch {
	case id != 0:
	case o.Resume:
		c, err := s.FindCampaign(ctx, o.New.Name, o.New.ConfigHash)
		if err != nil {
			return nil, err
		}
		id = c.ID
	default:
		var err error
		if id, err = s.CreateCampaign(ctx, o.New); err != nil {
			return nil, err
		}
	}
	st, err := s.CampaignState(ctx, id)
	if err != nil {
		return nil, err
	}
	if o.Check != nil {
		if err := o.Check(st); err != nil {
			return nil, err
		}
	}
	key := st.BuildKey
	switch {
	case key == "":
		key = o.BuildKey
	case key != o.BuildKey:
		key = MixedBuilds
	}
	// The run's start is recorded whole: the campaign running, with its
	// build key.
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("open campaign %d: %w", id, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE campaigns SET status = ? WHERE id = ?`, StatusRunning, id); err != nil {
		return nil, fmt.Errorf("open campaign %d: set status: %w", id, err)
	}
	if key != st.BuildKey {
		if _, err := tx.ExecContext(ctx, upsertBlob, id, blobBuild, []byte(key), time.Now().UnixNano()); err != nil {
			return nil, fmt.Errorf("open campaign %d: put build key: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("open campaign %d: %w", id, err)
	}
	st.BuildKey, st.Campaign.Status = key, StatusRunning
	return st, nil
}
