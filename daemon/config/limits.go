package config

import (
	"errors"
	"fmt"

	"github.com/toolcage/toolcage/daemon/catalog"
)

// WorkerLimitsConfig bounds what one worker's agents can take of the
// daemon, so that no agent starves the person or the other workers
// (worker_limits: in configs/toolcage.yaml). The argument bounds hold
// every caller, the person too.
type WorkerLimitsConfig struct {
	// ExecutorShare caps the executors of one key (of
	// executor.max_per_key) one worker's calls hold at once.
	ExecutorShare int `mapstructure:"executor_share"`
	// PersonExecutors of each key's executors are kept for calls through
	// no worker.
	PersonExecutors int `mapstructure:"person_executors"`
	// PendingApprovals caps one worker's calls waiting for a person.
	PendingApprovals int `mapstructure:"pending_approvals"`
	// ArgumentBytes caps a call's arguments as JSON.
	ArgumentBytes string `mapstructure:"argument_bytes"`
	// ArgumentDepth caps the nesting of a call's arguments.
	ArgumentDepth int `mapstructure:"argument_depth"`
	// Tools caps the tools one worker's agents keep in the catalog.
	Tools int `mapstructure:"tools"`
	// Versions caps the versions an agent's change may take a tool to.
	Versions int `mapstructure:"versions"`
	// SQLResultBytes caps one db_sql read (a worker file's
	// toolsets.sql.max_result_bytes overrides it).
	SQLResultBytes string `mapstructure:"sql_result_bytes"`
}

// Ceilings of the worker limits: past them a bound protects nothing.
const (
	maxArgumentBytes  = 16 << 20
	maxArgumentDepth  = 1000
	maxSQLResultBytes = 256 << 20
)

// check validates the worker limits against the executor pool's size.
func (c WorkerLimitsConfig) check(maxPerKey int) []error {
	var errs []error
	if c.ExecutorShare < 1 {
		errs = append(errs, errors.New("worker_limits.executor_share must be at least 1"))
	}
	if c.PersonExecutors < 0 || (maxPerKey > 0 && c.PersonExecutors >= maxPerKey) {
		errs = append(errs, fmt.Errorf("worker_limits.person_executors: want 0 to executor.max_per_key-1 (%d), got %d", maxPerKey-1, c.PersonExecutors))
	}
	if c.PendingApprovals < 1 || c.Tools < 1 || c.Versions < 1 {
		errs = append(errs, errors.New("worker_limits.pending_approvals, tools and versions must be at least 1"))
	}
	if c.ArgumentDepth < 1 || c.ArgumentDepth > maxArgumentDepth {
		errs = append(errs, fmt.Errorf("worker_limits.argument_depth: want 1 to %d, got %d", maxArgumentDepth, c.ArgumentDepth))
	}
	for _, s := range []struct {
		key, v string
		ceil   int64
	}{{"argument_bytes", c.ArgumentBytes, maxArgumentBytes}, {"sql_result_bytes", c.SQLResultBytes, maxSQLResultBytes}} {
		if n, err := catalog.ParseByteSize(s.v); err != nil || n < 1024 || n > s.ceil {
			errs = append(errs, fmt.Errorf("worker_limits.%s: want a size from 1KiB to %dMiB, like \"1MiB\", got %q", s.key, s.ceil>>20, s.v))
		}
	}
	return errs
}

// ArgumentByteCount is worker_limits.argument_bytes in bytes.
func (c WorkerLimitsConfig) ArgumentByteCount() int {
	n, _ := catalog.ParseByteSize(c.ArgumentBytes)
	return int(n)
}

// SQLResultByteCount is worker_limits.sql_result_bytes in bytes.
func (c WorkerLimitsConfig) SQLResultByteCount() int64 {
	n, _ := catalog.ParseByteSize(c.SQLResultBytes)
	return n
}
