package dispatch

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/policy/scrub"
)

// plan is one call, built once, in one place, before anything runs: the
// request the executor gets, the pool key it runs under, the call's
// scrubber, and for an HTTP call that uses secrets the same request with
// stand-in tokens, which the executor gets while the egress proxy holds
// the real one.
type plan struct {
	req *executors.Request
	key host.Key
	// scrub is the daemon's scrubber plus the values of the secrets the
	// call and the calls above it use (nested.go); nil when they use none.
	scrub *scrub.Scrubber
	// standIn is the HTTP request rendered with stand-in tokens; nil when
	// the call uses no secret or the proxy cannot place one.
	standIn *executors.HTTPCall
	// local is set for a kind whose calls the daemon runs itself
	// (kind.Local): no executor and no pool key.
	local    kind.Local
	tool     kind.Tool
	defaults map[string]json.RawMessage
	// change says what the call would change in a file (change.go), read
	// only when it parks for a person; nil for calls of other kinds.
	change func() string
}

// scrubber returns the scrubber for the call's results, errors and record.
// p may be nil.
func (p *plan) scrubber(d *Dispatcher) *scrub.Scrubber {
	if p == nil || p.scrub == nil {
		return d.cfg.Scrubber
	}
	return p.scrub
}

// plan builds the call's plan for validated arguments: the secrets
// resolved, then the kind renders its templates (each value escaped for
// where it lands) and checks what it rendered against policy. On error the
// returned plan (possibly nil) still carries the scrubber for the refusal.
func (d *Dispatcher) plan(ctx context.Context, c *call, res *catalog.Resolved) (*plan, error) {
	def := res.Tool.Def
	// A kind may run on another kind's executor (exec on shell's).
	execKind := d.cfg.Kinds.ExecutorKind(def.Kind)
	req := &executors.Request{
		CallID: c.id, Tool: c.tool, Version: c.version, Caller: c.caller,
		Kind: execKind, Args: c.args, Permissions: def.Permissions, Limits: def.ExecutorLimits(),
	}
	// A nested call's scrubber knows its callers' secrets from the start,
	// so that even its refusals are recorded without them.
	p := &plan{req: req, defaults: res.Schema.Defaults, scrub: d.inheritedScrubber(c.nest)}
	c.secrets = c.nest.secrets
	k, ok := d.cfg.Kinds.Get(def.Kind)
	if !ok || res.Compiled == nil {
		return p, errdefs.Errorf(errdefs.InvalidDefinition, "unknown kind %q", def.Kind)
	}
	dryRunBy := ""
	if c.dryRun {
		dryRunBy = c.caller.Type
	}
	tool := def.KindTool()
	p.tool = tool
	s, err := d.callSecrets(ctx, res, tool, dryRunBy)
	if err != nil {
		return p, err
	}
	if len(s.known) > 0 {
		c.secrets = withSecrets(c.nest.secrets, s.known)
		p.scrub = d.cfg.Scrubber.WithKnown(c.secrets)
	}
	body := &kind.Request{Permissions: req.Permissions}
	kc := &kind.Call{Env: &d.env, Tool: tool, Args: c.args,
		AllowDash: res.Schema.AllowDash, Defaults: res.Schema.Defaults, Secret: s.lookup, Envelopes: s.docs,
		Workspace: callWorkspace(c.worker, tool.Permissions)}
	built, err := res.Compiled.Build(ctx, kc, body)
	if err != nil {
		return p, err
	}
	if body.FS != nil {
		p.change = func() string { return fileChange(kc.Workspace, body.FS) }
	}
	req.Permissions, req.JS, req.Shell, req.HTTP, req.FS = body.Permissions, body.JS, body.Shell, body.HTTP, body.FS
	p.standIn = built.StandIn
	if l, ok := res.Compiled.(kind.Local); ok {
		p.local = l
		fillLimits(&req.Limits, d.localLimits(def.Kind))
		capLimits(&req.Limits, c.worker)
		return p, nil
	}
	if req.JS != nil {
		if err := d.jsState(ctx, c, req.JS); err != nil { // state.go
			return p, err
		}
	}
	fillLimits(&req.Limits, d.cfg.Limits[execKind])
	capLimits(&req.Limits, c.worker)
	if h := req.HTTP; h != nil && h.MaxResponseBytes <= 0 {
		h.MaxResponseBytes = req.Limits.OutputBytes
		if p.standIn != nil {
			p.standIn.MaxResponseBytes = h.MaxResponseBytes
		}
	}
	iso := def.Isolation
	if iso == "" {
		iso = d.cfg.Isolation
	}
	if iso == "" {
		iso = catalog.IsolationProcess
	}
	// A container reaches the egress proxy through the Unix socket the
	// runner binds in, and every request of the call (redirects included)
	// goes there: its executor needs no network of its own, and gets none.
	// A process executor reaches the proxy on the daemon's loopback, so it
	// keeps the host's network.
	keyPerms := req.Permissions
	viaSocket := iso == catalog.IsolationDocker && p.standIn != nil
	if viaSocket {
		keyPerms = slices.DeleteFunc(slices.Clone(keyPerms), func(s string) bool { return s == "network" })
	}
	ms, err := d.callMounts(c.worker, def, req.Permissions)
	if err != nil {
		return p, err
	}
	p.key = d.Key(k, iso, keyPerms).WithMounts(ms)
	p.key.Egress = viaSocket
	if p.key.Host {
		req.Host = &callHost{d: d, parent: c}
	}
	return p, nil
}

// Key is the pool key calls of kind k run under: reset after each call
// when the kind leaves things behind, with the callback channel when its
// calls may call back.
func (d *Dispatcher) Key(k kind.Kind, isolation string, permissions []string) host.Key {
	key := host.NewKey(d.cfg.Kinds.ExecutorKind(k.Name()), isolation, permissions)
	key.Reset = k.ResetAfterCall()
	key.Host = kind.CallsHost(k)
	return key
}

// KindKey is Key for a kind by name; ok is false for a kind not registered.
func (d *Dispatcher) KindKey(name executors.Kind, isolation string, permissions []string) (host.Key, bool) {
	k, ok := d.cfg.Kinds.Get(name)
	if !ok {
		return host.Key{}, false
	}
	return d.Key(k, isolation, permissions), true
}

func fillLimits(l *executors.Limits, def executors.Limits) {
	if l.Timeout <= 0 {
		l.Timeout = def.Timeout
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = def.MemoryBytes
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = def.OutputBytes
	}
	if l.Requests <= 0 {
		l.Requests = def.Requests
	}
}
