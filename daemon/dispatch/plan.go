package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/egress"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/policy"
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
	// call uses; nil when it uses none.
	scrub *scrub.Scrubber
	// standIn is the HTTP request rendered with stand-in tokens; nil when
	// the call uses no secret or the proxy cannot place one.
	standIn *executors.HTTPCall
}

// scrubber returns the scrubber for the call's results, errors and record.
// p may be nil.
func (p *plan) scrubber(d *Dispatcher) *scrub.Scrubber {
	if p == nil || p.scrub == nil {
		return d.cfg.Scrubber
	}
	return p.scrub
}

// plan builds the call's plan for validated arguments: templates rendered
// (each value escaped for where it lands), the rendered command or URL
// checked by policy, the secrets resolved. On error the returned plan
// (possibly nil) still carries the scrubber for the refusal.
func (d *Dispatcher) plan(ctx context.Context, c *call, res *catalog.Resolved) (*plan, error) {
	def := res.Tool.Def
	req := &executors.Request{
		CallID: c.id, Tool: c.tool, Version: c.version, Caller: c.caller,
		Kind: def.Kind, Args: c.args, Permissions: def.Permissions, Limits: def.ExecutorLimits(),
	}
	if def.Kind == executors.KindHTTP && !def.HasPermission("network") {
		// Reaching the network is all an http tool does; its executor gets
		// the host network, and every dial passes the network guard.
		req.Permissions = append(slices.Clone(def.Permissions), "network")
	}
	p := &plan{req: req}
	dryRunBy := ""
	if c.dryRun {
		dryRunBy = c.caller.Type
	}
	switch def.Kind {
	case executors.KindJS:
		// Checked again here: the stored code may predate a stricter rule.
		if err := policy.CheckJSCode(def.JS.Code); err != nil {
			return p, &executors.Error{Code: executors.CodePolicyDenied, Err: err}
		}
		s, err := d.callSecrets(ctx, res, dryRunBy)
		if err != nil {
			return p, err
		}
		p.scrub = s.scrub
		req.JS = &executors.JSCall{Code: def.JS.Code, Secrets: s.docs}
		if def.HasPermission("network") {
			req.JS.AllowedDomains = def.JS.AllowedDomains
			req.JS.AllowPrivateHosts = d.cfg.AllowPrivateHosts
		}
	case executors.KindShell:
		if !policy.ShellNetworkAllowed(def.Name, def.HasPermission("network"), d.cfg.NetworkShellTools) {
			return p, executors.Errorf(executors.CodePolicyDenied,
				"shell tool %q holds the network permission, which the config must grant by name (sandbox.network_shell_tools): a shell command's sockets pass no network guard", def.Name)
		}
		args, err := decodeArgs(c.args)
		if err != nil {
			return p, err
		}
		s, err := d.callSecrets(ctx, res, dryRunBy)
		if err != nil {
			return p, err
		}
		p.scrub = s.scrub
		if req.Shell, err = d.renderShell(res, args, s.lookup); err != nil {
			return p, err
		}
	case executors.KindHTTP:
		args, err := decodeArgs(c.args)
		if err != nil {
			return p, err
		}
		s, err := d.callSecrets(ctx, res, dryRunBy)
		if err != nil {
			return p, err
		}
		p.scrub = s.scrub
		if req.HTTP, p.standIn, err = d.renderHTTPCall(res, args, s.lookup); err != nil {
			return p, err
		}
	default:
		return p, executors.Errorf(executors.CodeInvalidDefinition, "unknown kind %q", def.Kind)
	}
	fillLimits(&req.Limits, d.cfg.Limits[def.Kind])
	if h := req.HTTP; h != nil && h.MaxResponseBytes <= 0 {
		h.MaxResponseBytes = req.Limits.OutputBytes
		if p.standIn != nil {
			p.standIn.MaxResponseBytes = h.MaxResponseBytes
		}
	}
	p.key = host.NewKey(def.Kind, def.Isolation, req.Permissions)
	return p, nil
}

// decodeArgs decodes validated arguments, keeping numbers exact.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, &executors.Error{Code: executors.CodeInvalidArguments, Err: err}
	}
	return m, nil
}

// renderError maps a template error to its code: a missing argument is the
// caller's mistake, a refused value (option injection, NUL) a policy matter.
func renderError(err error) error {
	var miss *policy.MissingArgumentError
	if errors.As(err, &miss) {
		return &executors.Error{Code: executors.CodeInvalidArguments, Err: err}
	}
	return &executors.Error{Code: executors.CodePolicyDenied, Err: err}
}

// renderShell renders a shell tool's command and checks it against the
// deny rules.
func (d *Dispatcher) renderShell(res *catalog.Resolved, args map[string]any, secrets func(string) (string, error)) (*executors.ShellCall, error) {
	r, err := res.Shell.Render(args, policy.ShellOptions{AllowDash: res.Schema.AllowDash, Secrets: secrets})
	if err != nil {
		return nil, renderError(err)
	}
	if r.Mode == policy.ShellModeArgv {
		err = d.cfg.ShellRules.CheckArgv(r.Argv)
	} else {
		err = d.cfg.ShellRules.CheckCommand(r.Command)
	}
	if err != nil {
		return nil, &executors.Error{Code: executors.CodePolicyDenied, Err: err}
	}
	env := make(map[string]string, len(res.Env))
	for k, t := range res.Env {
		// Environment values never pass through a shell's parser: placed
		// verbatim, one variable each.
		v, err := t.Render(args, policy.RenderOptions{AllowMissing: true, Secrets: secrets})
		if err != nil {
			return nil, renderError(err)
		}
		env[k] = v
	}
	return &executors.ShellCall{Argv: r.Argv, Command: r.Command, Env: env, Dir: res.Tool.Def.Shell.Dir}, nil
}

// renderHTTPCall renders an http tool's request twice in one step: with
// the secret values (the real request, URL checked against the tool's
// allowlist; the executor checks again, after DNS, as it dials) and, when
// it uses secrets and the egress proxy runs, with a stand-in token for
// each. The stand-in rendering is nil when a secret lands where the proxy
// cannot put it back (the URL's scheme or host): then the real request
// goes to the executor, as the only way the call can run.
func (d *Dispatcher) renderHTTPCall(res *catalog.Resolved, args map[string]any, secrets func(string) (string, error)) (real, standIn *executors.HTTPCall, err error) {
	if real, err = d.renderHTTP(res, args, secrets); err != nil {
		return nil, nil, err
	}
	if d.cfg.Egress == nil || len(res.Tool.Def.Secrets) == 0 {
		return real, nil, nil
	}
	stand := map[string]string{}
	tokens := func(name string) (string, error) {
		if _, err := secrets(name); err != nil {
			return "", err
		}
		t, ok := stand[name]
		if !ok {
			t = egress.NewToken()
			stand[name] = t
		}
		return t, nil
	}
	r, err := d.renderHTTP(res, args, tokens)
	if err != nil || len(stand) == 0 {
		return real, nil, nil
	}
	ru, err1 := url.Parse(real.URL)
	tu, err2 := url.Parse(r.URL)
	if err1 != nil || err2 != nil || ru.Scheme != tu.Scheme || ru.Host != tu.Host {
		return real, nil, nil
	}
	return real, r, nil
}

// renderHTTP renders an http tool's request and checks the URL against the
// tool's allowlist.
func (d *Dispatcher) renderHTTP(res *catalog.Resolved, args map[string]any, secrets func(string) (string, error)) (*executors.HTTPCall, error) {
	spec := res.Tool.Def.HTTP
	r, err := res.HTTP.Render(args, secrets)
	if err != nil {
		return nil, renderError(err)
	}
	guard, err := d.cfg.Guards.Get(spec.AllowedDomains, d.cfg.AllowPrivateHosts)
	if err != nil {
		return nil, &executors.Error{Code: executors.CodePolicyDenied, Err: err}
	}
	if _, err := guard.Guard.CheckURL(r.URL); err != nil {
		return nil, &executors.Error{Code: executors.CodePolicyDenied, Err: err}
	}
	return &executors.HTTPCall{
		Method: r.Method, URL: r.URL, Headers: r.Headers, Body: r.Body,
		AllowedDomains: spec.AllowedDomains, AllowPrivateHosts: d.cfg.AllowPrivateHosts,
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
