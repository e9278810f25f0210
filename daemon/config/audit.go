package config

import "time"

// AuditConfig sets how long the audit log keeps its records.
type AuditConfig struct {
	// Retention is how long call records and admin acts are kept; older
	// ones are pruned in the background. 0 keeps everything.
	Retention time.Duration `mapstructure:"retention"`
	// BatchGate, when set (tests only), is received from before each
	// prune batch, so a test can interleave calls with batches.
	BatchGate chan struct{} `mapstructure:"-"`
}

// MinRetention is the shortest audit.retention the config takes: a typo
// ("1m" for a month) should not empty the audit log.
const MinRetention = time.Hour
