package store

import (
	"context"
	"fmt"
)

// maxRecentApprovals bounds RecentApprovals.
const maxRecentApprovals = 1000

// RecentApprovals returns the limit (1 to 1000) approvals decided last,
// newest decision first: what the review page shows under the pending
// ones, without reading the whole queue's history.
func (s *Store) RecentApprovals(ctx context.Context, limit int) ([]*Approval, error) {
	if limit < 1 || limit > maxRecentApprovals {
		return nil, fmt.Errorf("store: recent approvals: %w: limit must be 1 to %d, not %d", ErrInvalid, maxRecentApprovals, limit)
	}
	rows, err := s.rdb.QueryContext(ctx, selectApproval+` WHERE status != ? ORDER BY decided_at DESC, id LIMIT ?`,
		ApprovalPending, limit)
	if err != nil {
		return nil, fmt.Errorf("store: recent approvals: %w", err)
	}
	defer rows.Close()
	list := []*Approval{}
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("store: recent approvals: %w", err)
		}
		list = append(list, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: recent approvals: %w", err)
	}
	return list, nil
}
