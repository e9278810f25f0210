package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/visible"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/scrub"
)

// Nested calls: a tool's code calling other tools (JavaScript's
// utils.callTool). The executor asks the daemon (executors.Host, over the
// go-plugin broker) and the daemon runs the nested call through the same
// pipeline as any call, as the ORIGINAL caller: same worker, token,
// session, profiles, approvals and rate limits, so a tool can reach
// nothing its caller could not call directly. The executor's request
// names only the tool and the arguments; who asks comes from the parent
// call the daemon is running, never from the executor.
//
// Bounds: a chain is at most MaxCallDepth calls deep below the call a
// client made (depth 0), and no tool may appear twice in one chain (A → B
// → A is a cycle, refused before anything runs); both refusals are
// recorded like any. A nested call's record names its parent
// (parent_call_id). A nested call that needs a person's approval parks
// like any call while the parent waits, bounded by the parent's own time
// limit; if the parent's caller does not wait (NoApprovalWait), it is
// refused with approval_required and the approval stays pending. The
// nested calls of one call run one after another (the executor blocks on
// each), so a chain holds at most depth+1 executors at a time.
//
// Secrets: a call's secrets stay known values for every call it causes. A
// nested call inherits the secret values of every call above it, and its
// scrubber redacts them from all it returns and records, as its own; a
// nested call whose tool name or arguments carry one of them (raw, or in
// a form the scrubber knows: encoded, escaped, case-folded) is refused
// before anything runs, and recorded scrubbed. Without the refusal the
// value would reach what the called tool writes where the agent reads it
// (the state and sql toolsets, a fetch_url request to an allowed host), or
// what it sends with its own permissions. A tool that needs a secret names
// it under its own secrets:.

// DefaultMaxCallDepth is how deep nested calls go when the config sets
// no js.max_call_depth.
const DefaultMaxCallDepth = 4

// nesting places a call in its chain of nested calls.
type nesting struct {
	// parent is the id of the call whose code made this one.
	parent string
	depth  int
	// chain lists the tools from the client's call down to the parent.
	chain []string
	// secrets are the secret values every call above this one holds
	// (name → value).
	secrets map[string]string
}

// callHost answers one running call's callbacks.
type callHost struct {
	d      *Dispatcher
	parent *call
}

// CallTool runs a nested call of the parent's.
func (h *callHost) CallTool(ctx context.Context, name string, args json.RawMessage) (*executors.HostCallResult, error) {
	out, err := h.d.callNested(ctx, h.parent, name, args)
	if err != nil {
		return nil, err
	}
	return &executors.HostCallResult{CallID: out.CallID, Value: out.Result, IsError: out.IsError, Error: out.Error}, nil
}

// ListTools lists the active tools the parent's caller may call: its
// worker's, or the catalog's, as its profiles allow.
func (h *callHost) ListTools(ctx context.Context) ([]executors.HostTool, error) {
	tools, err := h.d.CallableTools(ctx, h.parent.view)
	if err != nil {
		return nil, err
	}
	out := make([]executors.HostTool, 0, len(tools))
	for _, t := range tools {
		out = append(out, executors.HostTool{Name: t.Def.Name, Description: t.Def.Description, Parameters: t.Def.Parameters})
	}
	return out, nil
}

// CallableTools lists the active tools the caller of v may call from a
// tool's code, as its profiles allow; meta-tools are not among them.
func (d *Dispatcher) CallableTools(ctx context.Context, v *visible.View) ([]*catalog.Tool, error) {
	tools, _, err := v.List(ctx, visible.Filter{Filter: catalog.Filter{Status: catalog.StatusActive}, Allowed: true, NoMeta: true})
	return tools, err
}

// callNested runs name as a nested call of parent, or records why not.
func (d *Dispatcher) callNested(ctx context.Context, parent *call, name string, args json.RawMessage) (*Outcome, error) {
	n := nesting{parent: parent.id, depth: parent.nest.depth + 1, chain: append(slices.Clone(parent.nest.chain), parent.tool),
		secrets: parent.secrets}
	// A refused call's record names the tool as asked for, scrubbed: a
	// name is the caller's text like its arguments.
	refused := func() *call {
		return &call{id: newCallID(), tool: d.inheritedScrubber(n).Scrub(name), caller: parent.caller, args: args, started: d.now(), nest: n}
	}
	if len(n.secrets) > 0 {
		known := scrub.KnownOnly(n.secrets)
		if known.Scrub(name) != name || known.Scrub(string(args)) != string(args) {
			return nil, d.refuse(ctx, refused(), nil, errdefs.Errorf(errdefs.PolicyDenied,
				"nested call of %q carries the value of a secret the calling tool holds; a tool hands no secret to the tools it calls (the called tool names the secrets it needs under secrets:)", name))
		}
	}
	if n.depth > d.cfg.MaxCallDepth {
		return nil, d.refuse(ctx, refused(), nil, errdefs.LimitError(errdefs.LimitDepth,
			"nested call of %q is %d calls deep, over the limit of %d (js.max_call_depth): %s", name, n.depth, d.cfg.MaxCallDepth, strings.Join(append(n.chain, name), " → ")))
	}
	if slices.Contains(n.chain, name) {
		return nil, d.refuse(ctx, refused(), nil, errdefs.Errorf(errdefs.PolicyDenied,
			"call cycle: %s; a tool may not call itself, directly or through others", strings.Join(append(n.chain, name), " → ")))
	}
	return d.call(ctx, CallRequest{Tool: name, Arguments: args, Caller: parent.caller, NoApprovalWait: parent.noWait}, n)
}

// inheritedScrubber is the daemon's scrubber plus the secret values of
// the calls above a nested call (all of the scrubber when there are none).
func (d *Dispatcher) inheritedScrubber(n nesting) *scrub.Scrubber {
	if len(n.secrets) == 0 {
		return d.cfg.Scrubber
	}
	return d.cfg.Scrubber.WithKnown(n.secrets)
}

// withSecrets is the union of two calls' secret values. A name the two
// hold with different values keeps both, the second under a new name.
func withSecrets(above, own map[string]string) map[string]string {
	if len(above) == 0 {
		return own
	}
	out := maps.Clone(above)
	for k, v := range own {
		name := k
		for i := 2; ; i++ {
			if cur, ok := out[name]; !ok || cur == v {
				break
			}
			name = fmt.Sprintf("%s_%d", k, i)
		}
		out[name] = v
	}
	return out
}

// Interface guards.
var _ executors.Host = (*callHost)(nil)
