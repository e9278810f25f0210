package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolcage/toolcage/daemon/kind/builtin"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/mounts"
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
	Def       *Definition
	Status    string
	CreatedBy string
	Version   int
	// ApprovedVersion is the last version a person let run (the tool was
	// active at it): what a pending change is shown against. 0 if none.
	ApprovedVersion int
	UsageCount      int64
	LastUsedAt      time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// PersonTool is def as a tool no catalog row holds: a person's (a
// worker's tool files and toolsets, or the daemon's own meta-tools),
// active, at version 1.
func PersonTool(def *Definition) *Tool {
	return &Tool{Def: def, Status: StatusActive, CreatedBy: CreatedByUser, Version: 1}
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
	st   *store.Store
	opts options

	// made holds agents' creates to the tool cap (agentcaps.go).
	made agentMade

	mu sync.RWMutex
	// active caches resolved tools and compiled schemas for the call path;
	// every mutation drops the tool's entry.
	active map[string]*Resolved
}

// AgentRules are what an agent's worker allows the tools the agent makes.
type AgentRules struct {
	// Secrets is the worker's grant (secrets: in the worker file): the only
	// secrets an agent's tool may name. Empty grants none.
	Secrets []string
	// AlwaysPending makes every tool the agent creates or changes wait for
	// a person, even bare JavaScript.
	AlwaysPending bool
	// Mounts are the host paths (resolved) the worker grants: its
	// workspace and its mounts: list. An agent's tool may mount a path at
	// or below one, writable only where the grant is. Empty grants none.
	Mounts []MountGrant
	// Reserved are the names the worker's own tools hold (its tool files'
	// and its toolsets'; the meta-tools' are reserved for every tool): a
	// tool the agent makes may not take one, where it would sit in the
	// worker's list beside the tool a call of the name runs, its
	// description passing for that tool's.
	Reserved []string
}

// MountGrant is one host path an agent's tools may mount.
type MountGrant struct {
	Path     string
	Writable bool
}

// RulesFunc finds the rules for an llm caller, usually from its worker
// (caller.Worker). A caller with no worker, or a worker it does not know,
// should get the zero AgentRules: no secrets. An error stops the change.
type RulesFunc func(ctx context.Context, caller principal.Caller) (AgentRules, error)

// Option configures a Catalog.
type Option func(*options)

type options struct {
	alwaysPending bool
	rules         RulesFunc
	mounts        func() mounts.Guard
	onChange      func()
	// maxTools and maxVersions bound what agents keep (agentcaps.go).
	maxTools, maxVersions int
}

// WithMountGuard sets where the catalog learns the daemon's own paths,
// which no tool's mounts may reach (checked when a tool is created or
// changed).
func WithMountGuard(g func() mounts.Guard) Option { return func(o *options) { o.mounts = g } }

// WithAlwaysPending makes every agent's tool start pending_approval
// (agents.always_pending in the daemon's config).
func WithAlwaysPending(on bool) Option { return func(o *options) { o.alwaysPending = on } }

// WithAgentRules sets where the catalog finds an llm caller's AgentRules.
// Without it every agent gets the zero rules: no secret grant.
func WithAgentRules(f RulesFunc) Option { return func(o *options) { o.rules = f } }

// WithOnChange makes the catalog call f after each change it writes (a
// tool created, changed, rolled back, deleted or moved to another status):
// the daemon announces it to those who list tools (MCP sessions).
func WithOnChange(f func()) Option { return func(o *options) { o.onChange = f } }

// New returns a catalog over st.
func New(st *store.Store, opts ...Option) *Catalog {
	c := &Catalog{st: st, active: map[string]*Resolved{}}
	for _, o := range opts {
		o(&c.opts)
	}
	return c
}

// agentRules returns the rules for caller; a person gets none (they do not
// apply to a person's tools).
func (c *Catalog) agentRules(ctx context.Context, caller principal.Caller) (AgentRules, error) {
	if creator(caller) != CreatedByLLM || c.opts.rules == nil {
		return AgentRules{}, nil
	}
	r, err := c.opts.rules(ctx, caller)
	if err != nil {
		return AgentRules{}, fmt.Errorf("rules for the agent's worker %q: %w", caller.Worker, err)
	}
	return r, nil
}

// checkGrant refuses secrets an agent's worker does not grant.
func checkGrant(def *Definition, caller principal.Caller, r AgentRules) error {
	var outside []string
	for _, s := range def.Secrets {
		if !slices.Contains(r.Secrets, s) {
			outside = append(outside, s)
		}
	}
	if len(outside) == 0 {
		return nil
	}
	if caller.Worker == "" {
		return forbidden("tool %q names secrets %v, but an llm caller with no worker is granted no secrets; a person can add them, or run the agent as a worker whose file lists them under secrets:", def.Name, outside)
	}
	return forbidden("tool %q names secrets %v that worker %q does not grant (secrets: in its worker file)", def.Name, outside, caller.Worker)
}

// checkMounts resolves each of def's mounts (it must exist) and refuses
// one that reaches the daemon's own paths; it returns the resolved paths.
func (c *Catalog) checkMounts(def *Definition) ([]string, error) {
	out := make([]string, 0, len(def.Mounts))
	for i, m := range def.Mounts {
		src, err := mounts.Resolve(m.Path)
		if err != nil {
			return nil, invalid(fieldError(fmt.Sprintf("mounts[%d].path", i), err))
		}
		var g mounts.Guard
		if c.opts.mounts != nil {
			g = c.opts.mounts()
		}
		if err := g.Check(src, !m.ReadOnly); err != nil {
			return nil, forbidden("tool %q: mounts[%d]: %v", def.Name, i, err)
		}
		if src != m.Path {
			// What a person approves is the path that is mounted: one
			// reached through a symlink could be pointed elsewhere after
			// (the call refuses that too: dispatch.callMounts).
			return nil, invalid(fieldError(fmt.Sprintf("mounts[%d].path", i),
				fmt.Errorf("%s is reached through a symlink (to %s); write the path itself", m.Path, src)))
		}
		out = append(out, src)
	}
	return out, nil
}

// checkMountGrant refuses mounts an agent's worker does not grant: each
// resolved path must lie at or below a granted one, and a writable mount
// needs a writable grant.
func checkMountGrant(def *Definition, resolved []string, caller principal.Caller, r AgentRules) error {
	for i, src := range resolved {
		writable := !def.Mounts[i].ReadOnly
		granted := slices.ContainsFunc(r.Mounts, func(g MountGrant) bool {
			return (src == g.Path || strings.HasPrefix(src, g.Path+"/")) && (g.Writable || !writable)
		})
		if granted {
			continue
		}
		what := "read-only"
		if writable {
			what = "writable"
		}
		if caller.Worker == "" {
			return forbidden("tool %q mounts %s, but an llm caller with no worker is granted no mounts", def.Name, def.Mounts[i].Path)
		}
		return forbidden("tool %q mounts %s %s, which worker %q does not grant (its workspace and mounts: in its worker file)", def.Name, what, def.Mounts[i].Path, caller.Worker)
	}
	return nil
}

// agentChange applies the rules for a change by caller to a tool made by
// createdBy: the secret grant, the creator's approval default, and whether
// the result waits for a person.
func (c *Catalog) agentChange(ctx context.Context, def *Definition, caller principal.Caller, createdBy string) (pending bool, err error) {
	def.defaultApprovalFor(createdBy)
	resolved, err := c.checkMounts(def)
	if err != nil {
		return false, err
	}
	by := creator(caller)
	if by != CreatedByLLM {
		return false, nil
	}
	r, err := c.agentRules(ctx, caller)
	if err != nil {
		return false, err
	}
	if err := checkGrant(def, caller, r); err != nil {
		return false, err
	}
	if err := checkMountGrant(def, resolved, caller, r); err != nil {
		return false, err
	}
	return policy.StartsPending(string(def.Kind), def.Permissions, def.Secrets, by, c.opts.alwaysPending || r.AlwaysPending), nil
}

// checkReserved refuses an agent a new tool named as one of its worker's
// own (AgentRules.Reserved).
func (c *Catalog) checkReserved(ctx context.Context, def *Definition, caller principal.Caller) error {
	r, err := c.agentRules(ctx, caller)
	if err != nil {
		return err
	}
	if slices.Contains(r.Reserved, def.Name) {
		return conflict("%q is the name of one of worker %q's own tools (its tool files or toolsets); name the tool otherwise", def.Name, caller.Worker)
	}
	return nil
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

func creator(c principal.Caller) string {
	if c.Type == CreatedByLLM {
		return CreatedByLLM
	}
	return CreatedByUser
}

// Create stores a new tool at version 1. A user's tool starts active. An
// llm's tool may name only the secrets its worker grants, and starts
// pending_approval unless it is JavaScript with no permissions and no
// secrets (policy.StartsPending); with no approval written it asks for
// each call (DefaultApproval).
func (c *Catalog) Create(ctx context.Context, def *Definition, caller principal.Caller) (*Tool, error) {
	if err := Check(def); err != nil {
		return nil, err
	}
	by := creator(caller)
	if err := c.checkReserved(ctx, def, caller); err != nil {
		return nil, err
	}
	made, err := c.reserveTool(ctx, caller)
	if err != nil {
		return nil, err
	}
	name := ""
	defer func() { made(name) }()
	pending, err := c.agentChange(ctx, def, caller, by)
	if err != nil {
		return nil, err
	}
	t := &Tool{Def: def, Status: StatusActive, CreatedBy: by, Version: 1, ApprovedVersion: 1}
	if pending {
		t.Status, t.ApprovedVersion = StatusPendingApproval, 0
	}
	st, err := toStore(t)
	if err != nil {
		return nil, err
	}
	if err := c.st.CreateTool(ctx, st); err != nil {
		return nil, storeErr(def.Name, err)
	}
	name = def.Name
	c.forget(def.Name)
	return fromStore(st)
}

// CheckDryRun refuses caller a dry run of def (POST /v1/tools/test) that
// it could not run as a tool of its own without a person: an llm's dry
// run is held to the rules of an llm create (valid, the secrets and mounts
// its worker grants), and runs only what would start active (JavaScript
// with no permissions and no secrets, unless its worker makes every change
// wait). A person's dry run needs only a valid definition.
func (c *Catalog) CheckDryRun(ctx context.Context, def *Definition, caller principal.Caller) error {
	if err := Check(def); err != nil {
		return err
	}
	if creator(caller) != CreatedByLLM {
		return nil
	}
	if len(def.Secrets) > 0 {
		return errdefs.Errorf(errdefs.PolicyDenied, "an llm caller's dry run may not use secrets (%s); create the tool and have it approved",
			strings.Join(def.Secrets, ", "))
	}
	pending, err := c.agentChange(ctx, def, caller, CreatedByLLM)
	if err != nil {
		return err
	}
	if pending {
		return errdefs.Errorf(errdefs.PolicyDenied, "an llm caller's dry run runs only what its own tool could run without a person's approval "+
			"(JavaScript with no permissions and no secrets); create tool %q and have a person approve it", def.Name)
	}
	return nil
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

// forget drops name's cached resolution. Every write calls it once the
// store has the change, so it is also where the change is announced.
func (c *Catalog) forget(name string) {
	c.mu.Lock()
	delete(c.active, name)
	c.mu.Unlock()
	if c.opts.onChange != nil {
		c.opts.onChange()
	}
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
// change a user's tool; an llm change is held to the same rules as an llm
// create (secret grant; back to pending_approval where StartsPending says).
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
	pending, err := c.agentChange(ctx, def, caller, cur.CreatedBy)
	if err != nil {
		return nil, err
	}
	same, err := sameDefinition(cur.Def, def)
	if err != nil {
		return nil, err
	}
	if same {
		return cur, nil
	}
	if err := c.checkVersionCap(cur, caller); err != nil {
		return nil, err
	}
	next := *cur
	next.Def = def
	next.Version = cur.Version + 1
	if pending && cur.Status != StatusRejected {
		next.Status = StatusPendingApproval
	}
	if next.Status == StatusActive {
		next.ApprovedVersion = next.Version
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
// log. An llm may not delete a user's tool, and deletes its own only when
// it confirms (confirmed: the API's ?confirm=true), as a destructive act.
func (c *Catalog) Delete(ctx context.Context, name string, caller principal.Caller, confirmed bool) error {
	cur, err := c.Get(ctx, name)
	if err != nil {
		return err
	}
	if caller.Type == CreatedByLLM && cur.CreatedBy == CreatedByUser {
		return forbidden("an llm may not delete the user's tool %q; a person must delete it", name)
	}
	if creator(caller) == CreatedByLLM && !confirmed {
		return errdefs.Errorf(errdefs.InvalidRequest, "deleting tool %q cannot be undone: confirm it (DELETE /v1/tools/%s?confirm=true, or toolcage tools delete --confirm)", name, name)
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
	set := c.st.SetToolStatus
	switch to {
	case StatusActive:
		// Enable and approve: a person lets the current version run.
		set = func(ctx context.Context, name, _ string) error { return c.st.ActivateTool(ctx, name) }
	case StatusDisabled:
		// Who disabled it decides who may enable it (Enable).
		set = func(ctx context.Context, name, _ string) error { return c.st.DisableTool(ctx, name, creator(caller)) }
	}
	if err := set(ctx, name, to); err != nil {
		return nil, storeErr(name, err)
	}
	c.forget(name)
	return c.Get(ctx, name)
}

// Enable makes a disabled tool active again. An llm may enable only a
// tool an llm disabled: a person's disable is the person's to undo.
func (c *Catalog) Enable(ctx context.Context, name string, caller principal.Caller) (*Tool, error) {
	if creator(caller) == CreatedByLLM {
		cur, err := c.Get(ctx, name)
		if err != nil {
			return nil, err
		}
		if cur.Status == StatusDisabled && cur.CreatedBy == CreatedByLLM {
			by, err := c.st.ToolDisabledBy(ctx, name)
			if err != nil {
				return nil, storeErr(name, err)
			}
			if by != CreatedByLLM {
				return nil, forbidden("a person disabled tool %q; only a person may enable it again", name)
			}
		}
	}
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
	cur, err := c.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	vs, err := c.st.ToolVersions(ctx, name)
	if err != nil {
		return nil, storeErr(name, err)
	}
	out := make([]*Version, 0, len(vs))
	for _, v := range vs {
		v.Tool.CreatedBy = cur.CreatedBy // the approval default follows the creator
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
	v.Tool.CreatedBy = cur.CreatedBy
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
	var mounts json.RawMessage
	if len(d.Mounts) > 0 {
		if mounts, err = json.Marshal(d.Mounts); err != nil {
			return nil, err
		}
	}
	return &store.Tool{
		Mounts: mounts,
		Name:   d.Name, Description: d.Description, Kind: string(d.Kind), Category: d.Category,
		Parameters: d.Parameters, Permissions: d.Permissions, Secrets: d.Secrets,
		Approval: d.WrittenApproval(), Isolation: d.Isolation, Limits: limits, Spec: specJSON,
		Status: t.Status, CreatedBy: t.CreatedBy, Version: t.Version, ApprovedVersion: t.ApprovedVersion,
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
	d.defaultApprovalFor(st.CreatedBy)
	if len(st.Limits) > 0 && string(st.Limits) != "null" {
		d.Limits = &Limits{}
		if err := json.Unmarshal(st.Limits, d.Limits); err != nil {
			return nil, fmt.Errorf("stored limits of %q: %w", st.Name, err)
		}
	}
	if len(st.Mounts) > 0 && string(st.Mounts) != "null" {
		if err := json.Unmarshal(st.Mounts, &d.Mounts); err != nil {
			return nil, fmt.Errorf("stored mounts of %q: %w", st.Name, err)
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
		Def: d, Status: st.Status, CreatedBy: st.CreatedBy, Version: st.Version, ApprovedVersion: st.ApprovedVersion,
		UsageCount: st.UsageCount, LastUsedAt: st.LastUsedAt, CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt,
	}, nil
}
