package dispatch

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/daemon/visible"
	"github.com/toolcage/toolcage/errdefs"
)

// Meta-tools: the tools an agent manages its own tools with (kind meta,
// daemon/kind/meta), offered by a worker whose file says agent_tools:
// {meta_tools: true}; the changing ones only with agent_tools.create on.
// They are that worker's tools (daemon/visible offers them), and a call of
// one goes the way of any call of a kind that runs in the daemon
// (kind.Local): profiles, the worker's approval rules (an ask parks it for
// a person, a blocked refuses it), its schema, rate limits, the local
// timeout and output cap, scrubbing and the audit record. What it does to
// the catalog it does through agentCatalog, as the calling agent: every
// change goes through the catalog's rules for what agents make (pending
// unless harmless JavaScript, only the secrets the worker grants, never a
// person's tool, a delete only when confirmed) and a tool made this way
// joins the worker's tool set. Nested calls (utils.callTool) cannot reach
// them.

// agentCatalog is the catalog as the agent of one call's worker manages
// its own tools: what a meta-tool's call works on (kind.LocalCall.Catalog).
type agentCatalog struct {
	d *Dispatcher
	c *call
}

// agentCatalogFor is c's agentCatalog when c came through a worker that
// offers the meta-tools, else nil.
func (d *Dispatcher) agentCatalogFor(c *call) kind.AgentCatalog {
	if c.worker == nil || !c.worker.AgentTools.MetaTools {
		return nil
	}
	return &agentCatalog{d: d, c: c}
}

func agentTool(t *catalog.Tool) kind.AgentTool {
	return kind.AgentTool{Name: t.Def.Name, Description: t.Def.Description, Kind: t.Def.Kind, Category: t.Def.Category,
		Status: t.Status, CreatedBy: t.CreatedBy, Version: t.Version, UsageCount: t.UsageCount}
}

// Made lists the tools the worker's agent made that still exist.
func (a *agentCatalog) Made(ctx context.Context) ([]kind.AgentTool, error) {
	names, err := a.d.cfg.Store.WorkerTools(ctx, a.c.worker.Name)
	if err != nil {
		return nil, err
	}
	var out []kind.AgentTool
	for _, name := range names {
		t, err := a.d.cfg.Catalog.Get(ctx, name)
		if errdefs.Is(err, errdefs.ToolNotFound) {
			continue // deleted since
		}
		if err != nil {
			return nil, err
		}
		out = append(out, agentTool(t))
	}
	return out, nil
}

// Visible lists the worker's tools its agent sees, but the meta-tools.
func (a *agentCatalog) Visible(ctx context.Context) ([]kind.AgentTool, error) {
	tools, _, err := a.c.view.List(ctx, visible.Filter{NoMeta: true})
	if err != nil {
		return nil, err
	}
	out := make([]kind.AgentTool, 0, len(tools))
	for _, t := range tools {
		out = append(out, agentTool(t))
	}
	return out, nil
}

// tool is the tool called name as the worker's agent sees it: a tool of
// its files (local), or a catalog tool of the worker's; tool_not_found
// otherwise, and for the meta-tools themselves.
func (a *agentCatalog) tool(ctx context.Context, name string) (t *catalog.Tool, local bool, err error) {
	t, src, err := a.c.view.Get(ctx, name)
	switch {
	case err != nil:
		return nil, false, err
	case src == visible.FromMeta:
		return nil, false, visible.NotFound(name)
	}
	return t, src == visible.FromFile, nil
}

// Tool is one of the worker's tools and its written definition.
func (a *agentCatalog) Tool(ctx context.Context, name string) (*kind.AgentTool, json.RawMessage, error) {
	t, local, err := a.tool(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	def, err := t.Def.WrittenJSON()
	if err != nil {
		return nil, nil, err
	}
	at := agentTool(t)
	at.InFile = local
	return &at, def, nil
}

// catalogTool is the worker's catalog tool called name, which its agent
// may ask the catalog to change (the catalog then decides whether it
// may); a tool of the worker's files is forbidden, any other absent.
func (a *agentCatalog) catalogTool(ctx context.Context, name string) error {
	_, local, err := a.tool(ctx, name)
	if local {
		return errdefs.Errorf(errdefs.Forbidden, "tool %q is defined in a file of worker %q; a person changes it there", name, a.c.worker.Name)
	}
	return err
}

// parseDef reads a definition as the catalog does.
func parseDef(def json.RawMessage) (*catalog.Definition, error) {
	d, err := catalog.ParseJSON(def)
	if err != nil {
		return nil, &errdefs.Error{Code: errdefs.InvalidDefinition, Err: err}
	}
	return d, nil
}

// Create makes the tool as the call's caller and adds it to the worker.
func (a *agentCatalog) Create(ctx context.Context, raw json.RawMessage) (*kind.AgentTool, error) {
	def, err := parseDef(raw)
	if err != nil {
		return nil, err
	}
	w := a.c.worker
	t, err := a.d.cfg.Catalog.Create(ctx, def, a.c.caller)
	if err != nil {
		return nil, err
	}
	if err := a.d.cfg.Store.AddWorkerTool(ctx, w.Name, t.Def.Name); err != nil {
		return nil, fmt.Errorf("tool %q was made, but not added to worker %q: %w", t.Def.Name, w.Name, err)
	}
	a.d.log.Info("tool created by meta-tool", "tool", t.Def.Name, "status", t.Status, "worker", w.Name, "call_id", a.c.id)
	at := agentTool(t)
	return &at, nil
}

// Update changes one of the worker's catalog tools as the call's caller.
func (a *agentCatalog) Update(ctx context.Context, name string, raw json.RawMessage) (*kind.AgentTool, error) {
	if err := a.catalogTool(ctx, name); err != nil {
		return nil, err
	}
	def, err := parseDef(raw)
	if err != nil {
		return nil, err
	}
	t, err := a.d.cfg.Catalog.Update(ctx, name, def, a.c.caller)
	if err != nil {
		return nil, err
	}
	at := agentTool(t)
	return &at, nil
}

// Delete deletes one of the worker's catalog tools as the call's caller.
func (a *agentCatalog) Delete(ctx context.Context, name string) error {
	if err := a.catalogTool(ctx, name); err != nil {
		return err
	}
	if err := a.d.cfg.Catalog.Delete(ctx, name, a.c.caller, true); err != nil {
		return err
	}
	a.d.log.Info("tool deleted by meta-tool", "tool", name, "worker", a.c.worker.Name, "call_id", a.c.id)
	return nil
}

// SetEnabled enables or disables one of the worker's catalog tools as
// the call's caller.
func (a *agentCatalog) SetEnabled(ctx context.Context, name string, enabled bool) (*kind.AgentTool, error) {
	if err := a.catalogTool(ctx, name); err != nil {
		return nil, err
	}
	toggle := a.d.cfg.Catalog.Disable
	if enabled {
		toggle = a.d.cfg.Catalog.Enable
	}
	t, err := toggle(ctx, name, a.c.caller)
	if err != nil {
		return nil, err
	}
	at := agentTool(t)
	return &at, nil
}

// Interface guards.
var _ kind.AgentCatalog = (*agentCatalog)(nil)
