package dispatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// A call through a worker (an agent's, or a person's narrowed to one) is
// bounded by it: only the worker's tools exist (any other is
// tool_not_found, as if absent), its approval rules combine with the
// tool's (worker.EffectiveApproval), its limits cap the tool's, its rate
// limit is one more bucket, and its profile one more profile.

// WorkerLookup finds a registered worker's last good definition by name;
// an error wrapping store.ErrNotFound means none is registered by that
// name.
type WorkerLookup func(name string) (*worker.Worker, error)

// workerOf resolves the caller's worker: nil when the caller names none,
// or names one that is not registered (a label the config's profiles may
// map; only a person can send one, since a token always names its own).
func (d *Dispatcher) workerOf(c principal.Caller) (*worker.Worker, error) {
	if c.Worker == "" || d.cfg.Workers == nil {
		return nil, nil
	}
	w, err := d.cfg.Workers(c.Worker)
	if errors.Is(err, store.ErrNotFound) {
		if c.TokenID != "" {
			return nil, errdefs.Errorf(errdefs.Unauthorized, "worker %q is no longer registered", c.Worker)
		}
		return nil, nil
	}
	return w, err
}

// resolve resolves a tool for a call through w (nil for none).
func (d *Dispatcher) resolve(ctx context.Context, w *worker.Worker, name string) (*catalog.Resolved, error) {
	if w == nil {
		return d.cfg.Catalog.Resolve(ctx, name)
	}
	return d.resolveFor(ctx, w, name)
}

// resolveFor resolves a tool the way w's agent sees the catalog: its
// meta-tools (meta.go), its files' tools, its catalog tools.
func (d *Dispatcher) resolveFor(ctx context.Context, w *worker.Worker, name string) (*catalog.Resolved, error) {
	if m := metaFor(w, name); m != nil {
		return catalog.Compile(metaTool(m))
	}
	if lt := w.LocalTool(name); lt != nil {
		return catalog.Compile(&catalog.Tool{Def: lt.Def, Status: catalog.StatusActive, CreatedBy: catalog.CreatedByUser, Version: 1})
	}
	ok, err := d.WorkerHasTool(ctx, w, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound(name)
	}
	return d.cfg.Catalog.Resolve(ctx, name)
}

// notFound is the catalog's own words: whether the tool exists elsewhere
// is not told.
func notFound(name string) error {
	return &errdefs.Error{Code: errdefs.ToolNotFound, Err: fmt.Errorf("no tool named %q", name)}
}

// WorkerHasTool reports whether the catalog tool called name is one of
// w's: a person's tool named in its file, or a tool its agent made while
// it may make tools. Its tool files' tools are w.LocalTool's.
//
// An agent's tool is its maker's worker's only, even under a name another
// worker's file lists: a name no tool holds yet is not a grant to whoever
// makes a tool of it first (its code would run with that worker's grants).
func (d *Dispatcher) WorkerHasTool(ctx context.Context, w *worker.Worker, name string) (bool, error) {
	if slices.Contains(w.Tools, name) {
		res, err := d.cfg.Catalog.Resolve(ctx, name)
		switch {
		case errdefs.Is(err, errdefs.ToolNotFound):
			return false, nil
		case err != nil:
			return false, err
		case listedGrant(res.Tool):
			return true, nil
		}
	}
	made, err := d.AgentTools(ctx, w)
	return slices.Contains(made, name), err
}

// listedGrant reports whether w's file naming t grants it: t is a
// person's (an agent's tool is granted by its maker's worker_tools row,
// never by a name; see WorkerHasTool).
func listedGrant(t *catalog.Tool) bool { return t.CreatedBy == catalog.CreatedByUser }

// AgentTools lists the tools w's agent made, when w lets it make tools.
func (d *Dispatcher) AgentTools(ctx context.Context, w *worker.Worker) ([]string, error) {
	if !w.AgentTools.Create {
		return nil, nil
	}
	return d.cfg.Store.WorkerTools(ctx, w.Name)
}

// approvalFor is the approval a call of res through w gets.
func approvalFor(w *worker.Worker, res *catalog.Resolved) string {
	return ToolApproval(w, res.Tool)
}

// ToolApproval is the approval a call of t through w gets (t's own when w
// is nil): what a worker's agent is told a tool asks before it calls.
func ToolApproval(w *worker.Worker, t *catalog.Tool) string {
	def := t.Def
	if w == nil {
		return def.Approval
	}
	if lt := w.LocalTool(def.Name); lt != nil {
		return w.ToolApproval(def.Name, lt.WrittenApproval, catalog.CreatedByUser)
	}
	// The tool's word is what its definition writes, not the default the
	// catalog filled in (worker.EffectiveApproval tells the two apart).
	return w.ToolApproval(def.Name, def.WrittenApproval(), t.CreatedBy)
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

// workerProfile is the worker's profile, lowercased; "" for none.
func workerProfile(w *worker.Worker) string {
	if w == nil {
		return ""
	}
	return strings.ToLower(w.Profile)
}

// ToolsFor lists the tools w's agent sees: its catalog tools (that
// exist), the ones its agent made, its tool files' tools, then the
// meta-tools it offers (meta.go), each allowed by its profile.
func (d *Dispatcher) ToolsFor(ctx context.Context, w *worker.Worker) ([]*catalog.Tool, error) {
	var out []*catalog.Tool
	made, err := d.AgentTools(ctx, w)
	if err != nil {
		return nil, err
	}
	names := slices.Clone(w.Tools)
	for _, m := range made {
		if !slices.Contains(names, m) {
			names = append(names, m)
		}
	}
	for _, name := range names {
		t, err := d.cfg.Catalog.Get(ctx, name)
		if errdefs.Is(err, errdefs.ToolNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !listedGrant(t) && !slices.Contains(made, name) {
			continue // another worker's agent's tool under a name w lists
		}
		out = append(out, t)
	}
	for _, lt := range w.LocalTools {
		out = append(out, &catalog.Tool{Def: lt.Def, Status: catalog.StatusActive, CreatedBy: catalog.CreatedByUser, Version: 1})
	}
	for _, m := range metaToolsFor(w) {
		out = append(out, metaTool(&m))
	}
	if p := workerProfile(w); p != "" {
		out = slices.DeleteFunc(out, func(t *catalog.Tool) bool { return !d.ProfileAllows(t.Def, p) })
	}
	return out, nil
}
