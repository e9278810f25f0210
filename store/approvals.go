package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Approval statuses.
const (
	ApprovalPending = "pending"
	ApprovalAllowed = "allowed"
	ApprovalDenied  = "denied"
	ApprovalExpired = "expired"
)

// Approval is one call of an approval: ask tool waiting for (or decided by)
// a person.
type Approval struct {
	ID         string `json:"id"`
	Tool       string `json:"tool"`
	Version    int    `json:"version"`
	CallerID   string `json:"caller_id,omitempty"`
	CallerType string `json:"caller_type,omitempty"`
	Worker     string `json:"worker,omitempty"` // the worker the call came through
	// DefHash is the hash of the tool's definition the call was asked
	// for under ('' on approvals from before it was kept: they match
	// no call).
	DefHash  string          `json:"def_hash,omitempty"`
	ArgsHash string          `json:"args_hash"`
	Args     json.RawMessage `json:"args,omitempty"` // already scrubbed by the caller
	Rendered string          `json:"rendered"`       // what would run, already scrubbed
	// Change is what the call would change in a file (a unified diff,
	// "new file, N bytes", "delete"), already scrubbed; "" for calls
	// that change no file.
	Change    string    `json:"change,omitempty"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	DecidedBy string    `json:"decided_by,omitempty"`
	// UsedAt is when an allowed call ran on this approval: the caller that
	// waited for it, or its retry (UseAllowedApproval). Zero while unused.
	UsedAt time.Time `json:"used_at,omitzero"`
}

// ArgsHash is the sha256 (hex) of the canonical JSON of args: decoded and
// encoded again, so key order and spacing do not matter (numbers keep
// their literal text). An empty or null args hashes like {}.
func ArgsHash(args json.RawMessage) (string, error) {
	canon := []byte("{}")
	if t := strings.TrimSpace(string(args)); t != "" && t != "null" {
		dec := json.NewDecoder(strings.NewReader(t))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return "", fmt.Errorf("%w: arguments: %v", ErrInvalid, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("%w: arguments: %v", ErrInvalid, err)
		}
		canon = b
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

const selectApproval = `SELECT id, tool, version, caller_id, caller_type, worker, def_hash, args_hash, args, rendered, change,
	status, created_at, decided_at, decided_by, used_at FROM approvals`

// CreateApproval stores a as a new approval. Its Status defaults to
// pending and CreatedAt to now; a duplicate ID gives ErrConflict.
func (s *Store) CreateApproval(ctx context.Context, a *Approval) error {
	if a.ID == "" || a.Tool == "" || a.ArgsHash == "" {
		return fmt.Errorf("store: create approval: %w: id, tool and args hash are required", ErrInvalid)
	}
	if a.Status == "" {
		a.Status = ApprovalPending
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = s.now()
	}
	var args any
	if len(a.Args) > 0 {
		if !json.Valid(a.Args) {
			return fmt.Errorf("store: create approval: %w: arguments are not JSON", ErrInvalid)
		}
		args = string(a.Args)
	}
	decided, err := nanos("decided_at", a.DecidedAt)
	if err != nil {
		return fmt.Errorf("store: create approval: %w", err)
	}
	used, err := nanos("used_at", a.UsedAt)
	if err != nil {
		return fmt.Errorf("store: create approval: %w", err)
	}
	_, err = s.wdb.ExecContext(ctx, `INSERT INTO approvals (id, tool, version, caller_id, caller_type, worker, def_hash,
		args_hash, args, rendered, change, status, created_at, decided_at, decided_by, used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Tool, a.Version, a.CallerID, a.CallerType, a.Worker, a.DefHash, a.ArgsHash, args, a.Rendered, a.Change, a.Status,
		a.CreatedAt.UnixNano(), decided, a.DecidedBy, used)
	if isConstraint(err) {
		return fmt.Errorf("store: create approval %q: %w", a.ID, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: create approval %q: %w", a.ID, err)
	}
	return nil
}

func scanApproval(r rowScanner) (*Approval, error) {
	var (
		a       Approval
		args    sql.NullString
		created sql.NullInt64
		decided sql.NullInt64
		used    sql.NullInt64
	)
	if err := r.Scan(&a.ID, &a.Tool, &a.Version, &a.CallerID, &a.CallerType, &a.Worker, &a.DefHash, &a.ArgsHash, &args, &a.Rendered, &a.Change,
		&a.Status, &created, &decided, &a.DecidedBy, &used); err != nil {
		return nil, err
	}
	if args.Valid {
		a.Args = json.RawMessage(args.String)
	}
	a.CreatedAt, a.DecidedAt, a.UsedAt = fromNanos(created), fromNanos(decided), fromNanos(used)
	return &a, nil
}

// GetApproval returns the approval id, or ErrNotFound.
func (s *Store) GetApproval(ctx context.Context, id string) (*Approval, error) {
	a, err := scanApproval(s.rdb.QueryRowContext(ctx, selectApproval+` WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: approval %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get approval %q: %w", id, err)
	}
	return a, nil
}

// ListApprovals returns the approvals with status (every one when status
// is empty), oldest first.
func (s *Store) ListApprovals(ctx context.Context, status string) ([]*Approval, error) {
	q, args := selectApproval, []any{}
	if status != "" {
		q += ` WHERE status = ?`
		args = append(args, status)
	}
	rows, err := s.rdb.QueryContext(ctx, q+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list approvals: %w", err)
	}
	defer rows.Close()
	list := []*Approval{}
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list approvals: %w", err)
		}
		list = append(list, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list approvals: %w", err)
	}
	return list, nil
}

// ApprovalIDsWithPrefix returns up to limit ids starting with prefix,
// which may hold only lowercase letters and digits.
func (s *Store) ApprovalIDsWithPrefix(ctx context.Context, prefix string, limit int) ([]string, error) {
	for _, r := range prefix {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return nil, fmt.Errorf("store: approval id prefix %q: %w", prefix, ErrInvalid)
		}
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT id FROM approvals WHERE id >= ? AND id < ? ORDER BY id LIMIT ?`,
		prefix, prefix+"\U0010FFFF", limit)
	if err != nil {
		return nil, fmt.Errorf("store: approval ids: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: approval ids: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// DecideApproval moves the pending approval id to status (allowed, denied
// or expired), recording by and now. It returns ErrNotFound for no such
// approval and ErrConflict when it is no longer pending.
func (s *Store) DecideApproval(ctx context.Context, id, status, by string) (*Approval, error) {
	switch status {
	case ApprovalAllowed, ApprovalDenied, ApprovalExpired:
	default:
		return nil, fmt.Errorf("store: decide approval %q: %w: status %q", id, ErrInvalid, status)
	}
	res, err := s.wdb.ExecContext(ctx, `UPDATE approvals SET status = ?, decided_at = ?, decided_by = ?
		WHERE id = ? AND status = ?`, status, s.now().UnixNano(), by, id, ApprovalPending)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 0 {
			a, gerr := s.GetApproval(ctx, id)
			if gerr != nil {
				return nil, gerr
			}
			return a, fmt.Errorf("store: approval %q is already %s: %w", id, a.Status, ErrConflict)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("store: decide approval %q: %w", id, err)
	}
	return s.GetApproval(ctx, id)
}

// retireGrants ends every grant that came before a tool called name was
// made (a deleted one's). An approval names a tool by name and version,
// and a tool made anew starts at version 1 again with other code:
// approvals for good go, unused allowed ones count as used, and pending
// ones expire, so a person can no longer allow what they would be shown
// of a tool that is gone. It runs in CreateTool's transaction.
func retireGrants(ctx context.Context, tx *sql.Tx, name string, now time.Time) error {
	// Likewise the workers whose agents made a tool of the name: a tool
	// made anew belongs to none until its maker's worker adopts it
	// (AddWorkerTool), so an agent that deleted its tool gets no grant to
	// the next tool of the name, a person's or another agent's.
	if _, err := tx.ExecContext(ctx, `DELETE FROM worker_tools WHERE tool = ?`, name); err != nil {
		return fmt.Errorf("retiring the name's makers: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM always_approvals WHERE tool = ?`, name); err != nil {
		return fmt.Errorf("retiring approvals for good: %w", err)
	}
	return retireApprovals(ctx, tx, "tool", name, now, DecidedByToolGone)
}

// retireApprovals ends the approvals whose column ("tool" or "worker", a
// constant) is value: unused allowed ones count as used, and pending ones
// expire, decided by decidedBy.
func retireApprovals(ctx context.Context, tx *sql.Tx, column, value string, now time.Time, decidedBy string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE approvals SET used_at = ? WHERE `+column+` = ? AND status = 'allowed' AND used_at IS NULL`,
		now.UnixNano(), value); err != nil {
		return fmt.Errorf("retiring allowed approvals: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE approvals SET status = ?, decided_at = ?, decided_by = ? WHERE `+column+` = ? AND status = ?`,
		ApprovalExpired, now.UnixNano(), decidedBy, value, ApprovalPending); err != nil {
		return fmt.Errorf("retiring pending approvals: %w", err)
	}
	return nil
}

// DecidedByToolGone is the decided_by of an approval that expired because
// its tool was deleted and a tool of its name made anew.
const DecidedByToolGone = "tool-deleted"

// AlwaysKey names the calls a person approved for good (allow --always):
// one tool of one worker (” for calls through none) at one definition,
// with one set of arguments. Version is what the person approved, kept
// for the record; a tool whose definition changes (a tool file edited, a
// toolset's settings, a new version) has another hash, and matches no
// earlier approval.
type AlwaysKey struct {
	Tool     string
	Worker   string
	DefHash  string
	ArgsHash string
	Version  int
}

func (k AlwaysKey) check(op string) error {
	if k.Tool == "" || k.DefHash == "" || k.ArgsHash == "" {
		return fmt.Errorf("store: %s: %w: tool, definition hash and args hash are required", op, ErrInvalid)
	}
	return nil
}

// AllowApprovalAlways allows the pending approval id and approves its call
// (tool, worker, definition, arguments) for good, in one transaction: a
// tool made anew under its name (CreateTool) either comes after, and
// retires both, or came first, and the approval is no longer pending
// (ErrConflict, with the approval). An approval from before definitions
// were hashed is allowed once, and approves nothing for good. ErrNotFound
// when there is no such approval.
func (s *Store) AllowApprovalAlways(ctx context.Context, id, by string) (*Approval, error) {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: allow approval %q: %w", id, err)
	}
	defer rollback(tx)
	now := s.now().UnixNano()
	var k AlwaysKey
	err = tx.QueryRowContext(ctx, `UPDATE approvals SET status = ?, decided_at = ?, decided_by = ?
		WHERE id = ? AND status = ? RETURNING tool, version, worker, def_hash, args_hash`, ApprovalAllowed, now, by, id, ApprovalPending).
		Scan(&k.Tool, &k.Version, &k.Worker, &k.DefHash, &k.ArgsHash)
	if errors.Is(err, sql.ErrNoRows) {
		rollback(tx)
		a, gerr := s.GetApproval(ctx, id)
		if gerr != nil {
			return nil, gerr
		}
		return a, fmt.Errorf("store: approval %q is already %s: %w", id, a.Status, ErrConflict)
	}
	if err != nil {
		return nil, fmt.Errorf("store: allow approval %q: %w", id, err)
	}
	if k.DefHash != "" {
		if err := addAlways(ctx, tx, k, now); err != nil {
			return nil, fmt.Errorf("store: allow approval %q for good: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("store: allow approval %q: %w", id, err)
	}
	return s.GetApproval(ctx, id)
}

func addAlways(ctx context.Context, x interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, k AlwaysKey, now int64) error {
	_, err := x.ExecContext(ctx, `INSERT INTO always_approvals (tool, worker, def_hash, args_hash, version, created_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, k.Tool, k.Worker, k.DefHash, k.ArgsHash, k.Version, now)
	return err
}

// AddAlwaysApproval approves the calls k names from now on. Adding one
// twice is not an error.
func (s *Store) AddAlwaysApproval(ctx context.Context, k AlwaysKey) error {
	if err := k.check("add always approval"); err != nil {
		return err
	}
	if err := addAlways(ctx, s.wdb, k, s.now().UnixNano()); err != nil {
		return fmt.Errorf("store: add always approval: %w", err)
	}
	return nil
}

// HasAlwaysApproval reports whether the calls k names (its Version aside)
// are approved for good.
func (s *Store) HasAlwaysApproval(ctx context.Context, k AlwaysKey) (bool, error) {
	if err := k.check("always approval"); err != nil {
		return false, err
	}
	var one int
	err := s.rdb.QueryRowContext(ctx, `SELECT 1 FROM always_approvals WHERE tool = ? AND worker = ? AND def_hash = ? AND args_hash = ?`,
		k.Tool, k.Worker, k.DefHash, k.ArgsHash).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: always approval: %w", err)
	}
	return true, nil
}

// ApprovedCall names one call exactly, as an approval records it: the
// tool at a version and definition, who called (caller id and type, and
// the worker it came through) and the hash of its canonical arguments.
type ApprovedCall struct {
	Tool       string
	Version    int
	DefHash    string
	CallerID   string
	CallerType string
	Worker     string
	ArgsHash   string
}

// UseAllowedApproval finds an allowed, unused approval of exactly call,
// decided at or after since, marks it used now and returns it; none gives
// (nil, nil). Finding and marking are one statement, so of two identical
// retries at once only one gets the approval. The oldest such approval is
// used first.
func (s *Store) UseAllowedApproval(ctx context.Context, call ApprovedCall, since time.Time) (*Approval, error) {
	if call.Tool == "" || call.DefHash == "" || call.ArgsHash == "" {
		return nil, fmt.Errorf("store: use approval: %w: tool, definition hash and args hash are required", ErrInvalid)
	}
	// status = 'allowed' is written out: the partial index
	// approvals_unused_allowed serves only a literal.
	const match = `SELECT id FROM approvals WHERE tool = ? AND args_hash = ? AND status = 'allowed' AND used_at IS NULL
		AND version = ? AND def_hash = ? AND caller_id = ? AND caller_type = ? AND worker = ? AND decided_at >= ?
		ORDER BY decided_at, id LIMIT 1`
	args := []any{call.Tool, call.ArgsHash, call.Version, call.DefHash, call.CallerID, call.CallerType, call.Worker, since.UnixNano()}
	// Most calls that park have no approval to use: a read answers them
	// without taking the write lock.
	var id string
	err := s.rdb.QueryRowContext(ctx, match, args...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: use approval: %w", err)
	}
	err = s.wdb.QueryRowContext(ctx, `UPDATE approvals SET used_at = ? WHERE id = (`+match+`) RETURNING id`,
		append([]any{s.now().UnixNano()}, args...)...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil // another retry took it in between
	}
	if err != nil {
		return nil, fmt.Errorf("store: use approval: %w", err)
	}
	return s.GetApproval(ctx, id)
}

// MarkApprovalUsed marks the allowed approval id used now, for the call
// that waited for it. It reports false when the approval is not allowed or
// was used already (by a retry that came first).
func (s *Store) MarkApprovalUsed(ctx context.Context, id string) (bool, error) {
	res, err := s.wdb.ExecContext(ctx, `UPDATE approvals SET used_at = ? WHERE id = ? AND status = ? AND used_at IS NULL`,
		s.now().UnixNano(), id, ApprovalAllowed)
	if err != nil {
		return false, fmt.Errorf("store: mark approval %q used: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: mark approval %q used: %w", id, err)
	}
	return n == 1, nil
}
