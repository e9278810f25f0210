// Package state is the state kind: the tools of the built-in state
// toolset (get_state, set_state, delete_state, list_state_keys), which
// read and write the JSON values the store keeps for the calling worker.
// Its calls run in the daemon (kind.Local): they touch only that
// worker's rows of the store, which the executor cannot reach.
package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/store"
	"github.com/toolcage/toolcage/toolspec"
)

// Name is the kind's name, and its toolset's.
const Name toolspec.Kind = "state"

// The operations, one per tool.
const (
	OpGet    = "get"
	OpSet    = "set"
	OpDelete = "delete"
	OpList   = "list"
)

// Kind is the state kind.
type Kind struct{}

// Name is "state".
func (Kind) Name() toolspec.Kind { return Name }

// Toolset is "state": the kind exists only for that toolset.
func (Kind) Toolset() string { return string(Name) }

// Decode reads a state: block.
func (Kind) Decode(raw json.RawMessage) (kind.Spec, error) { return kind.DecodeSpec[Spec](raw) }

// Required is the problem of a state tool with no block.
func (Kind) Required() kind.Problem { return kind.Problem{Field: "state.op", Message: "is required"} }

// ResetAfterCall is false: no executor runs a state call.
func (Kind) ResetAfterCall() bool { return false }

// Spec is the block of one state tool: what it does and the caps.
type Spec struct {
	Op string `json:"op"`
	// MaxKeys, MaxKeyBytes and MaxValueBytes cap the worker's state
	// (store.StateLimits; zero takes the default).
	MaxKeys       int           `json:"max_keys,omitempty"`
	MaxKeyBytes   int           `json:"max_key_bytes,omitempty"`
	MaxValueBytes kind.ByteSize `json:"max_value_bytes,omitempty"`
}

// Limits are the caps the block sets.
func (s *Spec) Limits() store.StateLimits {
	return store.StateLimits{MaxKeys: s.MaxKeys, MaxKeyBytes: s.MaxKeyBytes, MaxValueBytes: int(s.MaxValueBytes)}.WithDefaults()
}

// Normalize does nothing.
func (s *Spec) Normalize() {}

// Validate checks the operation and the caps.
func (s *Spec) Validate(kind.Tool) []kind.Problem {
	var ps []kind.Problem
	switch s.Op {
	case OpGet, OpSet, OpDelete, OpList:
	default:
		ps = append(ps, kind.Problem{Field: "state.op", Message: fmt.Sprintf("unknown operation %q (want get, set, delete or list)", s.Op)})
	}
	if s.MaxKeys < 0 || s.MaxKeyBytes < 0 || s.MaxValueBytes < 0 {
		ps = append(ps, kind.Problem{Field: "state", Message: "caps must not be negative"})
	}
	return ps
}

// Effects follow the operation: get and list read; set and delete
// change or remove a value. State stays in the daemon.
func (s *Spec) Effects() kind.Effects {
	if s.Op == OpGet || s.Op == OpList {
		return kind.Effects{ReadOnly: true}
	}
	return kind.Effects{Destructive: true}
}

// Check has nothing more to check.
func (s *Spec) Check(kind.Tool) error { return nil }

// Compile keeps the block.
func (s *Spec) Compile(kind.Tool) (kind.Compiled, error) { return &Compiled{spec: s}, nil }

// Compiled is a state tool ready for calls.
type Compiled struct{ spec *Spec }

// Secrets: a state tool uses none.
func (c *Compiled) Secrets(kind.Tool) ([]string, bool) { return nil, false }

// Build leaves the request empty: Run does the work.
func (c *Compiled) Build(context.Context, *kind.Call, *kind.Request) (*kind.Built, error) {
	return &kind.Built{}, nil
}

// args are the tools' arguments; each tool's schema says which it takes.
type args struct {
	Key    string          `json:"key"`
	Value  json.RawMessage `json:"value"`
	Prefix string          `json:"prefix"`
}

// Run reads or writes the calling worker's state.
func (c *Compiled) Run(ctx context.Context, call *kind.LocalCall) (*kind.LocalResult, error) {
	if call.Worker == "" {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "state is kept per worker, and this call came through none")
	}
	st := call.Env.Store
	if st == nil {
		return nil, errdefs.Errorf(errdefs.Internal, "state: no store")
	}
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err}
	}
	lim := c.spec.Limits()
	var out any
	switch c.spec.Op {
	case OpGet:
		e, err := st.GetState(ctx, call.Worker, a.Key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			out = map[string]any{"key": a.Key, "found": false, "value": nil}
		case err != nil:
			return nil, stateErr(err)
		default:
			out = map[string]any{"key": a.Key, "found": true, "value": e.Value, "updated_at": e.UpdatedAt}
		}
	case OpSet:
		if len(a.Value) == 0 {
			return nil, errdefs.Errorf(errdefs.InvalidArguments, "value is required (null is a value; delete_state removes a key)")
		}
		if err := st.SetState(ctx, call.Worker, a.Key, a.Value, lim); err != nil {
			return nil, stateErr(err)
		}
		out = map[string]any{"key": a.Key, "ok": true}
	case OpDelete:
		ok, err := st.DeleteState(ctx, call.Worker, a.Key)
		if err != nil {
			return nil, stateErr(err)
		}
		out = map[string]any{"key": a.Key, "deleted": ok}
	case OpList:
		keys, err := st.ListStateKeys(ctx, call.Worker, a.Prefix, lim.MaxKeys)
		if err != nil {
			return nil, stateErr(err)
		}
		out = map[string]any{"keys": keys}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &kind.LocalResult{Value: b}, nil
}

// stateErr gives a store error its code.
func stateErr(err error) error {
	switch {
	case errors.Is(err, store.ErrLimit):
		return &errdefs.Error{Code: errdefs.LimitExceeded, Err: err}
	case errors.Is(err, store.ErrInvalid):
		return &errdefs.Error{Code: errdefs.InvalidArguments, Err: err}
	case errors.Is(err, store.ErrNotFound):
		return &errdefs.Error{Code: errdefs.InvalidRequest, Err: err}
	}
	return &errdefs.Error{Code: errdefs.Internal, Err: err}
}

// Interface guards.
var (
	_ kind.ToolsetOnly = Kind{}
	_ kind.Spec        = (*Spec)(nil)
	_ kind.Effecter    = (*Spec)(nil)
	_ kind.Local       = (*Compiled)(nil)
)
