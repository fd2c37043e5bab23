// Package store keeps a campaign's records — campaigns, trials, injections,
// verdicts, node records with their log paths, and per-campaign blobs such as
// policy state — in an embedded SQLite database (modernc.org/sqlite, no cgo).
//
// Every trial is written in one transaction, so a killed gofault leaves each
// trial either complete or absent, and a campaign can be resumed from what
// the database holds.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// ErrNotFound is returned when a campaign, trial or blob does not exist.
var ErrNotFound = errors.New("not found")

// BusyTimeout is how long a writer waits for another writer's lock before
// failing with SQLITE_BUSY.
const BusyTimeout = 10 * time.Second

// Store is an open gofault database. It is safe for concurrent use by
// several goroutines (parallel trials) and several processes.
type Store struct {
	db   *sql.DB
	path string
}

// Open opens the database at path, creating it and its directory if needed,
// migrates its schema to the current version and checks it (SQLite's
// quick_check): a damaged database is an error, never read as an empty or
// partial one. The database uses WAL journaling, foreign keys and a busy
// timeout.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open store: empty path")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &Store{db: db, path: path}
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := s.quickCheck(context.Background()); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w; keep the file for inspection and set store.db (or --db) to a new one", path, err)
	}
	return s, nil
}

// sqliteHeader starts every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// OpenExisting opens a gofault database that must already exist, as Open
// does, for commands that read a campaign (report, replay): a missing or
// empty file, a file that is not SQLite, and another program's SQLite
// database are refused before anything is written to them.
func OpenExisting(path string) (*Store, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("no gofault database at %s: %w", path, err)
	}
	head := make([]byte, len(sqliteHeader))
	n, _ := io.ReadFull(f, head)
	f.Close()
	switch {
	case n == 0:
		return nil, fmt.Errorf("%s is empty, not a gofault database: run a campaign first (gofault run), or name the right file with --db", path)
	case string(head[:n]) != sqliteHeader:
		return nil, fmt.Errorf("%s is not a SQLite database, so not gofault's: name the right file with --db", path)
	}
	ro, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	var version, tables int
	err = ro.QueryRow("PRAGMA user_version").Scan(&version)
	if err == nil {
		err = ro.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('campaigns', 'trials')").Scan(&tables)
	}
	ro.Close()
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if version == 0 || tables != 2 {
		return nil, fmt.Errorf("%s is a SQLite database but not gofault's (schema version %d, no campaigns and trials tables): name the right file with --db", path, version)
	}
	return Open(path)
}

// quickCheck runs SQLite's quick_check, which finds damaged pages and
// structure (not index contents) in time linear in the file's size.
func (s *Store) quickCheck(ctx context.Context) error {
	return s.pragmaCheck(ctx, "quick_check")
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// migrations are the schema versions; migration i takes user_version i to
// i+1. Append only: never edit a released migration.
var migrations = []string{
	`
CREATE TABLE campaigns (
	id          INTEGER PRIMARY KEY,
	name        TEXT    NOT NULL,
	config_hash TEXT    NOT NULL,
	policy      TEXT    NOT NULL,
	seed        INTEGER NOT NULL,
	created     INTEGER NOT NULL,
	status      TEXT    NOT NULL,
	config      TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX campaigns_find ON campaigns(name, config_hash);

CREATE TABLE trials (
	id          TEXT    PRIMARY KEY,
	campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
	idx         INTEGER NOT NULL,
	campaign    TEXT    NOT NULL,
	policy      TEXT    NOT NULL,
	seed        INTEGER NOT NULL,
	start       INTEGER NOT NULL,
	end         INTEGER NOT NULL,
	status      TEXT    NOT NULL,
	err         TEXT    NOT NULL,
	dir         TEXT    NOT NULL,
	requests    INTEGER NOT NULL,
	client      TEXT    NOT NULL, -- JSON []record.ClientEvent
	states      TEXT    NOT NULL, -- JSON []record.StateChange
	timeouts    TEXT    NOT NULL, -- JSON []record.Timeout
	UNIQUE (campaign_id, idx)
);
CREATE INDEX trials_status ON trials(campaign_id, status);

CREATE TABLE injections (
	trial_id TEXT    NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
	seq      INTEGER NOT NULL,
	time     INTEGER NOT NULL,
	node     TEXT    NOT NULL,
	site     INTEGER NOT NULL,
	site_id  TEXT    NOT NULL,
	kind     TEXT    NOT NULL,
	error    TEXT    NOT NULL,
	delay    INTEGER NOT NULL,
	stack    TEXT    NOT NULL, -- JSON []record.Frame
	task     INTEGER NOT NULL,
	inst     INTEGER NOT NULL,
	state    INTEGER NOT NULL,
	state_id TEXT    NOT NULL,
	PRIMARY KEY (trial_id, seq)
);
CREATE INDEX injections_site ON injections(site_id, kind);

CREATE TABLE verdicts (
	trial_id TEXT    NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
	seq      INTEGER NOT NULL,
	checker  TEXT    NOT NULL,
	failed   INTEGER NOT NULL,
	symptom  TEXT    NOT NULL,
	evidence TEXT    NOT NULL, -- JSON []string
	nodes    TEXT    NOT NULL, -- JSON []string
	PRIMARY KEY (trial_id, seq)
);
CREATE INDEX verdicts_failed ON verdicts(failed, checker);

CREATE TABLE nodes (
	trial_id  TEXT    NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
	seq       INTEGER NOT NULL,
	name      TEXT    NOT NULL,
	pid       INTEGER NOT NULL,
	exited    INTEGER NOT NULL,
	exit_time INTEGER NOT NULL,
	exit_code INTEGER NOT NULL,
	signal    TEXT    NOT NULL,
	killed    INTEGER NOT NULL,
	restarts  INTEGER NOT NULL,
	log       TEXT    NOT NULL,
	PRIMARY KEY (trial_id, seq)
);

CREATE TABLE blobs (
	campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
	key         TEXT    NOT NULL,
	value       BLOB    NOT NULL,
	updated     INTEGER NOT NULL,
	PRIMARY KEY (campaign_id, key)
);
`,
	// 2: the occurrence of each injection's request at its site.
	`ALTER TABLE injections ADD COLUMN occurrence INTEGER NOT NULL DEFAULT 0;`,
	// 3: why a node did not come back after a crash fault.
	`ALTER TABLE nodes ADD COLUMN restart_err TEXT NOT NULL DEFAULT '';`,
	// 4: every failing symptom of a verdict (record.Verdict.Symptoms).
	`ALTER TABLE verdicts ADD COLUMN symptoms TEXT NOT NULL DEFAULT '[]';`,
	// 5: the hang checkers' progress bound and how it was chosen.
	`ALTER TABLE campaigns ADD COLUMN progress INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN progress_how TEXT NOT NULL DEFAULT '';`,
	// 6: the node's role at each injection, the requests per site, role
	// and state, and the nodes' role changes (record.Trial.Reached and
	// Roles, JSON).
	`ALTER TABLE injections ADD COLUMN role TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN reached TEXT NOT NULL DEFAULT 'null';
ALTER TABLE trials ADD COLUMN roles TEXT NOT NULL DEFAULT 'null';`,
	// 7: the runs of gofault bench, one campaign each.
	`
CREATE TABLE bench_runs (
	bench       TEXT    NOT NULL,
	bug         TEXT    NOT NULL,
	side        TEXT    NOT NULL, -- affected or fixed
	policy      TEXT    NOT NULL,
	seed        INTEGER NOT NULL,
	campaign_id INTEGER REFERENCES campaigns(id) ON DELETE SET NULL,
	spec        TEXT    NOT NULL, -- JSON bench.Spec: a resume must match it
	status      TEXT    NOT NULL, -- running or done
	result      TEXT    NOT NULL DEFAULT '', -- JSON bench.Result once done
	updated     INTEGER NOT NULL,
	PRIMARY KEY (bench, bug, side, policy, seed)
);`,
	// 8: the coverage blocks a trial covered, and how many of them were
	// new to the campaign (record.Trial.Blocks, NewBlocks).
	`ALTER TABLE trials ADD COLUMN blocks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN new_blocks INTEGER NOT NULL DEFAULT 0;`,
	// 9: the node whose observation started a partition, when it is not
	// the cut node (record.Injection.Observer).
	`ALTER TABLE injections ADD COLUMN observer TEXT NOT NULL DEFAULT '';`,
	// 10: when each restart started the node again
	// (record.Node.Restarted, JSON).
	`ALTER TABLE nodes ADD COLUMN restarted TEXT NOT NULL DEFAULT 'null';`,
	// 11: the member a disconnect cut apart from the injection's node
	// (record.Injection.Peer).
	`ALTER TABLE injections ADD COLUMN peer TEXT NOT NULL DEFAULT '';`,
	// 12: the lines a checker dismissed by a named rule
	// (record.Verdict.Dismissed, JSON).
	`ALTER TABLE verdicts ADD COLUMN dismissed TEXT NOT NULL DEFAULT 'null';`,
	// 13: the log symptoms whose lines outlasted every fault's window
	// (record.Verdict.Lasting, JSON).
	`ALTER TABLE verdicts ADD COLUMN lasting TEXT NOT NULL DEFAULT 'null';`,
	// 14: the other members on a split's struck side
	// (record.Injection.Side, JSON).
	`ALTER TABLE injections ADD COLUMN side TEXT NOT NULL DEFAULT 'null';`,
	// 15: a held cut's condition, cap and what met it
	// (record.Injection.Until, Cap, Met).
	`ALTER TABLE injections ADD COLUMN until TEXT NOT NULL DEFAULT '';
	ALTER TABLE injections ADD COLUMN cap INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE injections ADD COLUMN met TEXT NOT NULL DEFAULT '';`,
	// 16: the technique a policy handed the trial to, and why
	// (record.Trial.Choice, Why).
	`ALTER TABLE trials ADD COLUMN choice TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN why TEXT NOT NULL DEFAULT '';`,
	// 17: where a target's memory across campaigns starts afresh
	// (Forget): the campaigns of name and family up to campaign are
	// forgotten.
	`CREATE TABLE memory_resets (
	name     TEXT    NOT NULL,
	family   TEXT    NOT NULL,
	campaign INTEGER NOT NULL,
	at       INTEGER NOT NULL
);
CREATE INDEX memory_resets_find ON memory_resets(name, family);`,
	// 18: the log symptoms whose every line came before the trial's first
	// fault (record.Verdict.BeforeFaults, JSON), and whether the checker
	// could not decide (record.Verdict.Unknown): both were dropped before.
	`ALTER TABLE verdicts ADD COLUMN before_faults TEXT NOT NULL DEFAULT 'null';
ALTER TABLE verdicts ADD COLUMN unknown INTEGER NOT NULL DEFAULT 0;`,
}

// SchemaVersion is the schema version this package writes.
var SchemaVersion = len(migrations)

func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this gofault's %d; use a newer gofault", v, len(migrations))
	}
	if v == len(migrations) {
		return nil
	}
	for ; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrate to schema version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Check runs SQLite's integrity check and returns an error describing any
// corruption it finds.
func (s *Store) Check(ctx context.Context) error {
	return s.pragmaCheck(ctx, "integrity_check")
}

// pragmaCheck runs SQLite's integrity_check or quick_check and returns an
// error describing any corruption it finds.
func (s *Store) pragmaCheck(ctx context.Context, pragma string) error {
	rows, err := s.db.QueryContext(ctx, "PRAGMA "+pragma)
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	defer rows.Close()
	var problems []error
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			return fmt.Errorf("integrity check: %w", err)
		}
		if msg != "ok" {
			problems = append(problems, errors.New(msg))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("integrity check: %w", errors.Join(problems...))
	}
	return nil
}

// nanos and fromNanos store times as Unix nanoseconds; the zero time is 0.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func durationOf(n int64) time.Duration { return time.Duration(n) }
