package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gofault/gofault/catalog"
	"github.com/gofault/gofault/record"
)

// SaveTrial writes a trial with its injections, nodes and verdicts in one
// transaction: after a crash the trial is either complete or absent. A trial
// without ID gets record.TrialID(campaignID, t.Index) (written back to t.ID).
// Saving a trial ID again replaces the earlier record.
func (s *Store) SaveTrial(ctx context.Context, campaignID int64, t *record.Trial) (err error) {
	if t.ID == "" {
		t.ID = record.TrialID(campaignID, t.Index)
	}
	client, err := jsonText(t.Client)
	if err != nil {
		return fmt.Errorf("save trial %s: %w", t.ID, err)
	}
	states, err := jsonText(t.States)
	if err != nil {
		return fmt.Errorf("save trial %s: %w", t.ID, err)
	}
	timeouts, err := jsonText(t.Timeouts)
	if err != nil {
		return fmt.Errorf("save trial %s: %w", t.ID, err)
	}
	reached, err := jsonText(t.Reached)
	if err != nil {
		return fmt.Errorf("save trial %s: %w", t.ID, err)
	}
	roles, err := jsonText(t.Roles)
	if err != nil {
		return fmt.Errorf("save trial %s: %w", t.ID, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save trial %s: %w", t.ID, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	// Replace an earlier record of the same trial; children go by cascade.
	if _, err = tx.ExecContext(ctx, `DELETE FROM trials WHERE id = ?`, t.ID); err != nil {
		return fmt.Errorf("save trial %s: %w", t.ID, err)
	}
	if _, err = tx.ExecContext(ctx, `INSERT INTO trials
		(id, campaign_id, idx, campaign, policy, seed, start, end, status, err, dir, requests, client, states, timeouts, reached, roles,
		blocks, new_blocks, choice, why)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, campaignID, t.Index, t.Campaign, t.Policy, t.Seed, nanos(t.Start), nanos(t.End), t.Status, t.Err, t.Dir,
		t.Requests, client, states, timeouts, reached, roles, t.Blocks, t.NewBlocks, t.Choice, t.Why); err != nil {
		return fmt.Errorf("save trial %s: %w", t.ID, err)
	}
	if len(t.Injections) > 0 {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO injections
			(trial_id, seq, time, node, site, site_id, kind, error, delay, stack, occurrence, task, inst, state, state_id, role, observer, peer, side,
			until, cap, met)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return fmt.Errorf("save trial %s: %w", t.ID, err)
		}
		defer stmt.Close()
		for i, in := range t.Injections {
			stack, err := jsonText(in.Stack)
			if err != nil {
				return fmt.Errorf("save trial %s: %w", t.ID, err)
			}
			side, err := jsonText(in.Side)
			if err != nil {
				return fmt.Errorf("save trial %s: %w", t.ID, err)
			}
			if _, err := stmt.ExecContext(ctx, t.ID, i, nanos(in.Time), in.Node, in.Site, in.SiteID, in.Kind.String(), in.Error,
				int64(in.Delay), stack, in.Occurrence, in.Task, int64(in.Inst), in.State, in.StateID, in.Role, in.Observer, in.Peer, side,
				in.Until, int64(in.Cap), in.Met); err != nil {
				return fmt.Errorf("save trial %s injection %d: %w", t.ID, i, err)
			}
		}
	}
	for i, n := range t.Nodes {
		restarted, err := jsonText(n.Restarted)
		if err != nil {
			return fmt.Errorf("save trial %s node %s: %w", t.ID, n.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO nodes
			(trial_id, seq, name, pid, exited, exit_time, exit_code, signal, killed, restarts, log, restart_err, restarted)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, i, n.Name, n.PID, n.Exited, nanos(n.ExitTime), n.ExitCode, n.Signal, n.Killed, n.Restarts, n.Log, n.RestartErr, restarted); err != nil {
			return fmt.Errorf("save trial %s node %s: %w", t.ID, n.Name, err)
		}
	}
	for i, v := range t.Verdicts {
		evidence, err := jsonText(v.Evidence)
		if err != nil {
			return fmt.Errorf("save trial %s: %w", t.ID, err)
		}
		nodes, err := jsonText(v.Nodes)
		if err != nil {
			return fmt.Errorf("save trial %s: %w", t.ID, err)
		}
		symptoms, err := jsonText(v.Symptoms)
		if err != nil {
			return fmt.Errorf("save trial %s: %w", t.ID, err)
		}
		dismissed, err := jsonText(v.Dismissed)
		if err != nil {
			return fmt.Errorf("save trial %s: %w", t.ID, err)
		}
		lasting, err := jsonText(v.Lasting)
		if err != nil {
			return fmt.Errorf("save trial %s: %w", t.ID, err)
		}
		before, err := jsonText(v.BeforeFaults)
		if err != nil {
			return fmt.Errorf("save trial %s: %w", t.ID, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO verdicts
			(trial_id, seq, checker, failed, symptom, evidence, nodes, symptoms, dismissed, lasting, before_faults, unknown) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, i, v.Checker, v.Failed, v.Symptom, evidence, nodes, symptoms, dismissed, lasting, before, v.Unknown); err != nil {
			return fmt.Errorf("save trial %s verdict %s: %w", t.ID, v.Checker, err)
		}
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("save trial %s: %w", t.ID, err)
	}
	return nil
}

// Trial returns the trial with the given ID, or ErrNotFound.
func (s *Store) Trial(ctx context.Context, id string) (*record.Trial, error) {
	ts, err := s.loadTrials(ctx, "t.id = ?", id)
	if err != nil {
		return nil, fmt.Errorf("trial %s: %w", id, err)
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("trial %s: %w", id, ErrNotFound)
	}
	return ts[0], nil
}

// Trials returns a campaign's trials in index order.
func (s *Store) Trials(ctx context.Context, campaignID int64) ([]*record.Trial, error) {
	ts, err := s.loadTrials(ctx, "t.campaign_id = ?", campaignID)
	if err != nil {
		return nil, fmt.Errorf("trials of campaign %d: %w", campaignID, err)
	}
	return ts, nil
}

// FailedTrials returns a campaign's trials whose status is "failed" (some
// verdict failed), in index order.
func (s *Store) FailedTrials(ctx context.Context, campaignID int64) ([]*record.Trial, error) {
	ts, err := s.loadTrials(ctx, "t.campaign_id = ? AND t.status = ?", campaignID, record.StatusFailed)
	if err != nil {
		return nil, fmt.Errorf("failed trials of campaign %d: %w", campaignID, err)
	}
	return ts, nil
}

// TrialIndexes returns the indexes of a campaign's saved trials in order,
// so a resumed campaign can skip them.
func (s *Store) TrialIndexes(ctx context.Context, campaignID int64) ([]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT idx FROM trials WHERE campaign_id = ? ORDER BY idx`, campaignID)
	if err != nil {
		return nil, fmt.Errorf("trial indexes of campaign %d: %w", campaignID, err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var i int
		if err := rows.Scan(&i); err != nil {
			return nil, fmt.Errorf("trial indexes of campaign %d: %w", campaignID, err)
		}
		out = append(out, i)
	}
	return out, rows.Err()
}

// TrialsRun returns how many trials each campaign ran, for the campaigns
// that ran any: trials that could not run (record.StatusError) are not
// counted; trials the workload could not judge (record.StatusNotJudged)
// ran, and are.
func (s *Store) TrialsRun(ctx context.Context) (map[int64]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT campaign_id, COUNT(*) FROM trials WHERE status != ? GROUP BY campaign_id`, string(record.StatusError))
	if err != nil {
		return nil, fmt.Errorf("count trials: %w", err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("count trials: %w", err)
		}
		out[id] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count trials: %w", err)
	}
	return out, nil
}

// loadTrials loads the trials matching where (over alias t of trials) with
// all their parts, in one read transaction.
func (s *Store) loadTrials(ctx context.Context, where string, args ...any) ([]*record.Trial, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	var out []*record.Trial
	byID := map[string]*record.Trial{}
	err = query(ctx, tx, `SELECT t.id, t.idx, t.campaign, t.policy, t.seed, t.start, t.end, t.status, t.err, t.dir,
		t.requests, t.client, t.states, t.timeouts, t.reached, t.roles, t.blocks, t.new_blocks, t.choice, t.why FROM trials t WHERE `+where+` ORDER BY t.campaign_id, t.idx`, args,
		func(r *sql.Rows) error {
			var t record.Trial
			var start, end int64
			var client, states, timeouts, reached, roles string
			if err := r.Scan(&t.ID, &t.Index, &t.Campaign, &t.Policy, &t.Seed, &start, &end, &t.Status, &t.Err, &t.Dir,
				&t.Requests, &client, &states, &timeouts, &reached, &roles, &t.Blocks, &t.NewBlocks, &t.Choice, &t.Why); err != nil {
				return err
			}
			t.Start, t.End = fromNanos(start), fromNanos(end)
			if err := errors.Join(fromJSON(client, &t.Client), fromJSON(states, &t.States), fromJSON(timeouts, &t.Timeouts),
				fromJSON(reached, &t.Reached), fromJSON(roles, &t.Roles)); err != nil {
				return fmt.Errorf("trial %s: %w", t.ID, err)
			}
			out = append(out, &t)
			byID[t.ID] = &t
			return nil
		})
	if err != nil || len(out) == 0 {
		return out, err
	}
	err = query(ctx, tx, `SELECT i.trial_id, i.time, i.node, i.site, i.site_id, i.kind, i.error, i.delay, i.stack,
		i.occurrence, i.task, i.inst, i.state, i.state_id, i.role, i.observer, i.peer, i.side, i.until, i.cap, i.met FROM injections i JOIN trials t ON t.id = i.trial_id
		WHERE `+where+` ORDER BY i.trial_id, i.seq`, args,
		func(r *sql.Rows) error {
			var id, stack, kind, side string
			var in record.Injection
			var tm, delay, inst, capped int64
			if err := r.Scan(&id, &tm, &in.Node, &in.Site, &in.SiteID, &kind, &in.Error, &delay, &stack,
				&in.Occurrence, &in.Task, &inst, &in.State, &in.StateID, &in.Role, &in.Observer, &in.Peer, &side,
				&in.Until, &capped, &in.Met); err != nil {
				return err
			}
			in.Cap = durationOf(capped)
			var err error
			if in.Kind, err = catalog.ParseKind(kind); err != nil {
				return fmt.Errorf("trial %s injection: %w", id, err)
			}
			in.Time, in.Inst = fromNanos(tm), uint64(inst)
			in.Delay = durationOf(delay)
			if err := fromJSON(stack, &in.Stack); err != nil {
				return fmt.Errorf("trial %s injection stack: %w", id, err)
			}
			if err := fromJSON(side, &in.Side); err != nil {
				return fmt.Errorf("trial %s injection side: %w", id, err)
			}
			if t := byID[id]; t != nil {
				t.Injections = append(t.Injections, in)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	err = query(ctx, tx, `SELECT n.trial_id, n.name, n.pid, n.exited, n.exit_time, n.exit_code, n.signal, n.killed,
		n.restarts, n.log, n.restart_err, n.restarted FROM nodes n JOIN trials t ON t.id = n.trial_id WHERE `+where+` ORDER BY n.trial_id, n.seq`, args,
		func(r *sql.Rows) error {
			var id, restarted string
			var n record.Node
			var exitTime int64
			if err := r.Scan(&id, &n.Name, &n.PID, &n.Exited, &exitTime, &n.ExitCode, &n.Signal, &n.Killed,
				&n.Restarts, &n.Log, &n.RestartErr, &restarted); err != nil {
				return err
			}
			if err := fromJSON(restarted, &n.Restarted); err != nil {
				return fmt.Errorf("node %s of trial %s: restarted: %w", n.Name, id, err)
			}
			n.ExitTime = fromNanos(exitTime)
			if t := byID[id]; t != nil {
				t.Nodes = append(t.Nodes, n)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	err = query(ctx, tx, `SELECT v.trial_id, v.checker, v.failed, v.symptom, v.evidence, v.nodes, v.symptoms, v.dismissed, v.lasting, v.before_faults, v.unknown
		FROM verdicts v JOIN trials t ON t.id = v.trial_id WHERE `+where+` ORDER BY v.trial_id, v.seq`, args,
		func(r *sql.Rows) error {
			var id, evidence, nodes, symptoms, dismissed, lasting, before string
			var v record.Verdict
			if err := r.Scan(&id, &v.Checker, &v.Failed, &v.Symptom, &evidence, &nodes, &symptoms, &dismissed, &lasting, &before, &v.Unknown); err != nil {
				return err
			}
			if err := errors.Join(fromJSON(evidence, &v.Evidence), fromJSON(nodes, &v.Nodes), fromJSON(symptoms, &v.Symptoms),
				fromJSON(dismissed, &v.Dismissed), fromJSON(lasting, &v.Lasting), fromJSON(before, &v.BeforeFaults)); err != nil {
				return fmt.Errorf("trial %s verdict %s: %w", id, v.Checker, err)
			}
			if t := byID[id]; t != nil {
				t.Verdicts = append(t.Verdicts, v)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func query(ctx context.Context, tx *sql.Tx, q string, args []any, each func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// jsonText encodes v as JSON text; nil slices encode as "null" and decode
// back to nil.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func fromJSON(s string, v any) error {
	if s == "" || s == "null" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}
