package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/egress"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/jscheck"
	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/toolcage/toolcage/policy/scrub"
	"github.com/toolcage/toolcage/policy/shellguard"
	"github.com/toolcage/toolcage/policy/template"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// Dispatcher takes one call from a resolved tool to an audit record: status
// and approval checks, argument validation, the executor, the record.
type Dispatcher struct {
	catalog *catalog.Catalog
	pool    *host.Pool
	store   *store.Store
	log     *slog.Logger
	metrics *metrics

	jsLimits, shellLimits, httpLimits executors.Limits
	shellRules                        *shellguard.Rules
	allowPrivateHosts                 []string
	// guards caches a network guard per allowlist, so a call's URL check
	// does not rebuild one.
	guards *netguard.Cache
	// limiter holds the per-call token buckets and concurrency caps.
	limiter *policy.RateLimiter
	// scrubber takes credentials out of everything that leaves the daemon
	// or is stored: results, logs, errors, audited arguments.
	scrubber *scrub.Scrubber
	// secretsKey decrypts stored secrets; a rotation swaps it (rotate.go).
	// Never logged.
	secretsKey *secretsKey
	// profiles decides which tools each caller may use (profiles.go).
	profiles *callerProfiles
	// networkShellTools may hold the network permission: a shell command's
	// own sockets pass no guard, so each such tool is named in the config.
	networkShellTools []string
	// approvals holds the callers waiting on a person's decision.
	approvals *approvalQueue
	// egress puts HTTP tools' secrets into their requests, so that the
	// executor only ever holds stand-in tokens (egress.go).
	egress *egress.Proxy
	// observe, when set (tests only), sees each request as the executor
	// gets it.
	observe func(*executors.Request)
}

// Audit outcomes: the store's, which counts a tool's uses by them.
const (
	outcomeOK      = store.OutcomeOK
	outcomeError   = store.OutcomeError
	outcomeFailed  = store.OutcomeFailed
	outcomeRefused = store.OutcomeRefused
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
func (d *Dispatcher) Call(ctx context.Context, name string, args json.RawMessage, caller principal.Caller) (*api.CallResponse, error) {
	res, err := d.catalog.Resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	t := res.Tool
	call := &pendingCall{id: newCallID(), tool: name, version: t.Version, caller: caller, args: args, started: time.Now()}
	// Tool profiles: is the tool in the caller's effective set at all?
	if err := d.checkProfile(t.Def, caller); err != nil {
		return nil, d.refuse(ctx, call, err)
	}
	if t.Status != catalog.StatusActive {
		return nil, d.refuse(ctx, call, errdefs.Errorf(errdefs.ToolNotActive, "tool %q is %s; only active tools run", name, t.Status))
	}
	switch t.Def.Approval {
	case catalog.ApprovalBlocked:
		return nil, d.refuse(ctx, call, errdefs.Errorf(errdefs.PolicyDenied, "tool %q is blocked by its approval setting", name))
	case catalog.ApprovalAsk:
		return d.callAsk(ctx, call, res) // approvals.go
	}
	return d.run(ctx, call, res)
}

// DryRun runs an unsaved definition once. It is audited under
// "test:<name>" so it never counts as a use of a stored tool.
func (d *Dispatcher) DryRun(ctx context.Context, def *catalog.Definition, args json.RawMessage, caller principal.Caller) (*api.CallResponse, error) {
	if err := catalog.Check(def); err != nil {
		return nil, err
	}
	res, err := catalog.Compile(&catalog.Tool{Def: def})
	if err != nil {
		return nil, err
	}
	call := &pendingCall{id: newCallID(), tool: "test:" + def.Name, caller: caller, args: args, started: time.Now(), dryRun: true}
	return d.run(ctx, call, res)
}

// AdHocJS runs code that is not stored, like a tool with no parameters.
func (d *Dispatcher) AdHocJS(ctx context.Context, code string, args json.RawMessage, lim catalog.Limits, caller principal.Caller) (*api.CallResponse, error) {
	def := &catalog.Definition{Name: "adhoc", Description: "ad-hoc code", Kind: executors.KindJS,
		JS: &catalog.JSSpec{Code: code}, Limits: &lim}
	call := &pendingCall{id: newCallID(), tool: adHocTool, caller: caller, args: args, started: time.Now()}
	if err := catalog.Check(def); err != nil {
		return nil, d.refuse(ctx, call, err)
	}
	res, err := catalog.Compile(&catalog.Tool{Def: def})
	if err != nil {
		return nil, err
	}
	return d.run(ctx, call, res)
}

type pendingCall struct {
	id      string
	tool    string
	version int
	caller  principal.Caller
	args    json.RawMessage
	started time.Time
	dryRun  bool // an unsaved definition (tools test)
	// scrub is the call's scrubber: the daemon's plus the values of the
	// secrets the call uses. Nil until those are known.
	scrub *scrub.Scrubber
	// jsSecrets are the declared secrets a JavaScript call is given.
	jsSecrets map[string]string
	// egress is an HTTP call's request as rendered with stand-in tokens for
	// its secrets; nil when it uses none (or one the proxy cannot place).
	egress *executors.HTTPCall
}

// scrubber returns the scrubber for call's results, errors and record.
func (d *Dispatcher) scrubberOf(call *pendingCall) *scrub.Scrubber {
	if call.scrub != nil {
		return call.scrub
	}
	return d.scrubber
}

// validArgs makes empty arguments {} and checks them against the tool's
// schema, recording a refusal.
func (d *Dispatcher) validArgs(ctx context.Context, call *pendingCall, res *catalog.Resolved) error {
	if len(bytes.TrimSpace(call.args)) == 0 || string(bytes.TrimSpace(call.args)) == "null" {
		call.args = json.RawMessage("{}")
	}
	if err := res.Schema.Validate(call.args); err != nil {
		return d.refuse(ctx, call, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err})
	}
	return nil
}

func (d *Dispatcher) run(ctx context.Context, call *pendingCall, res *catalog.Resolved) (*api.CallResponse, error) {
	if err := d.validArgs(ctx, call, res); err != nil {
		return nil, err
	}
	req, err := d.request(ctx, call, res)
	if err != nil {
		return nil, d.refuse(ctx, call, err)
	}
	return d.execute(ctx, call, res, req)
}

// execute runs a call whose arguments are valid and whose request is
// built: rate limits, the executor, scrubbing, the audit record.
func (d *Dispatcher) execute(ctx context.Context, call *pendingCall, res *catalog.Resolved, req *executors.Request) (*api.CallResponse, error) {
	def := res.Tool.Def
	release, err := d.limiter.Allow(call.caller.ID, call.tool, time.Now())
	if err != nil {
		return nil, d.refuse(ctx, call, &errdefs.Error{Code: errdefs.RateLimited, Err: err})
	}
	defer release()
	if call.egress != nil {
		defer d.grantEgress(call, req)()
	}
	key := host.NewKey(def.Kind, def.Isolation, req.Permissions)
	if d.observe != nil {
		d.observe(req)
	}
	out, err := d.pool.Execute(ctx, key, req)
	if out != nil {
		scrubResult(d.scrubberOf(call), out)
	}
	if err != nil {
		outcome := outcomeFailed
		if c := errdefs.CodeOf(err); c == errdefs.PolicyDenied || c == errdefs.RateLimited {
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
	logs := make([]api.LogLine, len(out.Logs))
	for i, l := range out.Logs {
		logs[i] = api.LogLine(l)
	}
	value := out.Value
	if len(value) == 0 {
		value = json.RawMessage("null")
	}
	return &api.CallResponse{CallID: call.id, Tool: call.tool, Version: call.version, Result: value, Logs: logs,
		IsError: out.IsError, Error: out.Error, Truncated: out.Truncated,
		DurationMS: float64(time.Since(call.started)) / float64(time.Millisecond)}, nil
}

// request builds the executor request for an already validated call:
// templates rendered, each value escaped for where it lands, and the
// rendered command or URL checked by policy before anything runs.
func (d *Dispatcher) request(ctx context.Context, call *pendingCall, res *catalog.Resolved) (*executors.Request, error) {
	def := res.Tool.Def
	req := &executors.Request{
		CallID: call.id, Tool: call.tool, Version: call.version, Caller: call.caller,
		Kind: def.Kind, Args: call.args, Permissions: def.Permissions, Limits: def.ExecutorLimits(),
	}
	if def.Kind == executors.KindHTTP && !def.HasPermission("network") {
		// Reaching the network is all an http tool does; its executor gets
		// the host network, and every dial passes the network guard.
		req.Permissions = append(slices.Clone(def.Permissions), "network")
	}
	switch def.Kind {
	case executors.KindJS:
		// Checked again here: the stored code may predate a stricter rule.
		if err := jscheck.Check(def.JS.Code); err != nil {
			return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
		}
		if _, err := d.secretsFor(ctx, call, res); err != nil {
			return nil, err
		}
		req.JS = &executors.JSCall{Code: def.JS.Code, Secrets: call.jsSecrets}
		if def.HasPermission("network") {
			req.JS.AllowedDomains = def.JS.AllowedDomains
			req.JS.AllowPrivateHosts = d.allowPrivateHosts
		}
		fillLimits(&req.Limits, d.jsLimits)
	case executors.KindShell:
		if def.HasPermission("network") && !slices.Contains(d.networkShellTools, def.Name) {
			return nil, errdefs.Errorf(errdefs.PolicyDenied,
				"shell tool %q holds the network permission, which the config must grant by name (sandbox.network_shell_tools): a shell command's sockets pass no network guard", def.Name)
		}
		args, secrets, err := d.argsAndSecrets(ctx, call, res)
		if err != nil {
			return nil, err
		}
		sh, err := d.renderShell(res, args, secrets)
		if err != nil {
			return nil, err
		}
		req.Shell = sh
		fillLimits(&req.Limits, d.shellLimits)
	case executors.KindHTTP:
		args, secrets, err := d.argsAndSecrets(ctx, call, res)
		if err != nil {
			return nil, err
		}
		h, err := d.renderHTTP(res, args, secrets)
		if err != nil {
			return nil, err
		}
		req.HTTP = h
		fillLimits(&req.Limits, d.httpLimits)
		if req.HTTP.MaxResponseBytes <= 0 {
			req.HTTP.MaxResponseBytes = req.Limits.OutputBytes
		}
		call.egress = d.renderForEgress(res, args, secrets, h)
	default:
		return nil, errdefs.Errorf(errdefs.InvalidDefinition, "unknown kind %q", def.Kind)
	}
	return req, nil
}

// argsAndSecrets decodes a templated call's arguments and resolves its
// secrets.
func (d *Dispatcher) argsAndSecrets(ctx context.Context, call *pendingCall, res *catalog.Resolved) (map[string]any, func(string) (string, error), error) {
	args, err := decodeArgs(call.args)
	if err != nil {
		return nil, nil, err
	}
	secrets, err := d.secretsFor(ctx, call, res)
	if err != nil {
		return nil, nil, err
	}
	return args, secrets, nil
}

// secretsFor resolves the secrets call uses and sets its scrubber.
func (d *Dispatcher) secretsFor(ctx context.Context, call *pendingCall, res *catalog.Resolved) (func(string) (string, error), error) {
	dryRunBy := ""
	if call.dryRun {
		dryRunBy = call.caller.Type
	}
	lookup, scr, docs, err := d.callSecrets(ctx, res, dryRunBy)
	if err != nil {
		return nil, err
	}
	call.scrub = scr
	call.jsSecrets = docs
	return lookup, nil
}

// Rendering is what a call of a tool would run, without running it.
type Rendering struct {
	Tool    string                   `json:"tool"`
	Version int                      `json:"version"`
	Kind    executors.Kind           `json:"kind"`
	Shell   *template.ShellRendering `json:"shell,omitempty"`
	HTTP    *template.HTTPRendering  `json:"http,omitempty"`
}

// Render validates args and renders a stored tool's command or request,
// with every policy check a call would meet, and runs nothing.
func (d *Dispatcher) Render(ctx context.Context, name string, args json.RawMessage) (*Rendering, error) {
	res, err := d.catalog.Resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	def := res.Tool.Def
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	if err := res.Schema.Validate(args); err != nil {
		return nil, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err}
	}
	m, err := decodeArgs(args)
	if err != nil {
		return nil, err
	}
	out := &Rendering{Tool: name, Version: res.Tool.Version, Kind: def.Kind}
	if def.Kind != executors.KindShell && def.Kind != executors.KindHTTP {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "%s tools have no template to render", def.Kind)
	}
	// Rendered with the real values, so every check a call meets applies;
	// what is shown has each value redacted.
	secrets, scr, _, err := d.callSecrets(ctx, res, "")
	if err != nil {
		return nil, err
	}
	switch def.Kind {
	case executors.KindShell:
		sh, err := d.renderShell(res, m, secrets)
		if err != nil {
			return nil, redactError(scr, err)
		}
		mode := template.ShellModeShell
		if sh.Argv != nil {
			mode = template.ShellModeArgv
		}
		out.Shell = &template.ShellRendering{Mode: mode, Argv: sh.Argv, Command: sh.Command}
	case executors.KindHTTP:
		h, err := d.renderHTTP(res, m, secrets)
		if err != nil {
			return nil, redactError(scr, err)
		}
		out.HTTP = &template.HTTPRendering{Method: h.Method, URL: h.URL, Headers: h.Headers, Body: h.Body}
	}
	if scr != nil {
		redactRendering(scr, out)
	}
	return out, nil
}

// redactError scrubs err with s, the scrubber of a rendering that used
// secrets; with none (s nil) err is returned as it was.
func redactError(s *scrub.Scrubber, err error) error {
	if s == nil {
		return err
	}
	return scrubError(s, err)
}

// redactRendering scrubs a rendering that used secrets, so what is shown
// has each secret value redacted.
func redactRendering(s *scrub.Scrubber, r *Rendering) {
	if sh := r.Shell; sh != nil {
		for i, a := range sh.Argv {
			sh.Argv[i] = s.Scrub(a)
		}
		sh.Command = s.Scrub(sh.Command)
	}
	if h := r.HTTP; h != nil {
		h.URL = s.Scrub(h.URL)
		for k, v := range h.Headers {
			h.Headers[k] = s.Scrub(v)
		}
		if len(h.Body) > 0 {
			h.Body = s.ScrubBytes(h.Body)
		}
	}
}

// decodeArgs decodes validated arguments, keeping numbers exact.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err}
	}
	return m, nil
}

// renderError maps a template error to its code: a missing argument is the
// caller's mistake, a refused value (option injection, NUL) a policy matter.
func renderError(err error) error {
	var miss *template.MissingArgumentError
	if errors.As(err, &miss) {
		return &errdefs.Error{Code: errdefs.InvalidArguments, Err: err}
	}
	return &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
}

// RenderShell renders a shell tool's command and checks it against the
// deny rules; it is what `toolcage tools render` shows.
func (d *Dispatcher) renderShell(res *catalog.Resolved, args map[string]any, secrets func(string) (string, error)) (*executors.ShellCall, error) {
	r, err := res.Shell.Render(args, template.ShellOptions{AllowDash: res.Schema.AllowDash, Secrets: secrets})
	if err != nil {
		return nil, renderError(err)
	}
	if r.Mode == template.ShellModeArgv {
		err = d.shellRules.CheckArgv(r.Argv)
	} else {
		err = d.shellRules.CheckCommand(r.Command)
	}
	if err != nil {
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	env := make(map[string]string, len(res.Env))
	for k, t := range res.Env {
		// Environment values never pass through a shell's parser: placed
		// verbatim, one variable each.
		v, err := t.Render(args, template.RenderOptions{AllowMissing: true, Secrets: secrets})
		if err != nil {
			return nil, renderError(err)
		}
		env[k] = v
	}
	return &executors.ShellCall{Argv: r.Argv, Command: r.Command, Env: env, Dir: res.Tool.Def.Shell.Dir}, nil
}

// renderHTTP renders an http tool's request and checks the URL against the
// tool's allowlist; the executor checks again, after DNS, as it dials.
func (d *Dispatcher) renderHTTP(res *catalog.Resolved, args map[string]any, secrets func(string) (string, error)) (*executors.HTTPCall, error) {
	spec := res.Tool.Def.HTTP
	r, err := res.HTTP.Render(args, secrets)
	if err != nil {
		return nil, renderError(err)
	}
	guard, err := d.guards.Get(spec.AllowedDomains, d.allowPrivateHosts)
	if err != nil {
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	if _, err := guard.Guard.CheckURL(r.URL); err != nil {
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	return &executors.HTTPCall{
		Method: r.Method, URL: r.URL, Headers: r.Headers, Body: r.Body,
		AllowedDomains: spec.AllowedDomains, AllowPrivateHosts: d.allowPrivateHosts,
		MaxResponseBytes: int64(spec.MaxResponseBytes),
	}, nil
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
	scr := d.scrubberOf(call)
	callErr = scrubError(scr, callErr)
	e := &store.Execution{
		ID: call.id, Tool: call.tool, Version: call.version,
		CallerID: call.caller.ID, CallerType: call.caller.Type, Worker: call.caller.Worker,
		Arguments: scrubJSON(scr, call.args), Outcome: outcome, Duration: now.Sub(call.started),
		StartedAt: call.started, FinishedAt: now,
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
	d.metrics.observe(call.tool, outcome, e.Duration)
	// The record is written even if the caller has gone away.
	if err := d.store.RecordExecution(context.WithoutCancel(ctx), e); err != nil {
		d.log.Error("recording execution", "call_id", call.id, "err", err)
		if callErr == nil {
			return &errdefs.Error{Code: errdefs.Internal, Err: errors.New("the call ran but could not be recorded")}
		}
	}
	if callErr != nil {
		return &callError{callID: call.id, err: callErr}
	}
	return nil
}
