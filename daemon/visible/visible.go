// Package visible is the catalog as one caller sees it, and the only code
// that decides which tools that is: a View of (caller, worker, profiles)
// answers which tools exist for the caller (Resolve for the call path,
// Get for the tool routes), which it lists (List), and whether its
// profiles let it call one (Allows). Every entry point asks a View: the
// socket API's route guards and listings, the call pipeline
// (daemon/dispatch), the MCP server, nested calls and the meta-tools.
//
// Through a worker, only the worker's tools exist; any other reads as
// absent (tool_not_found, the catalog's own words). The worker's tools
// come from the sources in sources.go, the one place a new source of
// tools is added. A caller through no worker sees the catalog a person
// manages.
//
// This is a security rule: what a View does not give, an agent can
// neither see nor run.
package visible

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// Config is what Views are built from. Catalog is required.
type Config struct {
	Catalog *catalog.Catalog
	// Made lists the tools the agent of the worker called name made
	// (store.WorkerTools); nil means no agent made any.
	Made func(ctx context.Context, worker string) ([]string, error)
	// Workers finds a registered worker by name; an error wrapping
	// store.ErrNotFound means none is registered by that name. Nil means
	// no caller acts through a worker.
	Workers func(name string) (*worker.Worker, error)
	// Profiles is the set of tool profiles; ProfileCallers maps a
	// lowercased caller id or worker to a lowercased profile name.
	Profiles       *policy.Profiles
	ProfileCallers map[string]string
}

// Views makes the View of each caller. It is safe for concurrent use.
type Views struct{ cfg Config }

// New makes Views from cfg.
func New(cfg Config) *Views { return &Views{cfg: cfg} }

// View is the catalog as one caller sees it, through its worker (or none).
type View struct {
	vs     *Views
	caller principal.Caller
	w      *worker.Worker
}

// For is c's View: through the registered worker c names, else through
// none. This is the one answer to "whose worker is this caller": a caller
// whose token's worker is no longer registered is unauthorized (never
// the catalog at large); a name no worker holds is a label the config's
// profiles may map (only a person can send one, a token names its own).
func (vs *Views) For(c principal.Caller) (*View, error) {
	v := &View{vs: vs, caller: c}
	if c.Worker == "" || vs.cfg.Workers == nil {
		return v, nil
	}
	w, err := vs.cfg.Workers(c.Worker)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if c.TokenID != "" {
			return nil, errdefs.Errorf(errdefs.Unauthorized, "worker %q is no longer registered", c.Worker)
		}
		return v, nil
	case err != nil:
		return nil, err
	}
	v.w = w
	return v, nil
}

// Through is c's View through w (nil: none), for a caller whose worker is
// already found: an MCP session's, or a person exporting a worker's tools
// as its agent sees them.
func (vs *Views) Through(c principal.Caller, w *worker.Worker) *View {
	return &View{vs: vs, caller: c, w: w}
}

// KnownProfile is an invalid_request error for a profile name no config
// defines ("" is no profile and always known).
func (vs *Views) KnownProfile(name string) error {
	name = strings.ToLower(name)
	if name == "" || vs.cfg.Profiles.Has(name) {
		return nil
	}
	names := vs.cfg.Profiles.Names()
	defined := "none"
	if len(names) > 0 {
		defined = strings.Join(names, ", ")
	}
	return errdefs.Errorf(errdefs.InvalidRequest, "no tool profile named %q (defined: %s)", name, defined)
}

// Made lists the tools w's agent made, when w lets it make tools.
func (vs *Views) Made(ctx context.Context, w *worker.Worker) ([]string, error) {
	if !w.AgentTools.Create || vs.cfg.Made == nil {
		return nil, nil
	}
	return vs.cfg.Made(ctx, w.Name)
}

// Worker is the worker the View is through, nil for none.
func (v *View) Worker() *worker.Worker { return v.w }

// Caller is the caller whose View it is.
func (v *View) Caller() principal.Caller { return v.caller }

// NotFound is the catalog's own words for a tool a caller does not see:
// whether it exists elsewhere is not told.
func NotFound(name string) error {
	return &errdefs.Error{Code: errdefs.ToolNotFound, Err: fmt.Errorf("no tool named %q", name)}
}

// Resolve resolves the tool called name for a call, with where it comes
// from: tool_not_found for one the caller does not see. Whether its
// profiles let it call the tool is Allows (the call path records that
// refusal); whether its status lets it run is the caller's to check.
func (v *View) Resolve(ctx context.Context, name string) (*catalog.Resolved, Source, error) {
	if v.w == nil {
		res, err := v.vs.cfg.Catalog.Resolve(ctx, name)
		return res, FromCatalog, err
	}
	for i := len(sources) - 1; i >= 0; i-- {
		res, src, err := sources[i].resolve(ctx, v, name)
		if err != nil || res != nil {
			return res, src, err
		}
	}
	return nil, "", NotFound(name)
}

// Get is the tool called name as the caller sees it (a catalog tool as
// stored, with its usage), with where it comes from: tool_not_found for
// one the caller does not see. Like Resolve, it does not ask Allows.
func (v *View) Get(ctx context.Context, name string) (*catalog.Tool, Source, error) {
	if v.w == nil {
		t, err := v.vs.cfg.Catalog.Get(ctx, name)
		return t, FromCatalog, err
	}
	for i := len(sources) - 1; i >= 0; i-- {
		t, src, err := sources[i].get(ctx, v, name)
		if err != nil || t != nil {
			return t, src, err
		}
	}
	return nil, "", NotFound(name)
}

// Filter selects the tools List lists: the catalog's filter (status,
// category, creator, kind, limit and offset), and what narrows it.
type Filter struct {
	catalog.Filter
	// Profile narrows the list to the tools this profile (after the
	// global one) allows; "" for none.
	Profile string
	// Allowed narrows the list to the tools the caller's profiles allow
	// (Allows). A View through a worker always lists only those; through
	// none, it lists the catalog a person manages unless this is set.
	Allowed bool
	// Callable narrows the list to what a call could run now: an active
	// (callable) tool the caller's profiles allow and its effective
	// approval does not block.
	Callable bool
	// NoMeta leaves the meta-tools out.
	NoMeta bool
}

// List lists the tools the caller sees, as f selects them, and their
// total before f's limit and offset: filtered, then paginated, once.
func (v *View) List(ctx context.Context, f Filter) ([]*catalog.Tool, int, error) {
	if err := v.vs.KnownProfile(f.Profile); err != nil {
		return nil, 0, err
	}
	allowed := f.Allowed || f.Callable || v.w != nil
	if allowed {
		if err := v.vs.KnownProfile(v.caller.Profile); err != nil {
			return nil, 0, err
		}
	}
	narrowed := allowed || f.Profile != "" || f.Callable || f.NoMeta
	if v.w == nil && !narrowed {
		return v.vs.cfg.Catalog.List(ctx, f.Filter)
	}
	var all []*catalog.Tool
	var err error
	if v.w == nil {
		cf := f.Filter
		cf.Limit, cf.Offset = 0, 0
		all, _, err = v.vs.cfg.Catalog.List(ctx, cf)
	} else {
		all, err = v.workerTools(ctx)
	}
	if err != nil {
		return nil, 0, err
	}
	kept := slices.DeleteFunc(all, func(t *catalog.Tool) bool {
		return !matches(t, f.Filter) ||
			(f.Profile != "" && !v.profileAllows(t.Def, f.Profile)) ||
			(allowed && v.Allows(t.Def) != nil) ||
			(f.Callable && !v.callable(t)) ||
			(f.NoMeta && IsMeta(t.Def))
	})
	total := len(kept)
	kept = kept[min(f.Offset, total):]
	if f.Limit > 0 && f.Limit < len(kept) {
		kept = kept[:f.Limit]
	}
	return kept, total, nil
}

// matches reports whether t is what f's catalog fields select, as the
// store selects them.
func matches(t *catalog.Tool, f catalog.Filter) bool {
	return (f.Status == "" || t.Status == f.Status) && (f.Kind == "" || string(t.Def.Kind) == f.Kind) &&
		(f.CreatedBy == "" || t.CreatedBy == f.CreatedBy) && (f.Category == "" || strings.EqualFold(t.Def.Category, f.Category))
}

// workerTools lists every tool the View's worker gives, in the sources'
// order; a name two sources give is listed once, as the later one's (the
// one Resolve finds).
func (v *View) workerTools(ctx context.Context) ([]*catalog.Tool, error) {
	lists := make([][]*catalog.Tool, len(sources))
	owner := map[string]int{}
	for i, s := range sources {
		l, err := s.list(ctx, v)
		if err != nil {
			return nil, err
		}
		lists[i] = l
		for _, t := range l {
			owner[t.Def.Name] = i
		}
	}
	var out []*catalog.Tool
	for i, l := range lists {
		for _, t := range l {
			if owner[t.Def.Name] == i {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// callable reports whether a call of t could run now: its status lets it
// and its effective approval does not block it.
func (v *View) callable(t *catalog.Tool) bool {
	return policy.StatusCallable(t.Status) && policy.Approval(v.Approval(t), false) != policy.ApprovalRefuse
}

// profileAllows reports whether profile (after the global one) allows def.
func (v *View) profileAllows(def *catalog.Definition, profile string) bool {
	ok, _, _ := v.vs.cfg.Profiles.Check(def.Name, def.Category, strings.ToLower(profile))
	return ok
}

// Allows refuses (policy_denied) a tool outside the caller's profiles: the
// global one, those the config maps its id and its worker to, the one it
// asked for, and its worker's own. A listing shows no tool a call would
// refuse on profile.
func (v *View) Allows(def *catalog.Definition) error {
	if err := v.vs.KnownProfile(v.caller.Profile); err != nil {
		return err
	}
	profiles := policy.CallerProfiles(v.vs.cfg.ProfileCallers, v.caller.ID, v.caller.Worker, v.caller.Profile)
	if wp := workerProfile(v.w); wp != "" && !slices.Contains(profiles, wp) {
		profiles = append(profiles, wp)
	}
	if err := policy.ProfileAllows(v.vs.cfg.Profiles, profiles, def.Name, def.Category); err != nil {
		return &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	return nil
}

// workerProfile is w's profile, lowercased; "" for none.
func workerProfile(w *worker.Worker) string {
	if w == nil {
		return ""
	}
	return strings.ToLower(w.Profile)
}

// Approval is the approval a call of t through the View's worker gets.
func (v *View) Approval(t *catalog.Tool) string { return Approval(v.w, t) }

// Approval is the approval a call of t through w gets (t's own when w is
// nil): what a worker's agent is told a tool asks before it calls.
func Approval(w *worker.Worker, t *catalog.Tool) string {
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
