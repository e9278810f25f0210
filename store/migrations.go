package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// migrations are the schema, in order: migrations[i] brings the database to
// version i+1. Never edit or reorder an entry that has shipped; append a new
// one. Each runs in its own transaction together with its schema_migrations
// row, so a migration is applied entirely or not at all.
var migrations = []string{
	// 1: tools, their versions, and the execution audit log.
	`
CREATE TABLE tools (
	name         TEXT    NOT NULL PRIMARY KEY,
	description  TEXT    NOT NULL DEFAULT '',
	kind         TEXT    NOT NULL DEFAULT '',
	category     TEXT    NOT NULL DEFAULT '',
	parameters   TEXT,                         -- JSON Schema
	permissions  TEXT    NOT NULL DEFAULT '[]', -- JSON array of strings
	secrets      TEXT    NOT NULL DEFAULT '[]', -- JSON array of strings
	approval     TEXT    NOT NULL DEFAULT '',
	isolation    TEXT    NOT NULL DEFAULT '',
	limits       TEXT,                         -- JSON object
	spec         TEXT,                         -- JSON, kind-specific
	status       TEXT    NOT NULL DEFAULT '',
	created_by   TEXT    NOT NULL DEFAULT '',
	version      INTEGER NOT NULL DEFAULT 1,
	usage_count  INTEGER NOT NULL DEFAULT 0,
	last_used_at INTEGER,                      -- Unix ns, NULL if never used
	created_at   INTEGER NOT NULL,             -- Unix ns
	updated_at   INTEGER NOT NULL              -- Unix ns
) STRICT;

CREATE TABLE tool_versions (
	tool       TEXT    NOT NULL REFERENCES tools (name) ON DELETE CASCADE ON UPDATE CASCADE,
	version    INTEGER NOT NULL,
	snapshot   TEXT    NOT NULL, -- JSON of the definition fields
	created_at INTEGER NOT NULL, -- Unix ns
	PRIMARY KEY (tool, version)
) STRICT, WITHOUT ROWID;

-- No foreign key to tools: the audit log outlives the tools it records.
CREATE TABLE executions (
	id           TEXT    NOT NULL PRIMARY KEY,
	tool         TEXT    NOT NULL,
	version      INTEGER NOT NULL DEFAULT 0,
	caller_id    TEXT    NOT NULL DEFAULT '',
	caller_type  TEXT    NOT NULL DEFAULT '',
	worker       TEXT    NOT NULL DEFAULT '',
	arguments    TEXT,                   -- JSON, scrubbed by the caller
	outcome      TEXT    NOT NULL DEFAULT '',
	error_code   TEXT    NOT NULL DEFAULT '',
	limit_name   TEXT    NOT NULL DEFAULT '',
	error        TEXT    NOT NULL DEFAULT '',
	duration_ns  INTEGER NOT NULL DEFAULT 0,
	output_bytes INTEGER NOT NULL DEFAULT 0,
	started_at   INTEGER,                -- Unix ns
	finished_at  INTEGER                 -- Unix ns
) STRICT;

CREATE INDEX executions_tool_started ON executions (tool, started_at);
CREATE INDEX executions_started ON executions (started_at);
`,
	// 2: secrets, encrypted with AES-256-GCM (see secrets.go). The name is
	// the associated data of its ciphertext; the value never appears in the
	// clear.
	`
CREATE TABLE secrets (
	name       TEXT    NOT NULL PRIMARY KEY,
	nonce      BLOB    NOT NULL,
	ciphertext BLOB    NOT NULL, -- sealed value with its GCM tag
	created_at INTEGER NOT NULL, -- Unix ns
	updated_at INTEGER NOT NULL  -- Unix ns
) STRICT;
`,
	// 3: the approval queue of calls to approval: ask tools, and the calls
	// a person approved for good (tool, version and arguments exactly).
	`
CREATE TABLE approvals (
	id          TEXT    NOT NULL PRIMARY KEY,
	tool        TEXT    NOT NULL,
	version     INTEGER NOT NULL,
	caller_id   TEXT    NOT NULL DEFAULT '',
	caller_type TEXT    NOT NULL DEFAULT '',
	args_hash   TEXT    NOT NULL,           -- sha256 hex of the canonical arguments
	args        TEXT,                       -- JSON, scrubbed by the caller
	rendered    TEXT    NOT NULL DEFAULT '', -- what would run, scrubbed
	status      TEXT    NOT NULL,           -- pending | allowed | denied | expired
	created_at  INTEGER NOT NULL,           -- Unix ns
	decided_at  INTEGER,                    -- Unix ns, NULL while pending
	decided_by  TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX approvals_status_created ON approvals (status, created_at);

CREATE TABLE always_approvals (
	tool       TEXT    NOT NULL,
	version    INTEGER NOT NULL,
	args_hash  TEXT    NOT NULL,
	created_at INTEGER NOT NULL, -- Unix ns
	PRIMARY KEY (tool, version, args_hash)
) STRICT, WITHOUT ROWID;
`,
	// 4: registered workers with the last good parse of their file, and
	// their tokens, kept only as SHA-256 hashes (see workers.go).
	`
CREATE TABLE workers (
	name       TEXT    NOT NULL PRIMARY KEY,
	path       TEXT    NOT NULL,  -- the worker file, absolute
	definition TEXT    NOT NULL,  -- JSON of the last good parse of the file
	created_at INTEGER NOT NULL,  -- Unix ns
	updated_at INTEGER NOT NULL   -- Unix ns
) STRICT;

CREATE TABLE worker_tokens (
	id         TEXT    NOT NULL PRIMARY KEY, -- public: names the token in logs and audit
	worker     TEXT    NOT NULL REFERENCES workers (name) ON DELETE CASCADE ON UPDATE CASCADE,
	hash       BLOB    NOT NULL UNIQUE,      -- SHA-256 of the token
	created_at INTEGER NOT NULL,             -- Unix ns
	revoked_at INTEGER                       -- Unix ns, NULL while valid
) STRICT;

CREATE INDEX worker_tokens_worker ON worker_tokens (worker);
`,
	// 5: the last version of each tool a person let run (active at it),
	// so a pending change can be shown against it. Tools active or
	// disabled now count as approved at their current version.
	`
ALTER TABLE tools ADD COLUMN approved_version INTEGER NOT NULL DEFAULT 0;
UPDATE tools SET approved_version = version WHERE status IN ('active', 'disabled');
`,
	// 6: the principal of every call (the worker token it came with, the
	// session label); the log of administrative acts: who decided an
	// approval, approved a tool, touched a secret, a worker or a token, and
	// who was refused trying; and the tools each worker's agent made.
	`
ALTER TABLE executions ADD COLUMN token_id TEXT NOT NULL DEFAULT '';
ALTER TABLE executions ADD COLUMN session  TEXT NOT NULL DEFAULT '';

CREATE TABLE admin_acts (
	id          TEXT    NOT NULL PRIMARY KEY,
	act         TEXT    NOT NULL,            -- e.g. secret.set, worker.add, approval.allow
	target      TEXT    NOT NULL DEFAULT '', -- what it was done to (a name or an id)
	caller_id   TEXT    NOT NULL DEFAULT '',
	caller_type TEXT    NOT NULL DEFAULT '',
	worker      TEXT    NOT NULL DEFAULT '',
	token_id    TEXT    NOT NULL DEFAULT '',
	session     TEXT    NOT NULL DEFAULT '',
	outcome     TEXT    NOT NULL,            -- ok | refused | failed
	error_code  TEXT    NOT NULL DEFAULT '',
	error       TEXT    NOT NULL DEFAULT '',
	at          INTEGER NOT NULL             -- Unix ns
) STRICT;

CREATE INDEX admin_acts_at ON admin_acts (at);

-- The tools each worker's agent made: they belong to that worker's tool set.
CREATE TABLE worker_tools (
	worker     TEXT    NOT NULL REFERENCES workers (name) ON DELETE CASCADE ON UPDATE CASCADE,
	tool       TEXT    NOT NULL,
	created_at INTEGER NOT NULL, -- Unix ns
	PRIMARY KEY (worker, tool)
) STRICT, WITHOUT ROWID;
`,
	// 7: an allowed approval is used once: by the call that waited for it,
	// or else by its caller's identical retry (same tool, version, caller,
	// worker and arguments) within the approval's validity. Approvals
	// allowed before this version count as used: their callers waited.
	// Indexes for the audit filters (worker, caller, outcome, each with a
	// time range) and for retention, which prunes by start time.
	`
ALTER TABLE approvals ADD COLUMN worker  TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN used_at INTEGER; -- Unix ns, NULL while not used
UPDATE approvals SET used_at = decided_at WHERE status = 'allowed';
CREATE INDEX approvals_unused_allowed ON approvals (tool, args_hash) WHERE status = 'allowed' AND used_at IS NULL;

CREATE INDEX executions_worker_started  ON executions (worker, started_at);
CREATE INDEX executions_caller_started  ON executions (caller_id, started_at);
CREATE INDEX executions_outcome_started ON executions (outcome, started_at);
`,
	// 8: the host paths a tool mounts (a JSON array, opaque to the store).
	`ALTER TABLE tools ADD COLUMN mounts TEXT;`,
	// 9: nested calls (a tool's code calling other tools): the call that
	// made each, so a nested call's record points at its parent's.
	`
ALTER TABLE executions ADD COLUMN parent_call_id TEXT NOT NULL DEFAULT '';
CREATE INDEX executions_parent ON executions (parent_call_id) WHERE parent_call_id != '';
`,
	// 10: each worker's state (the state toolset and utils.getState):
	// JSON values by key, gone with the worker (see state.go).
	`
CREATE TABLE worker_state (
	worker     TEXT    NOT NULL REFERENCES workers (name) ON DELETE CASCADE ON UPDATE CASCADE,
	key        TEXT    NOT NULL,
	value      TEXT    NOT NULL, -- JSON, compacted
	updated_at INTEGER NOT NULL, -- Unix ns
	PRIMARY KEY (worker, key)
) STRICT, WITHOUT ROWID;
`,
	// 11: who disabled a disabled tool: 'llm' when an agent did (it may
	// enable the tool again), a person otherwise ('' for tools disabled
	// before this version: counted as a person's, failing closed).
	`ALTER TABLE tools ADD COLUMN disabled_by TEXT NOT NULL DEFAULT '';`,
	// 12: approvals are keyed by the worker a call came through and the
	// hash of the tool's definition, not by its version alone (toolset and
	// tool-file tools are always version 1, and two workers' tools may
	// share a name). An approval for good from before has neither: it is
	// kept with an empty definition hash, which no lookup matches, and so
	// is an approval row's (UseAllowedApproval requires the hash).
	`
ALTER TABLE approvals ADD COLUMN def_hash TEXT NOT NULL DEFAULT '';
CREATE TABLE always_approvals_keyed (
	tool       TEXT    NOT NULL,
	worker     TEXT    NOT NULL, -- '' for a call through no worker
	def_hash   TEXT    NOT NULL, -- '' for a row from before: it matches nothing
	args_hash  TEXT    NOT NULL,
	version    INTEGER NOT NULL, -- what the person approved, for the record
	created_at INTEGER NOT NULL, -- Unix ns
	PRIMARY KEY (tool, worker, def_hash, args_hash)
) STRICT, WITHOUT ROWID;
INSERT OR IGNORE INTO always_approvals_keyed (tool, worker, def_hash, args_hash, version, created_at)
	SELECT tool, '', '', args_hash, version, created_at FROM always_approvals;
DROP TABLE always_approvals;
ALTER TABLE always_approvals_keyed RENAME TO always_approvals;
CREATE INDEX always_approvals_worker ON always_approvals (worker) WHERE worker != '';
`,
	// 13: what a parked call would change in a file (the diff a person
	// approves), scrubbed; '' for other calls and approvals from before.
	`ALTER TABLE approvals ADD COLUMN change TEXT NOT NULL DEFAULT '';`,
}

// migrate brings db up to len(list) by applying, each in one transaction, the
// entries of list the schema_migrations table does not record yet. It refuses
// a database whose schema is newer than list. db's transactions must take the
// write lock at BEGIN (BEGIN IMMEDIATE), which makes the version check inside
// each transaction safe against another process migrating the same file.
func migrate(ctx context.Context, db *sql.DB, list []string, now time.Time) error {
	_, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER NOT NULL PRIMARY KEY,
	applied_at INTEGER NOT NULL -- Unix ns
) STRICT`)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	cur, err := schemaVersion(ctx, db)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if cur > len(list) {
		return fmt.Errorf("migrate: database schema version %d is newer than this program's %d", cur, len(list))
	}
	for v := cur + 1; v <= len(list); v++ {
		if err := applyMigration(ctx, db, v, list[v-1], now); err != nil {
			return fmt.Errorf("migrate to version %d: %w", v, err)
		}
	}
	return nil
}

// schemaVersion is the highest applied migration, 0 for a new database.
func schemaVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

func applyMigration(ctx context.Context, db *sql.DB, v int, stmts string, now time.Time) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	cur, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	if cur >= v { // another process got here first
		return tx.Commit()
	}
	if _, err := tx.ExecContext(ctx, stmts); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, now.UnixNano()); err != nil {
		return err
	}
	return tx.Commit()
}

// rollback ends tx if Commit was not reached. Its error is dropped: the error
// that made the caller skip Commit is the one worth returning, and after a
// Commit it is only sql.ErrTxDone.
func rollback(tx *sql.Tx) { _ = tx.Rollback() }
