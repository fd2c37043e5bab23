package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
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
