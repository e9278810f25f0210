package dispatch

import (
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/visible"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/executors"
)

// A call through a worker (an agent's, or a person's narrowed to one) is
// bounded by it: only the worker's tools exist (daemon/visible decides
// which; any other is tool_not_found, as if absent), its approval rules
// combine with the tool's (worker.EffectiveApproval), its limits cap the tool's, its rate
// limit is one more bucket, and its profile one more profile.

// Tool profiles (which tools each caller may use at all: the global
// profile, those the config maps the caller id and its worker to, the one
// it asked for, its worker's own; each must allow the tool) are the
// caller's View's rule too (visible.View.Allows); the call path records
// its refusal.

// WorkerLookup finds a registered worker's last good definition by name;
// an error wrapping store.ErrNotFound means none is registered by that
// name.
type WorkerLookup func(name string) (*worker.Worker, error)

// approvalFor is the approval a call of res through w gets.
func approvalFor(w *worker.Worker, res *catalog.Resolved) string {
	return visible.Approval(w, res.Tool)
}

// capLimits lowers each of l's limits to the worker's, where it sets one.
func capLimits(l *executors.Limits, w *worker.Worker) {
	if w == nil {
		return
	}
	capped := (&catalog.Definition{Limits: &w.Limits}).ExecutorLimits()
	if capped.Timeout > 0 && (l.Timeout <= 0 || capped.Timeout < l.Timeout) {
		l.Timeout = capped.Timeout
	}
	if capped.MemoryBytes > 0 && (l.MemoryBytes <= 0 || capped.MemoryBytes < l.MemoryBytes) {
		l.MemoryBytes = capped.MemoryBytes
	}
	if capped.OutputBytes > 0 && (l.OutputBytes <= 0 || capped.OutputBytes < l.OutputBytes) {
		l.OutputBytes = capped.OutputBytes
	}
	if capped.Requests > 0 && (l.Requests <= 0 || capped.Requests < l.Requests) {
		l.Requests = capped.Requests
	}
}
