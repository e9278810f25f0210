package store

import (
	"context"
	"fmt"
	"time"
)

// Retention: the audit log (executions and admin acts) is pruned of
// records older than a cutoff in small batches, each its own short write
// transaction, so the group-commit writer of new records waits for one
// batch at most, never for the whole prune.

// PruneBatch is how many records one call of PruneExecutions or
// PruneAdminActs deletes at most when given no batch size.
const PruneBatch = 500

// PruneExecutions deletes up to batch (PruneBatch when 0 or less) execution
// records started before before and returns how many it deleted. Records
// with no start time are kept. Call it again while it returns batch.
func (s *Store) PruneExecutions(ctx context.Context, before time.Time, batch int) (int, error) {
	return s.prune(ctx, "executions", "started_at", before, batch)
}

// PruneAdminActs deletes up to batch (PruneBatch when 0 or less) admin acts
// done before before and returns how many it deleted.
func (s *Store) PruneAdminActs(ctx context.Context, before time.Time, batch int) (int, error) {
	return s.prune(ctx, "admin_acts", "at", before, batch)
}

// prune deletes one batch from table (a constant of ours, never input)
// whose column is before cutoff. The time index on column finds them.
func (s *Store) prune(ctx context.Context, table, column string, before time.Time, batch int) (int, error) {
	if batch <= 0 {
		batch = PruneBatch
	}
	res, err := s.wdb.ExecContext(ctx, `DELETE FROM `+table+` WHERE rowid IN (
		SELECT rowid FROM `+table+` WHERE `+column+` < ? ORDER BY `+column+` LIMIT ?)`, before.UnixNano(), batch)
	if err != nil {
		return 0, fmt.Errorf("store: prune %s: %w", table, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: prune %s: %w", table, err)
	}
	return int(n), nil
}
