package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// A worker's state is a set of JSON values by key, kept for the worker's
// agent (the state toolset) and its JavaScript tools (utils.getState and
// the rest): it lasts across calls and restarts and goes with the worker.
// Caps bound what one worker can make the daemon keep; they are checked
// inside the write transaction, so two writers cannot both pass a count
// that only one fits.

// StateLimits bound one worker's state. A zero field takes its default.
type StateLimits struct {
	// MaxKeyBytes bounds a key (256 bytes by default).
	MaxKeyBytes int
	// MaxValueBytes bounds a value's compacted JSON (64 KiB by default).
	MaxValueBytes int
	// MaxKeys bounds how many keys one worker has (1,000 by default).
	MaxKeys int
}

// The default state caps.
const (
	DefaultStateKeyBytes   = 256
	DefaultStateValueBytes = 64 << 10
	DefaultStateKeys       = 1000
)

// WithDefaults fills in the zero fields.
func (l StateLimits) WithDefaults() StateLimits {
	if l.MaxKeyBytes <= 0 {
		l.MaxKeyBytes = DefaultStateKeyBytes
	}
	if l.MaxValueBytes <= 0 {
		l.MaxValueBytes = DefaultStateValueBytes
	}
	if l.MaxKeys <= 0 {
		l.MaxKeys = DefaultStateKeys
	}
	return l
}

// StateEntry is one key of a worker's state.
type StateEntry struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// StateChange is one write of a batch: Value nil deletes the key.
type StateChange struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value,omitempty"`
}

// CheckStateKey refuses a key the state cannot hold: empty, longer than
// the cap, not UTF-8, or holding a control character.
func CheckStateKey(key string, lim StateLimits) error {
	lim = lim.WithDefaults()
	switch {
	case key == "":
		return fmt.Errorf("%w: a state key must not be empty", ErrInvalid)
	case len(key) > lim.MaxKeyBytes:
		return fmt.Errorf("%w: state key is %d bytes, over the %d-byte cap", ErrLimit, len(key), lim.MaxKeyBytes)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: a state key must be UTF-8", ErrInvalid)
	case strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("%w: a state key must not hold control characters", ErrInvalid)
	}
	return nil
}

// compactValue checks a value and compacts it.
func compactValue(v json.RawMessage, lim StateLimits) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return "", fmt.Errorf("%w: a state value must be JSON: %v", ErrInvalid, err)
	}
	if buf.Len() > lim.MaxValueBytes {
		return "", fmt.Errorf("%w: state value is %d bytes, over the %d-byte cap", ErrLimit, buf.Len(), lim.MaxValueBytes)
	}
	return buf.String(), nil
}

// GetState returns one key of w's state; ErrNotFound when it is not set.
func (s *Store) GetState(ctx context.Context, worker, key string) (*StateEntry, error) {
	var value string
	var at sql.NullInt64
	err := s.rdb.QueryRowContext(ctx, `SELECT value, updated_at FROM worker_state WHERE worker = ? AND key = ?`, worker, key).Scan(&value, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: state %q of worker %q: %w", key, worker, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: state %q of worker %q: %w", key, worker, err)
	}
	return &StateEntry{Key: key, Value: json.RawMessage(value), UpdatedAt: fromNanos(at)}, nil
}

// SetState sets one key of w's state, within lim.
func (s *Store) SetState(ctx context.Context, worker, key string, value json.RawMessage, lim StateLimits) error {
	return s.ApplyState(ctx, worker, []StateChange{{Key: key, Value: value}}, lim)
}

// DeleteState removes one key of w's state and reports whether it was set.
func (s *Store) DeleteState(ctx context.Context, worker, key string) (bool, error) {
	r, err := s.wdb.ExecContext(ctx, `DELETE FROM worker_state WHERE worker = ? AND key = ?`, worker, key)
	if err != nil {
		return false, fmt.Errorf("store: delete state %q of worker %q: %w", key, worker, err)
	}
	n, err := r.RowsAffected()
	return n > 0, err
}

// ListStateKeys lists w's keys that start with prefix, in byte order, at
// most limit of them (all when limit <= 0).
func (s *Store) ListStateKeys(ctx context.Context, worker, prefix string, limit int) ([]string, error) {
	if limit <= 0 {
		limit = -1
	}
	// A range on the primary key, not LIKE: a prefix holding % or _ means
	// itself, and the index is used.
	q := `SELECT key FROM worker_state WHERE worker = ? AND key >= ?`
	args := []any{worker, prefix}
	if end, ok := prefixEnd(prefix); ok {
		q += ` AND key < ?`
		args = append(args, end)
	}
	rows, err := s.rdb.QueryContext(ctx, q+` ORDER BY key LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("store: list state of worker %q: %w", worker, err)
	}
	defer rows.Close()
	keys := []string{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// prefixEnd is the least string above every string that starts with p,
// in SQLite's byte order; ok is false when there is none (p empty or all
// 0xff bytes).
func prefixEnd(p string) (string, bool) {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

// StateSnapshot returns all of w's state, key by key.
func (s *Store) StateSnapshot(ctx context.Context, worker string) (map[string]json.RawMessage, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT key, value FROM worker_state WHERE worker = ?`, worker)
	if err != nil {
		return nil, fmt.Errorf("store: state of worker %q: %w", worker, err)
	}
	defer rows.Close()
	out := map[string]json.RawMessage{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = json.RawMessage(v)
	}
	return out, rows.Err()
}

// ApplyState writes a batch of changes to w's state in one transaction,
// in order: all of them or none. The key count is checked after the
// batch, so a batch may replace keys at the cap.
func (s *Store) ApplyState(ctx context.Context, worker string, changes []StateChange, lim StateLimits) error {
	lim = lim.WithDefaults()
	vals := make([]string, len(changes))
	for i, c := range changes {
		if err := CheckStateKey(c.Key, lim); err != nil {
			return fmt.Errorf("store: state of worker %q: %w", worker, err)
		}
		if c.Value == nil {
			continue
		}
		v, err := compactValue(c.Value, lim)
		if err != nil {
			return fmt.Errorf("store: state %q of worker %q: %w", c.Key, worker, err)
		}
		vals[i] = v
	}
	now := s.now().UnixNano()
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: state of worker %q: %w", worker, err)
	}
	defer rollback(tx)
	for i, c := range changes {
		if c.Value == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM worker_state WHERE worker = ? AND key = ?`, worker, c.Key)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO worker_state (worker, key, value, updated_at) VALUES (?, ?, ?, ?)
				ON CONFLICT (worker, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
				worker, c.Key, vals[i], now)
		}
		if err != nil {
			if isForeignKey(err) {
				return fmt.Errorf("store: state of worker %q: %w: no such worker", worker, ErrNotFound)
			}
			return fmt.Errorf("store: state %q of worker %q: %w", c.Key, worker, err)
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM worker_state WHERE worker = ?`, worker).Scan(&n); err != nil {
		return fmt.Errorf("store: state of worker %q: %w", worker, err)
	}
	if n > lim.MaxKeys {
		return fmt.Errorf("store: state of worker %q: %w: it would hold %d keys, over the cap of %d", worker, ErrLimit, n, lim.MaxKeys)
	}
	return tx.Commit()
}
