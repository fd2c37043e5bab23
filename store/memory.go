package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// PastInjection is one injection of a stored fault trial, with the
// trial's ID and how it ended: what a campaign's memory of its earlier
// campaigns is made of (policy.Memory). Only the fields that name the
// fault are read (site, kind, error, delay, role, side, hold).
type PastInjection struct {
	Trial     string
	Status    record.Status
	Injection record.Injection
}

// PastInjections returns the injections of the trials of the campaigns
// ids, in trial and injection order; none for no ids.
func (s *Store) PastInjections(ctx context.Context, ids []int64) ([]PastInjection, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read past injections: %w", err)
	}
	defer tx.Rollback()
	var out []PastInjection
	err = query(ctx, tx, `SELECT t.id, t.status, i.site_id, i.kind, i.error, i.delay, i.role, i.side, i.until, i.cap
		FROM injections i JOIN trials t ON t.id = i.trial_id
		WHERE t.campaign_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`) ORDER BY t.campaign_id, t.idx, i.seq`, args,
		func(r *sql.Rows) error {
			var p PastInjection
			var kind, side string
			var delay, capped int64
			in := &p.Injection
			if err := r.Scan(&p.Trial, &p.Status, &in.SiteID, &kind, &in.Error, &delay, &in.Role, &side, &in.Until, &capped); err != nil {
				return err
			}
			var err error
			if in.Kind, err = catalog.ParseKind(kind); err != nil {
				return fmt.Errorf("trial %s injection: %w", p.Trial, err)
			}
			in.Delay, in.Cap = durationOf(delay), durationOf(capped)
			if err := fromJSON(side, &in.Side); err != nil {
				return fmt.Errorf("trial %s injection side: %w", p.Trial, err)
			}
			out = append(out, p)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("read past injections: %w", err)
	}
	return out, nil
}

// Forget makes the memory of the campaigns of target name and release
// family start afresh: the campaigns stored so far are forgotten
// (Forgotten returns the newest of them). It returns that campaign, 0
// when there was none.
func (s *Store) Forget(ctx context.Context, name, family string) (int64, error) {
	var last sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(id) FROM campaigns`).Scan(&last); err != nil {
		return 0, fmt.Errorf("forget %s %s: %w", name, family, err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO memory_resets (name, family, campaign, at) VALUES (?, ?, ?, ?)`,
		name, family, last.Int64, nanos(time.Now())); err != nil {
		return 0, fmt.Errorf("forget %s %s: %w", name, family, err)
	}
	return last.Int64, nil
}

// Forgotten returns the newest campaign whose memory Forget reset for
// target name and family: the memory holds only later campaigns; 0 when
// it was never reset.
func (s *Store) Forgotten(ctx context.Context, name, family string) (int64, error) {
	var last sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(campaign) FROM memory_resets WHERE name = ? AND family = ?`, name, family).Scan(&last); err != nil {
		return 0, fmt.Errorf("read memory reset of %s %s: %w", name, family, err)
	}
	return last.Int64, nil
}
