package dispatch

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/visible"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
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
	n := nesting{parent: parent.id, depth: parent.nest.depth + 1, chain: append(slices.Clone(parent.nest.chain), parent.tool)}
	if n.depth > d.cfg.MaxCallDepth {
		c := &call{id: newCallID(), tool: name, caller: parent.caller, args: args, started: d.now(), nest: n}
		return nil, d.refuse(ctx, c, nil, errdefs.LimitError(errdefs.LimitDepth,
			"nested call of %q is %d calls deep, over the limit of %d (js.max_call_depth): %s", name, n.depth, d.cfg.MaxCallDepth, strings.Join(append(n.chain, name), " → ")))
	}
	if slices.Contains(n.chain, name) {
		c := &call{id: newCallID(), tool: name, caller: parent.caller, args: args, started: d.now(), nest: n}
		return nil, d.refuse(ctx, c, nil, errdefs.Errorf(errdefs.PolicyDenied,
			"call cycle: %s; a tool may not call itself, directly or through others", strings.Join(append(n.chain, name), " → ")))
	}
	return d.call(ctx, CallRequest{Tool: name, Arguments: args, Caller: parent.caller, NoApprovalWait: parent.noWait}, n)
}

// Interface guards.
var _ executors.Host = (*callHost)(nil)
