package store

import (
	"context"
	"fmt"
)

// PendingApprovals counts the approvals of worker's calls still waiting
// for a person (worker "" counts those that came through no worker).
func (s *Store) PendingApprovals(ctx context.Context, worker string) (int, error) {
	var n int
	err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM approvals WHERE status = ? AND worker = ?`,
		ApprovalPending, worker).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count pending approvals: %w", err)
	}
	return n, nil
}
