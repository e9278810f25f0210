package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolcage/toolcage/daemon/kind/builtin"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
	"github.com/toolcage/toolcage/toolspec"
)

// Tool statuses, as the store keeps them.
const (
	StatusActive          = store.StatusActive
	StatusDisabled        = store.StatusDisabled
	StatusPendingApproval = store.StatusPendingApproval
	StatusRejected        = store.StatusRejected
)

// Creators, as the store keeps them.
const (
	CreatedByUser = store.CreatorUser
	CreatedByLLM  = store.CreatorLLM
)

// Tool is a stored tool: its definition and catalog state.
type Tool struct {
	Def        *Definition
	Status     string
	CreatedBy  string
	Version    int
	UsageCount int64
	LastUsedAt time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Version is one kept version of a tool.
type Version struct {
	Version   int
	Def       *Definition
	CreatedAt time.Time
}

// Filter selects tools in List.
type Filter = store.ToolFilter

// Stats are catalog-wide counts.
type Stats = store.ToolStats

// Catalog applies the lifecycle rules on top of the store. It is safe for
// concurrent use.
type Catalog struct {
	st *store.Store

	mu sync.RWMutex
	// active caches resolved tools and compiled schemas for the call path;
	// every mutation drops the tool's entry.
	active map[string]*Resolved
}

// New returns a catalog over st.
func New(st *store.Store) *Catalog {
	return &Catalog{st: st, active: map[string]*Resolved{}}
}

func notFound(name string) error {
	return &errdefs.Error{Code: errdefs.ToolNotFound, Err: fmt.Errorf("no tool named %q", name)}
}

func invalid(err error) error {
	return &errdefs.Error{Code: errdefs.InvalidDefinition, Err: err}
}

func forbidden(format string, args ...any) error {
	return errdefs.Errorf(errdefs.Forbidden, format, args...)
}

func conflict(format string, args ...any) error {
	return errdefs.Errorf(errdefs.Conflict, format, args...)
}

// storeErr maps store sentinels to coded errors.
func storeErr(name string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return notFound(name)
	case errors.Is(err, store.ErrConflict):
		return conflict("a tool named %q already exists", name)
	}
	return &errdefs.Error{Code: errdefs.Internal, Err: err}
}

// Check runs the checks every definition must pass before it is stored or
// run: validation and, for JavaScript, the static code check.
func Check(def *Definition) error {
	def.ApplyDefaults()
	if err := def.Validate(); err != nil {
		return invalid(err)
	}
	return checkKind(def)
}

func initialStatus(def *Definition, createdBy string) string {
	if createdBy == CreatedByLLM && def.HasDangerousPermission() {
		return StatusPendingApproval
	}
	return StatusActive
}

func creator(c principal.Caller) string {
	if c.Type == CreatedByLLM {
		return CreatedByLLM
	}
	return CreatedByUser
}

// Create stores a new tool at version 1. A user's tool starts active; an
// llm's tool asking for a dangerous permission starts pending_approval.
func (c *Catalog) Create(ctx context.Context, def *Definition, caller principal.Caller) (*Tool, error) {
	if err := Check(def); err != nil {
		return nil, err
	}
	by := creator(caller)
	t := &Tool{Def: def, Status: initialStatus(def, by), CreatedBy: by, Version: 1}
	st, err := toStore(t)
	if err != nil {
		return nil, err
	}
	if err := c.st.CreateTool(ctx, st); err != nil {
		return nil, storeErr(def.Name, err)
	}
	c.forget(def.Name)
	return fromStore(st)
}

// Get returns a tool by name.
func (c *Catalog) Get(ctx context.Context, name string) (*Tool, error) {
	st, err := c.st.GetTool(ctx, name)
	if err != nil {
		return nil, storeErr(name, err)
	}
	return fromStore(st)
}

// Resolve returns a tool for the call path, from cache when possible.
func (c *Catalog) Resolve(ctx context.Context, name string) (*Resolved, error) {
	c.mu.RLock()
	r := c.active[name]
	c.mu.RUnlock()
	if r != nil {
		return r, nil
	}
	t, err := c.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	r, err = Compile(t)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.active[name] = r
	c.mu.Unlock()
	return r, nil
}

func (c *Catalog) forget(name string) {
	c.mu.Lock()
	delete(c.active, name)
	c.mu.Unlock()
}

// List returns the tools matching f and the total before limit/offset.
func (c *Catalog) List(ctx context.Context, f Filter) ([]*Tool, int, error) {
	sts, total, err := c.st.ListTools(ctx, f)
	if err != nil {
		return nil, 0, storeErr("", err)
	}
	out := make([]*Tool, 0, len(sts))
	for _, st := range sts {
		t, err := fromStore(st)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, t)
	}
	return out, total, nil
}

// Update replaces a tool's definition. The version rises when anything in
// the definition changed; an unchanged definition is a no-op. An llm may not
// change a user's tool, and an llm change that leaves the tool holding a
// dangerous permission sends it back to pending_approval.
func (c *Catalog) Update(ctx context.Context, name string, def *Definition, caller principal.Caller) (*Tool, error) {
	if def.Name == "" {
		def.Name = name
	}
	if def.Name != name {
		return nil, invalid(fmt.Errorf("name %q does not match the tool being updated (%q); tools cannot be renamed", def.Name, name))
	}
	if err := Check(def); err != nil {
		return nil, err
	}
	cur, err := c.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	if caller.Type == CreatedByLLM && cur.CreatedBy == CreatedByUser {
		return nil, forbidden("an llm may not change the user's tool %q", name)
	}
	return c.replace(ctx, cur, def, caller)
}

func (c *Catalog) replace(ctx context.Context, cur *Tool, def *Definition, caller principal.Caller) (*Tool, error) {
	same, err := sameDefinition(cur.Def, def)
	if err != nil {
		return nil, err
	}
	if same {
		return cur, nil
	}
	next := *cur
	next.Def = def
	next.Version = cur.Version + 1
	if caller.Type == CreatedByLLM && def.HasDangerousPermission() && cur.Status != StatusRejected {
		next.Status = StatusPendingApproval
	}
	st, err := toStore(&next)
	if err != nil {
		return nil, err
	}
	if err := c.st.UpdateTool(ctx, st, true); err != nil {
		return nil, storeErr(cur.Def.Name, err)
	}
	c.forget(cur.Def.Name)
	return c.Get(ctx, cur.Def.Name)
}

func sameDefinition(a, b *Definition) (bool, error) {
	ja, err := json.Marshal(a)
	if err != nil {
		return false, err
	}
	jb, err := json.Marshal(b)
	if err != nil {
		return false, err
	}
	return string(ja) == string(jb), nil
}

// Delete removes a tool; its versions go, its executions stay in the audit
// log. An llm may not delete a user's tool.
func (c *Catalog) Delete(ctx context.Context, name string, caller principal.Caller) error {
	cur, err := c.Get(ctx, name)
	if err != nil {
		return err
	}
	if caller.Type == CreatedByLLM && cur.CreatedBy == CreatedByUser {
		return forbidden("an llm may not delete the user's tool %q; a person must delete it", name)
	}
	defer c.forget(name)
	return storeErr(name, c.st.DeleteTool(ctx, name))
}

// transition moves a tool between statuses. from lists the statuses the
// move starts from; a tool already in to is left as it is.
func (c *Catalog) transition(ctx context.Context, name, verb, to string, from []string, caller principal.Caller, personOnly bool) (*Tool, error) {
	cur, err := c.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	if personOnly && caller.Type == CreatedByLLM {
		return nil, forbidden("only a person may %s a tool", verb)
	}
	if caller.Type == CreatedByLLM && cur.CreatedBy == CreatedByUser {
		return nil, forbidden("an llm may not %s the user's tool %q", verb, name)
	}
	if cur.Status == to {
		return cur, nil
	}
	ok := false
	for _, f := range from {
		ok = ok || cur.Status == f
	}
	if !ok {
		return nil, conflict("cannot %s tool %q: it is %s", verb, name, cur.Status)
	}
	if err := c.st.SetToolStatus(ctx, name, to); err != nil {
		return nil, storeErr(name, err)
	}
	c.forget(name)
	return c.Get(ctx, name)
}

// Enable makes a disabled tool active again.
func (c *Catalog) Enable(ctx context.Context, name string, caller principal.Caller) (*Tool, error) {
	return c.transition(ctx, name, "enable", StatusActive, []string{StatusDisabled}, caller, false)
}

// Disable hides an active tool; it can be enabled again.
func (c *Catalog) Disable(ctx context.Context, name string, caller principal.Caller) (*Tool, error) {
	return c.transition(ctx, name, "disable", StatusDisabled, []string{StatusActive}, caller, false)
}

// Approve makes a pending tool active. Only a person may approve.
func (c *Catalog) Approve(ctx context.Context, name string, caller principal.Caller) (*Tool, error) {
	return c.transition(ctx, name, "approve", StatusActive, []string{StatusPendingApproval}, caller, true)
}

// Reject refuses a pending tool; it stays for the record but never runs.
func (c *Catalog) Reject(ctx context.Context, name string, caller principal.Caller) (*Tool, error) {
	return c.transition(ctx, name, "reject", StatusRejected, []string{StatusPendingApproval}, caller, true)
}

// History lists every kept version, oldest first.
func (c *Catalog) History(ctx context.Context, name string) ([]*Version, error) {
	if _, err := c.Get(ctx, name); err != nil {
		return nil, err
	}
	vs, err := c.st.ToolVersions(ctx, name)
	if err != nil {
		return nil, storeErr(name, err)
	}
	out := make([]*Version, 0, len(vs))
	for _, v := range vs {
		t, err := fromStore(v.Tool)
		if err != nil {
			return nil, err
		}
		out = append(out, &Version{Version: v.Version, Def: t.Def, CreatedAt: v.CreatedAt})
	}
	return out, nil
}

// Rollback restores version `to` as a new version.
func (c *Catalog) Rollback(ctx context.Context, name string, to int, caller principal.Caller) (*Tool, error) {
	cur, err := c.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	if caller.Type == CreatedByLLM && cur.CreatedBy == CreatedByUser {
		return nil, forbidden("an llm may not change the user's tool %q", name)
	}
	if to == cur.Version {
		return nil, conflict("tool %q is already at version %d", name, to)
	}
	v, err := c.st.ToolVersion(ctx, name, to)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &errdefs.Error{Code: errdefs.InvalidRequest, Err: fmt.Errorf("tool %q has no version %d", name, to)}
	}
	if err != nil {
		return nil, storeErr(name, err)
	}
	old, err := fromStore(v.Tool)
	if err != nil {
		return nil, err
	}
	return c.replace(ctx, cur, old.Def, caller)
}

// Stats returns catalog-wide counts.
func (c *Catalog) Stats(ctx context.Context) (Stats, error) {
	s, err := c.st.ToolStats(ctx)
	return s, storeErr("", err)
}

// toStore flattens a tool into the store's record.
func toStore(t *Tool) (*store.Tool, error) {
	d := t.Def
	specJSON, err := json.Marshal(d.Spec)
	if err != nil {
		return nil, err
	}
	var limits json.RawMessage
	if d.Limits != nil {
		if limits, err = json.Marshal(d.Limits); err != nil {
			return nil, err
		}
	}
	return &store.Tool{
		Name: d.Name, Description: d.Description, Kind: string(d.Kind), Category: d.Category,
		Parameters: d.Parameters, Permissions: d.Permissions, Secrets: d.Secrets,
		Approval: d.Approval, Isolation: d.Isolation, Limits: limits, Spec: specJSON,
		Status: t.Status, CreatedBy: t.CreatedBy, Version: t.Version,
		UsageCount: t.UsageCount, LastUsedAt: t.LastUsedAt, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}, nil
}

// fromStore rebuilds a tool from the store's record.
func fromStore(st *store.Tool) (*Tool, error) {
	d := &Definition{
		Name: st.Name, Description: st.Description, Kind: toolspec.Kind(st.Kind), Category: st.Category,
		Parameters: st.Parameters, Permissions: st.Permissions, Secrets: st.Secrets,
		Approval: st.Approval, Isolation: st.Isolation,
	}
	if len(st.Limits) > 0 && string(st.Limits) != "null" {
		d.Limits = &Limits{}
		if err := json.Unmarshal(st.Limits, d.Limits); err != nil {
			return nil, fmt.Errorf("stored limits of %q: %w", st.Name, err)
		}
	}
	if k, ok := builtin.Kinds().Get(d.Kind); ok && len(st.Spec) > 0 && string(st.Spec) != "null" {
		spec, err := k.Decode(st.Spec)
		if err != nil {
			return nil, fmt.Errorf("stored spec of %q: %w", st.Name, err)
		}
		d.Spec = spec
	}
	return &Tool{
		Def: d, Status: st.Status, CreatedBy: st.CreatedBy, Version: st.Version,
		UsageCount: st.UsageCount, LastUsedAt: st.LastUsedAt, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt,
	}, nil
}
