package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrInvalidToken means a worker token is malformed, unknown or revoked.
// Callers answer all three alike, so a token's state is not told to
// whoever holds it.
var ErrInvalidToken = errors.New("invalid worker token")

// TokenPrefix starts every worker token, so a leaked one is recognisable
// (and scrubbable) for what it is.
const TokenPrefix = "tcw_"

const (
	tokenBytes   = 32 // the secret: 256 random bits
	tokenIDBytes = 5  // the public id: 8 base32 characters
)

// tokenEncoding writes tokens and ids in lower-case base32 without padding:
// no character needs quoting in a header, a shell or a URL.
var tokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// tokenLen is the length of a well-formed token.
var tokenLen = len(TokenPrefix) + tokenEncoding.EncodedLen(tokenBytes)

// Worker is a registered worker: its name, its file and the last good
// parse of that file, as JSON opaque to the store.
type Worker struct {
	Name       string          `json:"name"`
	Path       string          `json:"path"`
	Definition json.RawMessage `json:"definition"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
}

// WorkerToken describes one token of a worker, never its secret.
type WorkerToken struct {
	ID        string    `json:"id"`
	Worker    string    `json:"worker"`
	CreatedAt time.Time `json:"created_at"`
	RevokedAt time.Time `json:"revoked_at,omitzero"` // zero while valid
}

// RegisterWorker stores w as a new worker and issues its first token in
// the same transaction, so no worker exists without a token shown to the
// person who registered it. The token's plaintext is returned here and
// nowhere else: the store keeps its SHA-256 only. A name already taken
// gives ErrConflict; a missing name or path, or a definition that is not
// JSON, ErrInvalid.
func (s *Store) RegisterWorker(ctx context.Context, w *Worker) (token string, tokenID string, err error) {
	if w.Name == "" || w.Path == "" {
		return "", "", fmt.Errorf("store: register worker: %w: name and path are required", ErrInvalid)
	}
	def, err := workerDefinition(w.Definition)
	if err != nil {
		return "", "", fmt.Errorf("store: register worker %q: %w", w.Name, err)
	}
	now := s.now()
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return "", "", fmt.Errorf("store: register worker %q: %w", w.Name, err)
	}
	defer rollback(tx)
	_, err = tx.ExecContext(ctx, `INSERT INTO workers (name, path, definition, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?)`, w.Name, w.Path, string(def), now.UnixNano(), now.UnixNano())
	if isConstraint(err) {
		return "", "", fmt.Errorf("store: register worker %q: %w", w.Name, ErrConflict)
	}
	if err != nil {
		return "", "", fmt.Errorf("store: register worker %q: %w", w.Name, err)
	}
	token, tokenID, err = insertToken(ctx, tx, w.Name, now)
	if err != nil {
		return "", "", fmt.Errorf("store: register worker %q: %w", w.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return "", "", fmt.Errorf("store: register worker %q: %w", w.Name, err)
	}
	w.Definition, w.CreatedAt, w.UpdatedAt = def, now, now
	return token, tokenID, nil
}

// UpdateWorker replaces the stored definition (the last good parse) of the
// worker called name, or returns ErrNotFound.
func (s *Store) UpdateWorker(ctx context.Context, name string, definition json.RawMessage) error {
	def, err := workerDefinition(definition)
	if err != nil {
		return fmt.Errorf("store: update worker %q: %w", name, err)
	}
	res, err := s.wdb.ExecContext(ctx, `UPDATE workers SET definition = ?, updated_at = ? WHERE name = ?`,
		string(def), s.now().UnixNano(), name)
	if err := affectedOne(res, err); err != nil {
		return fmt.Errorf("store: update worker %q: %w", name, err)
	}
	return nil
}

// GetWorker returns the worker called name, or ErrNotFound.
func (s *Store) GetWorker(ctx context.Context, name string) (*Worker, error) {
	w, err := scanWorker(s.rdb.QueryRowContext(ctx, selectWorker+` WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: worker %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get worker %q: %w", name, err)
	}
	return w, nil
}

// ListWorkers returns every worker, ordered by name.
func (s *Store) ListWorkers(ctx context.Context) ([]*Worker, error) {
	rows, err := s.rdb.QueryContext(ctx, selectWorker+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: list workers: %w", err)
	}
	defer rows.Close()
	list := []*Worker{}
	for rows.Next() {
		w, err := scanWorker(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list workers: %w", err)
		}
		list = append(list, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list workers: %w", err)
	}
	return list, nil
}

// DeleteWorker removes the worker called name and every token it had, or
// returns ErrNotFound. The audit log keeps the name in its records.
//
// Its agent's approvals end with it, in the same transaction: approvals
// for good go, allowed ones not used yet count as used, pending ones
// expire, so a worker registered
// again under the name (another agent, perhaps other tools) never runs on
// what a person allowed the removed one.
func (s *Store) DeleteWorker(ctx context.Context, name string) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: delete worker %q: %w", name, err)
	}
	defer rollback(tx)
	res, err := tx.ExecContext(ctx, `DELETE FROM workers WHERE name = ?`, name)
	if err := affectedOne(res, err); err != nil {
		return fmt.Errorf("store: delete worker %q: %w", name, err)
	}
	if err := retireApprovals(ctx, tx, "worker", name, s.now(), DecidedByWorkerGone); err != nil {
		return fmt.Errorf("store: delete worker %q: %w", name, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM always_approvals WHERE worker = ?`, name); err != nil {
		return fmt.Errorf("store: delete worker %q: approvals for good: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: delete worker %q: %w", name, err)
	}
	return nil
}

// DecidedByWorkerGone is the decided_by of an approval that expired
// because its worker was removed.
const DecidedByWorkerGone = "worker-removed"

const selectWorker = `SELECT name, path, definition, created_at, updated_at FROM workers`

func scanWorker(r rowScanner) (*Worker, error) {
	var (
		w                Worker
		def              string
		created, updated sql.NullInt64
	)
	if err := r.Scan(&w.Name, &w.Path, &def, &created, &updated); err != nil {
		return nil, err
	}
	w.Definition = json.RawMessage(def)
	w.CreatedAt, w.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &w, nil
}

// IssueWorkerToken adds a token to the worker called name (ErrNotFound if
// there is none), leaving its other tokens valid: one per agent, say. The
// plaintext is returned once and never stored.
func (s *Store) IssueWorkerToken(ctx context.Context, name string) (token string, tokenID string, err error) {
	err = s.inWorkerTx(ctx, name, func(tx *sql.Tx, now time.Time) error {
		token, tokenID, err = insertToken(ctx, tx, name, now)
		return err
	})
	if err != nil {
		return "", "", fmt.Errorf("store: issue token for worker %q: %w", name, err)
	}
	return token, tokenID, nil
}

// RotateWorkerToken revokes every valid token of the worker called name
// and issues a new one, in one transaction: from its commit on, the old
// tokens are refused.
func (s *Store) RotateWorkerToken(ctx context.Context, name string) (token string, tokenID string, err error) {
	err = s.inWorkerTx(ctx, name, func(tx *sql.Tx, now time.Time) error {
		if _, err := revokeTokens(ctx, tx, name, now); err != nil {
			return err
		}
		token, tokenID, err = insertToken(ctx, tx, name, now)
		return err
	})
	if err != nil {
		return "", "", fmt.Errorf("store: rotate token of worker %q: %w", name, err)
	}
	return token, tokenID, nil
}

// RevokeWorkerTokens revokes every valid token of the worker called name
// and returns how many it revoked; the worker stays registered, and no
// agent can act as it until a token is issued.
func (s *Store) RevokeWorkerTokens(ctx context.Context, name string) (int, error) {
	var n int
	err := s.inWorkerTx(ctx, name, func(tx *sql.Tx, now time.Time) error {
		var err error
		n, err = revokeTokens(ctx, tx, name, now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: revoke tokens of worker %q: %w", name, err)
	}
	return n, nil
}

// RevokeWorkerToken revokes the token with the public id, or returns
// ErrNotFound if there is no such valid token.
func (s *Store) RevokeWorkerToken(ctx context.Context, id string) error {
	res, err := s.wdb.ExecContext(ctx, `UPDATE worker_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`,
		s.now().UnixNano(), id)
	if err := affectedOne(res, err); err != nil {
		return fmt.Errorf("store: revoke worker token %q: %w", id, err)
	}
	return nil
}

// ListWorkerTokens returns the tokens of the worker called name, valid and
// revoked, oldest first; never their secrets or hashes.
func (s *Store) ListWorkerTokens(ctx context.Context, name string) ([]WorkerToken, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT id, worker, created_at, revoked_at FROM worker_tokens
		WHERE worker = ? ORDER BY created_at, id`, name)
	if err != nil {
		return nil, fmt.Errorf("store: list tokens of worker %q: %w", name, err)
	}
	defer rows.Close()
	list := []WorkerToken{}
	for rows.Next() {
		var (
			t                WorkerToken
			created, revoked sql.NullInt64
		)
		if err := rows.Scan(&t.ID, &t.Worker, &created, &revoked); err != nil {
			return nil, fmt.Errorf("store: list tokens of worker %q: %w", name, err)
		}
		t.CreatedAt, t.RevokedAt = fromNanos(created), fromNanos(revoked)
		list = append(list, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list tokens of worker %q: %w", name, err)
	}
	return list, nil
}

// Authenticate returns the worker a token belongs to and the token's
// public id, or ErrInvalidToken for a token that is malformed, unknown or
// revoked.
//
// The token is found by its SHA-256. Looking up by hash is safe against
// timing: what an index search can leak is how the hash of a guess
// compares with stored hashes, and knowing bits of the hash of a 256-bit
// random secret brings no one closer to the secret. The final comparison
// is constant-time all the same, so the check itself never depends on
// where two hashes first differ.
func (s *Store) Authenticate(ctx context.Context, token string) (worker string, tokenID string, err error) {
	if len(token) != tokenLen || !strings.HasPrefix(token, TokenPrefix) {
		return "", "", ErrInvalidToken
	}
	sum := sha256.Sum256([]byte(token))
	var (
		hash    []byte
		revoked sql.NullInt64
	)
	err = s.rdb.QueryRowContext(ctx, `SELECT id, worker, hash, revoked_at FROM worker_tokens WHERE hash = ?`, sum[:]).
		Scan(&tokenID, &worker, &hash, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", ErrInvalidToken
	}
	if err != nil {
		return "", "", fmt.Errorf("store: authenticate: %w", err)
	}
	if subtle.ConstantTimeCompare(hash, sum[:]) != 1 || revoked.Valid {
		return "", "", ErrInvalidToken
	}
	return worker, tokenID, nil
}

// inWorkerTx runs fn in a write transaction after checking that the worker
// called name exists (ErrNotFound otherwise).
func (s *Store) inWorkerTx(ctx context.Context, name string, fn func(*sql.Tx, time.Time) error) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM workers WHERE name = ?`, name).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	if err := fn(tx, s.now()); err != nil {
		return err
	}
	return tx.Commit()
}

// insertToken makes a new token for worker and stores its hash.
func insertToken(ctx context.Context, tx *sql.Tx, worker string, now time.Time) (token, id string, err error) {
	secret := make([]byte, tokenBytes)
	idBytes := make([]byte, tokenIDBytes)
	_, _ = rand.Read(secret) // never fails (crypto/rand, Go 1.24+)
	_, _ = rand.Read(idBytes)
	token = TokenPrefix + tokenEncoding.EncodeToString(secret)
	id = tokenEncoding.EncodeToString(idBytes)
	sum := sha256.Sum256([]byte(token))
	_, err = tx.ExecContext(ctx, `INSERT INTO worker_tokens (id, worker, hash, created_at) VALUES (?, ?, ?, ?)`,
		id, worker, sum[:], now.UnixNano())
	if isConstraint(err) { // 40 random bits of id collided: vanishingly rare
		return "", "", fmt.Errorf("token id %q: %w", id, ErrConflict)
	}
	if err != nil {
		return "", "", err
	}
	return token, id, nil
}

// revokeTokens revokes worker's valid tokens and counts them.
func revokeTokens(ctx context.Context, tx *sql.Tx, worker string, now time.Time) (int, error) {
	res, err := tx.ExecContext(ctx, `UPDATE worker_tokens SET revoked_at = ? WHERE worker = ? AND revoked_at IS NULL`,
		now.UnixNano(), worker)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// workerDefinition checks that b is JSON and compacts it for storage.
func workerDefinition(b json.RawMessage) (json.RawMessage, error) {
	c, err := compactJSON(b)
	if err != nil || c == nil {
		return nil, fmt.Errorf("%w: definition is not JSON", ErrInvalid)
	}
	return c, nil
}

// AddWorkerTool records that the agent of the worker called name made the
// tool called tool, which makes it one of the worker's tools. Recording
// it twice is harmless; an unknown worker gives ErrNotFound.
func (s *Store) AddWorkerTool(ctx context.Context, name, tool string) error {
	err := s.inWorkerTx(ctx, name, func(tx *sql.Tx, now time.Time) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO worker_tools (worker, tool, created_at) VALUES (?, ?, ?)
			ON CONFLICT (worker, tool) DO NOTHING`, name, tool, now.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("store: add tool %q to worker %q: %w", tool, name, err)
	}
	return nil
}

// WorkerTools lists the tools the agent of the worker called name made,
// by name; the tools themselves may have been deleted since.
func (s *Store) WorkerTools(ctx context.Context, name string) ([]string, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT tool FROM worker_tools WHERE worker = ? ORDER BY tool`, name)
	if err != nil {
		return nil, fmt.Errorf("store: worker %q tools: %w", name, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("store: worker %q tools: %w", name, err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: worker %q tools: %w", name, err)
	}
	return out, nil
}
