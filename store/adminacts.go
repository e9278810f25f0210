package store

import (
	"context"
	"fmt"
	"time"
)

// Admin act outcomes.
const (
	ActOK      = "ok"
	ActRefused = "refused" // the caller may not do it (an agent)
	ActFailed  = "failed"  // it was allowed but did not happen
)

// AdminAct is one administrative act in the audit log: a person's decision
// or change (approval, tool approval, secret, worker, token), or anyone's
// refused attempt at one.
type AdminAct struct {
	ID         string    `json:"id"` // RecordAdminAct sets one when empty
	Act        string    `json:"act"`
	Target     string    `json:"target,omitempty"`
	CallerID   string    `json:"caller_id,omitempty"`
	CallerType string    `json:"caller_type,omitempty"`
	Worker     string    `json:"worker,omitempty"`
	TokenID    string    `json:"token_id,omitempty"`
	Session    string    `json:"session,omitempty"`
	Outcome    string    `json:"outcome"`
	ErrorCode  string    `json:"error_code,omitempty"`
	Error      string    `json:"error,omitempty"`
	At         time.Time `json:"at"`
}

// RecordAdminAct appends a to the admin log. A zero At is now.
func (s *Store) RecordAdminAct(ctx context.Context, a *AdminAct) error {
	if a.Act == "" || a.Outcome == "" {
		return fmt.Errorf("store: record admin act: %w: act and outcome are required", ErrInvalid)
	}
	if a.At.IsZero() {
		a.At = s.now()
	}
	if a.ID == "" {
		a.ID = newID(a.At)
	}
	_, err := s.wdb.ExecContext(ctx, `INSERT INTO admin_acts (id, act, target, caller_id, caller_type, worker,
		token_id, session, outcome, error_code, error, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Act, a.Target, a.CallerID, a.CallerType, a.Worker, a.TokenID, a.Session, a.Outcome,
		a.ErrorCode, a.Error, a.At.UnixNano())
	if isConstraint(err) {
		return fmt.Errorf("store: record admin act %s: %w", a.ID, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: record admin act: %w", err)
	}
	return nil
}

// ListAdminActs returns admin acts newest first; limit 0 (or less) means
// 100.
func (s *Store) ListAdminActs(ctx context.Context, limit, offset int) ([]*AdminAct, error) {
	if limit <= 0 {
		limit = defaultExecutionLimit
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT id, act, target, caller_id, caller_type, worker, token_id,
		session, outcome, error_code, error, at FROM admin_acts ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`,
		limit, max(offset, 0))
	if err != nil {
		return nil, fmt.Errorf("store: list admin acts: %w", err)
	}
	defer rows.Close()
	list := []*AdminAct{}
	for rows.Next() {
		var a AdminAct
		var at int64
		if err := rows.Scan(&a.ID, &a.Act, &a.Target, &a.CallerID, &a.CallerType, &a.Worker, &a.TokenID,
			&a.Session, &a.Outcome, &a.ErrorCode, &a.Error, &at); err != nil {
			return nil, fmt.Errorf("store: list admin acts: %w", err)
		}
		a.At = time.Unix(0, at).UTC()
		list = append(list, &a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list admin acts: %w", err)
	}
	return list, nil
}
