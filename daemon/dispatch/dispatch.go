// Package dispatch is the call pipeline every entry point uses (the
// socket API's handlers, the MCP server, the review page, a tool's own
// nested calls and the meta-tools): resolve the tool as the caller sees it
// (daemon/visible), apply the policy decisions, build the call's plan once,
// run it on a pooled executor (Config.Pool) or in the daemon for a local
// kind, scrub what comes back and record the call. It knows nothing of
// HTTP: it takes a CallRequest and returns an Outcome or a coded error.
package dispatch

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/changes"
	"github.com/toolcage/toolcage/daemon/egress"
	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/daemon/kind/builtin"
	"github.com/toolcage/toolcage/daemon/kind/js"
	"github.com/toolcage/toolcage/daemon/visible"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/mounts"
	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/toolcage/toolcage/policy/scrub"
	"github.com/toolcage/toolcage/policy/shellguard"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
	"github.com/toolcage/toolcage/store/workerdb"
)

// Config is everything a Dispatcher works with. Catalog, Store, Pool and
// Scrubber are required; the rest may be left zero.
type Config struct {
	Catalog *catalog.Catalog
	Store   *store.Store
	Pool    Pool
	// Scrubber takes credentials out of everything that leaves the daemon
	// or is stored: results, logs, errors, audited arguments.
	Scrubber *scrub.Scrubber
	// Secrets reads a stored secret's envelope; nil means none is stored.
	Secrets SecretReader
	// Egress puts HTTP tools' secrets into their requests, so that the
	// executor only ever holds stand-in tokens; nil sends the real request
	// to the executor.
	Egress *egress.Proxy
	// Limiter holds the per-call token buckets and concurrency caps.
	Limiter *policy.RateLimiter
	// Profiles is the set of tool profiles; ProfileCallers maps a
	// lowercased caller id or worker to a lowercased profile name.
	Profiles       *policy.Profiles
	ProfileCallers map[string]string
	// ApprovalTimeout is how long a caller waits for a person's decision
	// (2 minutes when zero).
	ApprovalTimeout time.Duration
	// ApprovalValidity is how long after a person allows a call its
	// caller's identical retry may run on that approval, once (approvals.go).
	// Zero: an approval is good only for the caller that waits for it.
	ApprovalValidity time.Duration
	// Events, when set, hears of approvals and recorded calls as they
	// happen, for those who follow them (approvals --watch, audit --follow,
	// the webhook).
	Events Events
	// Kinds are the tool kinds calls are built by (builtin.Kinds() when nil).
	Kinds *kind.Registry
	// Isolation is the isolation of tools that name none ("" = process).
	Isolation string
	// Limits are each kind's default limits, for what a tool leaves unset.
	Limits map[executors.Kind]executors.Limits
	// ShellRules are the shell deny rules.
	ShellRules *shellguard.Rules
	// Guards caches a network guard per allowlist.
	Guards *netguard.Cache
	// AllowPrivateHosts names hosts that may resolve to private addresses.
	AllowPrivateHosts []string
	// NetworkShellTools names the shell tools that may hold network.
	NetworkShellTools []string
	// WorkerDBs keeps each worker's own SQLite database (the sql
	// toolset); nil when the daemon keeps none.
	WorkerDBs *workerdb.Set
	// Workers finds a registered worker (workers.go); nil means no call
	// goes through one.
	Workers WorkerLookup
	// Mounts gives the daemon's own paths, which no mount may reach;
	// each call's mounts are resolved and checked again (mounts.go).
	Mounts func() mounts.Guard
	// MaxPendingApprovals caps the calls of one worker pending a person's
	// approval at once (0: no cap).
	MaxPendingApprovals int
	// ArgumentBounds cap every call's arguments (size, nesting) when it
	// arrives, before they are parsed, parked for a person or stored.
	ArgumentBounds policy.ArgumentBounds
	// MaxCallDepth bounds nested calls (a tool's code calling tools): a
	// call at this depth may not call another (DefaultMaxCallDepth when
	// zero; the call a client makes is at depth 0).
	MaxCallDepth int
	// Changes, when set, tells calls waiting for a person's approval that
	// the tools changed: one whose tool was deleted, disabled or changed
	// meanwhile ends at once instead of at the approval timeout.
	Changes *changes.Broadcaster
	// Metrics, when set, counts each recorded call.
	Metrics Metrics
	Logger  *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Pool runs a planned call's request on an executor of key and returns
// what the executor answered or a coded error (executor_failed, timeout,
// limit_exceeded, rate_limited for a busy key). The daemon's is the warm
// pool of executors/host; tests give a fake.
type Pool interface {
	Execute(ctx context.Context, key host.Key, req *executors.Request) (*executors.Result, error)
}

// SecretReader reads one stored secret's decrypted envelope. It returns
// an error wrapping store.ErrNotFound for a secret that is not stored and
// store.ErrDecrypt for one the key cannot open.
type SecretReader interface {
	Secret(ctx context.Context, name string) ([]byte, error)
}

// Metrics counts recorded calls and what scrubbing took out of them.
type Metrics interface {
	// ObserveCall counts one recorded call; kind is empty when the call
	// was refused before its kind was known.
	ObserveCall(tool, kind, outcome string, d time.Duration)
	// ObserveRedactions counts the redaction markers scrubbing put into
	// one call's result.
	ObserveRedactions(tool string, n int)
}

// Events hears what the dispatcher does, as it happens. Its methods are
// called on the call path and must not block.
type Events interface {
	// ApprovalChanged is a new pending approval, or one just decided
	// (allowed, denied, expired).
	ApprovalChanged(a *store.Approval)
	// CallRecorded is a call whose audit record was just written.
	CallRecorded(e *store.Execution)
}

// Dispatcher takes one call from a resolved tool to an audit record.
type Dispatcher struct {
	cfg       Config
	env       kind.Env
	log       *slog.Logger
	now       func() time.Time
	approvals *approvalQueue
	// views decides which tools each caller sees (daemon/visible).
	views *visible.Views
	// observe, when set (tests only), sees each request as the executor
	// gets it.
	observe func(*executors.Request)
}

// New builds a Dispatcher from cfg.
func New(cfg Config) *Dispatcher {
	d := &Dispatcher{cfg: cfg, log: cfg.Logger, now: cfg.Now, approvals: newApprovalQueue(cfg.ApprovalTimeout)}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.cfg.Guards == nil {
		d.cfg.Guards = netguard.NewCache(64)
	}
	if d.cfg.Limiter == nil {
		d.cfg.Limiter = policy.NewRateLimiter(policy.RateLimitConfig{})
	}
	if d.cfg.Kinds == nil {
		d.cfg.Kinds = builtin.Kinds()
	}
	if d.cfg.MaxCallDepth <= 0 {
		d.cfg.MaxCallDepth = DefaultMaxCallDepth
	}
	vc := visible.Config{Catalog: cfg.Catalog, Workers: cfg.Workers, Profiles: cfg.Profiles, ProfileCallers: cfg.ProfileCallers}
	if cfg.Store != nil {
		vc.Made = cfg.Store.WorkerTools
	}
	d.views = visible.New(vc)
	d.env = kind.Env{ShellRules: cfg.ShellRules, Guards: d.cfg.Guards, AllowPrivateHosts: cfg.AllowPrivateHosts,
		NetworkShellTools: cfg.NetworkShellTools, StandIns: cfg.Egress != nil, NewToken: egress.NewToken,
		Store: cfg.Store, WorkerDBs: cfg.WorkerDBs}
	return d
}

// Views are the catalog as each caller sees it: the one answer to which
// tools a caller sees, for every entry point.
func (d *Dispatcher) Views() *visible.Views { return d.views }

// Observe makes fn see each request as the executor gets it; for tests.
func (d *Dispatcher) Observe(fn func(*executors.Request)) { d.observe = fn }

// StopWaiting ends every wait for an approval: the daemon is shutting
// down. The approvals stay pending in the store.
func (d *Dispatcher) StopWaiting() { d.approvals.stop() }

// CallRequest is one call of a stored tool.
type CallRequest struct {
	Tool      string
	Arguments json.RawMessage
	Caller    principal.Caller
	// NoApprovalWait makes a call that needs a person's approval return
	// approval_required at once instead of waiting for the decision.
	NoApprovalWait bool
	// OnApprovalWait, when set, is called once the call has parked as
	// pending approval id and its caller starts waiting for a person's
	// decision (an MCP session then sends progress while it waits).
	OnApprovalWait func(id string)
}

// Outcome is a call that ran: what the tool returned, scrubbed.
type Outcome struct {
	CallID  string
	Tool    string
	Version int
	// Result is the tool's JSON value (null when it returned none).
	Result    json.RawMessage
	Logs      []executors.LogLine
	IsError   bool
	Error     string
	Truncated bool
	Duration  time.Duration
}

// Audit outcomes: the store's, which counts a tool's uses by them.
const (
	outcomeOK      = store.OutcomeOK
	outcomeError   = store.OutcomeError
	outcomeFailed  = store.OutcomeFailed
	outcomeRefused = store.OutcomeRefused
)

// AdHocTool names ad-hoc JavaScript runs in the audit log; the colon
// keeps it from ever being a tool's name.
const AdHocTool = "js:adhoc"

// newCallID returns a short random call id.
func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "c" + hex.EncodeToString(b[:])
}

// call is who called what, fixed when the call arrives.
type call struct {
	id      string
	tool    string
	kind    string
	version int
	caller  principal.Caller
	args    json.RawMessage
	started time.Time
	dryRun  bool // an unsaved definition (tools test)
	noWait  bool
	onWait  func(approvalID string)
	// view is the catalog as the caller sees it; worker, its worker, bounds the call when it came through one
	// (workers.go).
	view   *visible.View
	worker *worker.Worker
	// approval is the tool's effective approval for this call.
	approval string
	// defHash is the hash of the tool's definition, for its approvals
	// (approvals.go); set for a call that may park.
	defHash string
	// nest places a nested call in its chain (nested.go); zero for a
	// call a client made.
	nest nesting
	// secrets are the values of every secret this call and the calls
	// above it hold (name → value), set by plan: its nested calls may not
	// carry them, and they are redacted from all they cause (nested.go).
	secrets map[string]string
}

// Call runs a stored tool.
func (d *Dispatcher) Call(ctx context.Context, r CallRequest) (*Outcome, error) {
	return d.call(ctx, r, nesting{})
}

// call runs a stored tool, nested as n says.
func (d *Dispatcher) call(ctx context.Context, r CallRequest, n nesting) (*Outcome, error) {
	v, err := d.views.For(r.Caller)
	if err != nil {
		return nil, err
	}
	res, src, err := v.Resolve(ctx, r.Tool)
	if err != nil {
		return nil, err
	}
	if n.parent != "" && src == visible.FromMeta {
		return nil, visible.NotFound(r.Tool) // meta.go: out of nested calls' reach
	}
	t, w := res.Tool, v.Worker()
	c := &call{id: newCallID(), tool: r.Tool, kind: string(t.Def.Kind), version: t.Version, caller: r.Caller, args: r.Arguments, started: d.now(), noWait: r.NoApprovalWait,
		onWait: r.OnApprovalWait, view: v, worker: w, approval: approvalFor(w, res), nest: n}
	if err := d.boundedArgs(ctx, c); err != nil {
		return nil, err
	}
	if err := v.Allows(t.Def); err != nil {
		return nil, d.refuse(ctx, c, nil, err)
	}
	if !policy.StatusCallable(t.Status) {
		return nil, d.refuse(ctx, c, nil, errdefs.Errorf(errdefs.ToolNotActive, "tool %q is %s; only active tools run", r.Tool, t.Status))
	}
	if err := d.callApproval(ctx, c, res); err != nil {
		return nil, err
	}
	switch policy.Approval(c.approval, false) {
	case policy.ApprovalRefuse:
		return nil, d.refuse(ctx, c, nil, errdefs.Errorf(errdefs.PolicyDenied, "tool %q is blocked by its approval setting", r.Tool))
	case policy.ApprovalPark:
		return d.callAsk(ctx, c, res) // approvals.go
	}
	return d.run(ctx, c, res)
}

// callApproval holds a call of a kind that decides per call (the exec
// toolset's rules, kind.CallApprover) to the stricter of that decision and
// the tool's effective approval. The arguments are validated first; a
// refusal is recorded.
func (d *Dispatcher) callApproval(ctx context.Context, c *call, res *catalog.Resolved) error {
	ca, ok := res.Compiled.(kind.CallApprover)
	if !ok || policy.Approval(c.approval, false) == policy.ApprovalRefuse {
		return nil
	}
	if err := d.validArgs(ctx, c, res); err != nil {
		return err
	}
	tool := res.Tool.Def.KindTool()
	a, err := ca.CallApproval(&kind.Call{Env: &d.env, Tool: tool, Args: c.args, AllowDash: res.Schema.AllowDash, Defaults: res.Schema.Defaults,
		Workspace: callWorkspace(c.worker, tool.Permissions), Protect: callProtect(c.worker, tool.Permissions)})
	if err != nil {
		return d.refuse(ctx, c, nil, err)
	}
	c.approval = policy.Stricter(c.approval, a)
	return nil
}

// DryRun runs an unsaved definition once. It is audited under
// "test:<name>" so it never counts as a use of a stored tool.
// An agent's dry run is what its own tool could be: held to the
// catalog's rules for what agents make (CheckDryRun), and run through its
// worker like any call (its profile, limits, rate limit, state, and the
// tools its code may call).
func (d *Dispatcher) DryRun(ctx context.Context, def *catalog.Definition, args json.RawMessage, caller principal.Caller) (*Outcome, error) {
	v, err := d.views.For(caller)
	if err != nil {
		return nil, err
	}
	if err := d.cfg.Catalog.CheckDryRun(ctx, def, caller); err != nil {
		return nil, err
	}
	res, err := catalog.Compile(&catalog.Tool{Def: def})
	if err != nil {
		return nil, err
	}
	c := &call{id: newCallID(), tool: "test:" + def.Name, kind: string(def.Kind), caller: caller, args: args, started: d.now(), dryRun: true, view: v, worker: v.Worker()}
	if err := d.boundedArgs(ctx, c); err != nil {
		return nil, err
	}
	if err := v.Allows(def); err != nil {
		return nil, d.refuse(ctx, c, nil, err)
	}
	return d.run(ctx, c, res)
}

// AdHocJS runs code that is not stored, like a tool with no parameters.
func (d *Dispatcher) AdHocJS(ctx context.Context, code string, args json.RawMessage, lim catalog.Limits, caller principal.Caller) (*Outcome, error) {
	def := &catalog.Definition{Name: "adhoc", Description: "ad-hoc code", Kind: js.Kind{}.Name(), Spec: js.New(code), Limits: &lim}
	// Ad-hoc code runs outside any worker's tools (the API refuses it to
	// a caller through one); the code's nested calls go their own way.
	c := &call{id: newCallID(), tool: AdHocTool, kind: string(def.Kind), caller: caller, args: args, started: d.now(), view: d.views.Through(caller, nil)}
	if err := d.boundedArgs(ctx, c); err != nil {
		return nil, err
	}
	if err := catalog.Check(def); err != nil {
		return nil, d.refuse(ctx, c, nil, err)
	}
	res, err := catalog.Compile(&catalog.Tool{Def: def})
	if err != nil {
		return nil, err
	}
	return d.run(ctx, c, res)
}

// boundedArgs refuses a call whose arguments pass the bounds, and
// records the refusal without them: what is refused for its size is not
// stored either.
func (d *Dispatcher) boundedArgs(ctx context.Context, c *call) error {
	err := policy.CheckArguments(c.args, d.cfg.ArgumentBounds)
	if err == nil {
		return nil
	}
	n := len(c.args)
	c.args, _ = json.Marshal(fmt.Sprintf("(%d bytes of arguments, not kept: %s)", n, errdefs.LimitOf(err)))
	return d.refuse(ctx, c, nil, err)
}

// normalArgs makes empty arguments {}.
func normalArgs(args json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}")
	}
	return args
}

// validArgs makes empty arguments {} and checks them against the tool's
// schema, recording a refusal.
func (d *Dispatcher) validArgs(ctx context.Context, c *call, res *catalog.Resolved) error {
	c.args = normalArgs(c.args)
	if err := res.Schema.Validate(c.args); err != nil {
		return d.refuse(ctx, c, nil, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err})
	}
	return nil
}

// run validates, plans and executes a call that needs no one's approval.
func (d *Dispatcher) run(ctx context.Context, c *call, res *catalog.Resolved) (*Outcome, error) {
	if err := d.validArgs(ctx, c, res); err != nil {
		return nil, err
	}
	p, err := d.plan(ctx, c, res)
	if err != nil {
		return nil, d.refuse(ctx, c, p.scrubber(d), err)
	}
	return d.execute(ctx, c, p)
}

// execute runs a planned call: rate limits, the egress grant, the
// executor, scrubbing, the audit record.
func (d *Dispatcher) execute(ctx context.Context, c *call, p *plan) (*Outcome, error) {
	scr := p.scrubber(d)
	var wname string
	var wlim policy.RateLimit
	if c.worker != nil && c.worker.RateLimit != nil {
		wname, wlim = c.worker.Name, c.worker.RateLimit.Bucket()
	}
	release, err := d.cfg.Limiter.AllowWorker(c.caller.ID, c.tool, wname, wlim, d.now())
	if err != nil {
		return nil, d.refuse(ctx, c, scr, &errdefs.Error{Code: errdefs.RateLimited, Err: err})
	}
	defer release()
	req := p.req
	if p.standIn != nil {
		var revoke func()
		req, revoke = d.grantEgress(p)
		defer revoke()
	}
	if d.observe != nil {
		d.observe(req)
	}
	var out *executors.Result
	if p.local != nil {
		out, err = d.runLocal(ctx, c, p) // local.go
	} else {
		out, err = d.cfg.Pool.Execute(ctx, p.key, req)
		if err == nil && out != nil {
			err = d.saveJSState(ctx, c, scr, out) // state.go
		}
	}
	if out != nil {
		if n := scrubResult(scr, out); n > 0 && d.cfg.Metrics != nil {
			d.cfg.Metrics.ObserveRedactions(c.tool, n)
		}
	}
	if err != nil {
		return nil, d.finish(ctx, c, scr, failureOutcome(err, p.local != nil), nil, err)
	}
	outcome := outcomeOK
	if out.IsError {
		outcome = outcomeError
	}
	if err := d.finish(ctx, c, scr, outcome, out, nil); err != nil {
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
	return &Outcome{CallID: c.id, Tool: c.tool, Version: c.version, Result: value, Logs: logs,
		IsError: out.IsError, Error: out.Error, Truncated: out.Truncated, Duration: d.now().Sub(c.started)}, nil
}

// failureOutcome is the audit outcome of a call that ended in err once it
// was under way: a policy refusal or a rate limit is refused, and so is a
// local kind's refusal on its own terms (kind.Local: a coded error, such
// as a meta-tool's forbidden or invalid_definition); a timeout, a broken
// limit or a failure is failed.
func failureOutcome(err error, local bool) string {
	switch code := errdefs.CodeOf(err); code {
	case errdefs.PolicyDenied, errdefs.RateLimited:
		return outcomeRefused
	case errdefs.Timeout, errdefs.LimitExceeded, errdefs.ExecutorFailed, errdefs.Unavailable, errdefs.Internal:
		return outcomeFailed
	}
	if local {
		return outcomeRefused
	}
	return outcomeFailed
}

// refuse records a call that was stopped before it ran and returns err.
// scr is the call's scrubber when its secrets are known, else nil.
func (d *Dispatcher) refuse(ctx context.Context, c *call, scr *scrub.Scrubber, err error) error {
	if scr == nil {
		scr = d.inheritedScrubber(c.nest)
	}
	return d.finish(ctx, c, scr, outcomeRefused, nil, err)
}

// finish writes the audit record. It returns callErr (tagged with the call
// id) or, when the record cannot be written, that failure: a call that
// cannot be recorded is not reported as done.
func (d *Dispatcher) finish(ctx context.Context, c *call, scr *scrub.Scrubber, outcome string, out *executors.Result, callErr error) error {
	now := d.now()
	callErr = scrubError(scr, callErr)
	e := &store.Execution{
		ID: c.id, Tool: c.tool, Version: c.version,
		CallerID: c.caller.ID, CallerType: c.caller.Type, Worker: c.caller.Worker,
		TokenID: c.caller.TokenID, Session: c.caller.Session, ParentCallID: c.nest.parent,
		Arguments: scrubJSON(scr, c.args), Outcome: outcome, Duration: now.Sub(c.started),
		StartedAt: c.started, FinishedAt: now,
	}
	if out != nil {
		e.OutputBytes = out.OutputBytes
		e.Error = out.Error
	}
	if callErr != nil {
		e.ErrorCode = string(errdefs.CodeOf(callErr))
		e.Limit = errdefs.LimitOf(callErr)
		e.Error = callErr.Error()
	}
	if d.cfg.Metrics != nil {
		d.cfg.Metrics.ObserveCall(c.tool, c.kind, outcome, e.Duration)
	}
	// The record is written even if the caller has gone away.
	if err := d.cfg.Store.RecordExecution(context.WithoutCancel(ctx), e); err != nil {
		d.log.Error("recording execution", "call_id", c.id, "err", err)
		if callErr == nil {
			return &errdefs.Error{Code: errdefs.Internal, Err: errors.New("the call ran but could not be recorded")}
		}
	} else if d.cfg.Events != nil {
		d.cfg.Events.CallRecorded(e)
	}
	if callErr != nil {
		return &CallError{CallID: c.id, Err: callErr}
	}
	return nil
}

// CallError is an error that ended a call that has an id.
type CallError struct {
	CallID string
	Err    error
}

func (e *CallError) Error() string { return e.Err.Error() }
func (e *CallError) Unwrap() error { return e.Err }

// Interface guards.
var _ Pool = (*host.Pool)(nil)
