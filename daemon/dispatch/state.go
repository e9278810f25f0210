package dispatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolcage/toolcage/daemon/kind/state"
	"github.com/toolcage/toolcage/daemon/toolset"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/scrub"
	"github.com/toolcage/toolcage/store"
)

// A JavaScript call through a worker whose state toolset is on gets the
// worker's state with its request (utils.getState and the rest run in
// the sandbox, which cannot reach the store), and the daemon writes back
// what the call changed, held to the caps the worker's file sets. The
// state is bounded by those caps, so it is small enough to send whole.

// maxJSStateBytes bounds the state a JavaScript call is handed: it
// travels in the executor request, whose gRPC message is capped.
const maxJSStateBytes = 2 << 20

// stateLimits are the caps of w's state toolset; ok is false when w does
// not turn it on.
func stateLimits(c *call) (store.StateLimits, bool) {
	if c.worker == nil {
		return store.StateLimits{}, false
	}
	lt := c.worker.LocalTool("set_state")
	if lt == nil || lt.File != toolset.Source(string(state.Name)) {
		return store.StateLimits{}, false
	}
	s, ok := lt.Def.Spec.(*state.Spec)
	if !ok {
		return store.StateLimits{}, false
	}
	return s.Limits(), true
}

// jsState puts the worker's state into a JavaScript request.
func (d *Dispatcher) jsState(ctx context.Context, c *call, js *executors.JSCall) error {
	lim, ok := stateLimits(c)
	if !ok {
		return nil
	}
	values, err := d.cfg.Store.StateSnapshot(ctx, c.worker.Name)
	if err != nil {
		return &errdefs.Error{Code: errdefs.Internal, Err: err}
	}
	n := 0
	for k, v := range values {
		n += len(k) + len(v)
	}
	if n > maxJSStateBytes {
		return &errdefs.Error{Code: errdefs.LimitExceeded, Err: fmt.Errorf(
			"worker %q keeps %d bytes of state, over the %d a JavaScript call is handed: delete keys with delete_state", c.worker.Name, n, maxJSStateBytes)}
	}
	js.State = &executors.JSState{Values: values, MaxKeys: lim.MaxKeys, MaxKeyBytes: lim.MaxKeyBytes, MaxValueBytes: lim.MaxValueBytes}
	return nil
}

// saveJSState writes a JavaScript call's state changes. Values are
// scrubbed with the call's scrubber first: a secret the tool held never
// reaches the store, where get_state would hand it to the agent.
func (d *Dispatcher) saveJSState(ctx context.Context, c *call, scr *scrub.Scrubber, out *executors.Result) error {
	if len(out.StateChanges) == 0 {
		return nil
	}
	lim, ok := stateLimits(c)
	if !ok {
		return errdefs.Errorf(errdefs.PolicyDenied, "the call wrote state, which its worker does not keep")
	}
	changes := make([]store.StateChange, len(out.StateChanges))
	for i, sc := range out.StateChanges {
		changes[i] = store.StateChange{Key: sc.Key}
		if sc.Value != nil {
			changes[i].Value = scrubJSON(scr, sc.Value)
		}
	}
	err := d.cfg.Store.ApplyState(context.WithoutCancel(ctx), c.worker.Name, changes, lim)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrLimit):
		return &errdefs.Error{Code: errdefs.LimitExceeded, Err: fmt.Errorf("state not saved: %w", err)}
	case errors.Is(err, store.ErrInvalid):
		return &errdefs.Error{Code: errdefs.InvalidArguments, Err: fmt.Errorf("state not saved: %w", err)}
	}
	return &errdefs.Error{Code: errdefs.Internal, Err: err}
}
