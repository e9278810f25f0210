package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/store"
)

// Dispatcher takes one call from a resolved tool to an audit record: status
// and approval checks, argument validation, the executor, the record.
type Dispatcher struct {
	catalog  *catalog.Catalog
	pool     *host.Pool
	store    *store.Store
	jsLimits executors.Limits
	log      *slog.Logger
	metrics  *metrics
}

// Audit outcomes.
const (
	outcomeOK      = "ok"
	outcomeError   = "error"
	outcomeFailed  = "failed"
	outcomeRefused = "refused"
)

// adHocTool names ad-hoc JavaScript runs in the audit log; the colon keeps
// it from ever being a tool's name.
const adHocTool = "js:adhoc"

// newCallID returns a short random call id.
func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "c" + hex.EncodeToString(b[:])
}

// Call runs a stored tool.
func (d *Dispatcher) Call(ctx context.Context, name string, args json.RawMessage, caller executors.Caller) (*api.CallResponse, error) {
	res, err := d.catalog.Resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	t := res.Tool
	call := &pendingCall{id: newCallID(), tool: name, version: t.Version, caller: caller, args: args, started: time.Now()}
	if t.Status != catalog.StatusActive {
		return nil, d.refuse(ctx, call, executors.Errorf(executors.CodeToolNotActive, "tool %q is %s; only active tools run", name, t.Status))
	}
	switch t.Def.Approval {
	case catalog.ApprovalBlocked:
		return nil, d.refuse(ctx, call, executors.Errorf(executors.CodePolicyDenied, "tool %q is blocked by its approval setting", name))
	case catalog.ApprovalAsk:
		return nil, d.refuse(ctx, call, executors.Errorf(executors.CodeApprovalRequired, "tool %q needs a person's approval for each call, and this daemon has no approval queue yet", name))
	}
	return d.run(ctx, call, t.Def, res.Schema)
}

// DryRun runs an unsaved definition once. It is audited under
// "test:<name>" so it never counts as a use of a stored tool.
func (d *Dispatcher) DryRun(ctx context.Context, def *catalog.Definition, args json.RawMessage, caller executors.Caller) (*api.CallResponse, error) {
	if err := catalog.Check(def); err != nil {
		return nil, err
	}
	schema, err := catalog.CompileSchema(def.Parameters)
	if err != nil {
		return nil, &executors.Error{Code: executors.CodeInvalidDefinition, Err: err}
	}
	call := &pendingCall{id: newCallID(), tool: "test:" + def.Name, caller: caller, args: args, started: time.Now()}
	return d.run(ctx, call, def, schema)
}

// AdHocJS runs code that is not stored, like a tool with no parameters.
func (d *Dispatcher) AdHocJS(ctx context.Context, code string, args json.RawMessage, lim catalog.Limits, caller executors.Caller) (*api.CallResponse, error) {
	def := &catalog.Definition{Name: "adhoc", Description: "ad-hoc code", Kind: executors.KindJS,
		JS: &catalog.JSSpec{Code: code}, Limits: &lim}
	call := &pendingCall{id: newCallID(), tool: adHocTool, caller: caller, args: args, started: time.Now()}
	if err := catalog.Check(def); err != nil {
		return nil, d.refuse(ctx, call, err)
	}
	schema, err := catalog.CompileSchema(def.Parameters)
	if err != nil {
		return nil, err
	}
	return d.run(ctx, call, def, schema)
}

type pendingCall struct {
	id      string
	tool    string
	version int
	caller  executors.Caller
	args    json.RawMessage
	started time.Time
}

func (d *Dispatcher) run(ctx context.Context, call *pendingCall, def *catalog.Definition, schema *catalog.Schema) (*api.CallResponse, error) {
	if len(bytes.TrimSpace(call.args)) == 0 || string(bytes.TrimSpace(call.args)) == "null" {
		call.args = json.RawMessage("{}")
	}
	if err := schema.Validate(call.args); err != nil {
		return nil, d.refuse(ctx, call, &executors.Error{Code: executors.CodeInvalidArguments, Err: err})
	}
	req, err := d.request(call, def)
	if err != nil {
		return nil, d.refuse(ctx, call, err)
	}
	key := host.NewKey(def.Kind, def.Isolation, def.Permissions)
	out, err := d.pool.Execute(ctx, key, req)
	if err != nil {
		outcome := outcomeFailed
		if c := executors.CodeOf(err); c == executors.CodePolicyDenied || c == executors.CodeRateLimited {
			outcome = outcomeRefused
		}
		return nil, d.finish(ctx, call, outcome, nil, err)
	}
	outcome := outcomeOK
	if out.IsError {
		outcome = outcomeError
	}
	if err := d.finish(ctx, call, outcome, out, nil); err != nil {
		return nil, err
	}
	logs := out.Logs
	if logs == nil {
		logs = []executors.LogLine{}
	}
	value := out.Value
	if len(value) == 0 {
		value = json.RawMessage("null")
	}
	return &api.CallResponse{CallID: call.id, Tool: call.tool, Version: call.version, Result: value, Logs: logs,
		IsError: out.IsError, Error: out.Error, Truncated: out.Truncated,
		DurationMS: float64(time.Since(call.started)) / float64(time.Millisecond)}, nil
}

// request builds the executor request for an already validated call.
func (d *Dispatcher) request(call *pendingCall, def *catalog.Definition) (*executors.Request, error) {
	req := &executors.Request{
		CallID: call.id, Tool: call.tool, Version: call.version, Caller: call.caller,
		Kind: def.Kind, Args: call.args, Permissions: def.Permissions, Limits: def.ExecutorLimits(),
	}
	switch def.Kind {
	case executors.KindJS:
		// Checked again here: the stored code may predate a stricter rule.
		if err := policy.CheckJSCode(def.JS.Code); err != nil {
			return nil, &executors.Error{Code: executors.CodePolicyDenied, Err: err}
		}
		req.JS = &executors.JSCall{Code: def.JS.Code}
		fillLimits(&req.Limits, d.jsLimits)
	default:
		return nil, executors.Errorf(executors.CodeExecutorFailed, "%s tools are not supported by this daemon yet", def.Kind)
	}
	return req, nil
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

// refuse records a call that was stopped before it ran and returns err.
func (d *Dispatcher) refuse(ctx context.Context, call *pendingCall, err error) error {
	return d.finish(ctx, call, outcomeRefused, nil, err)
}

// finish writes the audit record. It returns callErr (tagged with the call
// id) or, when the record cannot be written, that failure: a call that
// cannot be recorded is not reported as done.
func (d *Dispatcher) finish(ctx context.Context, call *pendingCall, outcome string, out *executors.Result, callErr error) error {
	now := time.Now()
	e := &store.Execution{
		ID: call.id, Tool: call.tool, Version: call.version,
		CallerID: call.caller.ID, CallerType: call.caller.Type, Worker: call.caller.Worker,
		Arguments: call.args, Outcome: outcome, Duration: now.Sub(call.started),
		StartedAt: call.started, FinishedAt: now,
	}
	if out != nil {
		e.OutputBytes = out.OutputBytes
		e.Error = out.Error
	}
	if callErr != nil {
		e.ErrorCode = string(executors.CodeOf(callErr))
		e.Limit = executors.LimitOf(callErr)
		e.Error = callErr.Error()
	}
	d.metrics.observe(call.tool, outcome, e.Duration)
	// The record is written even if the caller has gone away.
	if err := d.store.RecordExecution(context.WithoutCancel(ctx), e); err != nil {
		d.log.Error("recording execution", "call_id", call.id, "err", err)
		if callErr == nil {
			return &executors.Error{Code: executors.CodeInternal, Err: errors.New("the call ran but could not be recorded")}
		}
	}
	if callErr != nil {
		return &callError{callID: call.id, err: callErr}
	}
	return nil
}
