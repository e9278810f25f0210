package store

import (
	"context"
	"fmt"
)

// CountWorkerTools counts the tools in the catalog that the agent of the
// worker called name made (a deleted tool's row outlives it until a tool
// of the name is made again: it is not counted).
func (s *Store) CountWorkerTools(ctx context.Context, name string) (int, error) {
	var n int
	err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM worker_tools w JOIN tools t ON t.name = w.tool WHERE w.worker = ?`,
		name).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count worker %q's tools: %w", name, err)
	}
	return n, nil
}
