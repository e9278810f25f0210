package ui

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/principal"
)

// Backend is what the review page reads and does, in the daemon's own
// terms. The daemon implements it over the same code the socket API's
// handlers use (the dispatcher's approval queue, the catalog, the store,
// the worker registry), so a click here is what the CLI's verb would do,
// recorded as the person in `by`.
type Backend interface {
	// PendingApprovals lists the approvals waiting, oldest first.
	PendingApprovals(ctx context.Context) ([]api.Approval, error)
	// RecentApprovals lists the n approvals decided last, newest first.
	RecentApprovals(ctx context.Context, n int) ([]api.Approval, error)
	// DecideApproval allows (always: for good) or denies a pending approval.
	DecideApproval(ctx context.Context, id string, allow, always bool, by principal.Caller) (api.Approval, error)
	// PendingTools lists the tools waiting for a person's approval, each
	// with the definition a person last approved (nil when none is kept).
	PendingTools(ctx context.Context) ([]PendingTool, error)
	// DecideTool approves or rejects a pending tool.
	DecideTool(ctx context.Context, name string, approve bool, by principal.Caller) (api.Tool, error)
	// Executions lists the audit log's calls f selects, newest first.
	Executions(ctx context.Context, f AuditFilter) ([]api.Execution, error)
	// Workers lists the registered workers with their effective tools.
	Workers(ctx context.Context) ([]api.Worker, error)
}

// PendingTool is a tool waiting for approval and what a person approved
// of it before.
type PendingTool struct {
	Tool api.Tool
	// Approved is the definition of Tool.ApprovedVersion; nil when the
	// tool was never approved or that version is no longer kept.
	Approved json.RawMessage
}

// AuditFilter selects audit log entries. Empty fields match everything.
type AuditFilter struct {
	Tool    string
	Caller  string // caller id, e.g. uid:1000 or worker:data
	Worker  string
	Outcome string // ok | error | failed | refused
	Since   time.Time
	Until   time.Time
	// Limit bounds the entries returned (1..maxAuditLimit).
	Limit int
}
