// Package http is the daemon's side of HTTP tools: the http: block
// (method, URL, params, headers, body templates and the host allowlist),
// its checks, and the request of one call, with its URL checked against
// the allowlist and, when it uses secrets, a second rendering with
// stand-in tokens for the egress proxy.
package http

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/toolcage/toolcage/policy/template"
	"github.com/toolcage/toolcage/toolspec"
)

// Kind is the http kind.
type Kind struct{}

// Name is "http".
func (Kind) Name() toolspec.Kind { return toolspec.HTTP }

// Decode reads an http: block.
func (Kind) Decode(raw json.RawMessage) (kind.Spec, error) { return kind.DecodeSpec[Spec](raw) }

// Required is the problem of an http tool with no block.
func (Kind) Required() kind.Problem { return kind.Problem{Field: "http", Message: "is required"} }

// ResetAfterCall is false: the executor runs no code of the tool's.
func (Kind) ResetAfterCall() bool { return false }

// Spec is the body of an http tool.
type Spec struct {
	Method           string            `json:"method"`
	URL              string            `json:"url"`
	Params           map[string]string `json:"params,omitempty"`
	Headers          map[string]string `json:"headers,omitempty"`
	Body             string            `json:"body,omitempty"`
	AllowedDomains   []string          `json:"allowed_domains"`
	MaxResponseBytes kind.ByteSize     `json:"max_response_bytes,omitempty"`
}

// Template returns the template part of the block.
func (s *Spec) Template() template.HTTPSpec {
	return template.HTTPSpec{Method: s.Method, URL: s.URL, Params: s.Params, Headers: s.Headers, Body: s.Body}
}

// Normalize upper-cases the method.
func (s *Spec) Normalize() { s.Method = strings.ToUpper(s.Method) }

// Effects follow the method's HTTP semantics: GET and HEAD are safe, POST
// adds, PUT, PATCH and DELETE change or remove; every request leaves the
// host.
func (s *Spec) Effects() kind.Effects { return MethodEffects(s.Method) }

// MethodEffects are the effects of a request that may use any of methods:
// the worst of them (none counts as destructive). GET, HEAD and OPTIONS
// are safe (RFC 9110 9.2.1), POST adds, any other changes or removes.
func MethodEffects(methods ...string) kind.Effects {
	e := kind.Effects{ReadOnly: len(methods) > 0, OpenWorld: true}
	if len(methods) == 0 {
		e.Destructive = true
	}
	for _, m := range methods {
		switch strings.ToUpper(m) {
		case "GET", "HEAD", "OPTIONS":
		case "POST":
			e.ReadOnly = false
		default:
			e.ReadOnly, e.Destructive = false, true
		}
	}
	return e
}

// Parameters follow from the block's {{vars}}.
func (s *Spec) Parameters() (json.RawMessage, error) {
	return template.GenerateParameters(s.Template())
}

// Validate checks the block's fields.
func (s *Spec) Validate(kind.Tool) []kind.Problem {
	var ps []kind.Problem
	switch s.Method {
	case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD":
	default:
		ps = append(ps, kind.Problem{Field: "http.method", Message: fmt.Sprintf("unknown method %q", s.Method)})
	}
	if s.URL == "" {
		ps = append(ps, kind.Problem{Field: "http.url", Message: "is required"})
	}
	if len(s.AllowedDomains) == 0 {
		ps = append(ps, kind.Problem{Field: "http.allowed_domains", Message: "is required"})
	}
	if netguard.AllowsAnyHost(s.AllowedDomains) {
		ps = append(ps, kind.Problem{Field: "http.allowed_domains", Message: `"*" (any host) is only for the built-in fetch toolset: name the hosts`})
	}
	return ps
}

// Check compiles the templates and checks the URL's host against the
// tool's own allowlist now, not at the first call: the host is fixed by
// the author, so stand-in values show it.
func (s *Spec) Check(kind.Tool) error {
	c, err := template.CompileHTTP(s.Template())
	if err != nil {
		return &kind.FieldError{Field: "http", Err: err}
	}
	guard, err := netguard.New(netguard.Config{AllowedDomains: s.AllowedDomains})
	if err != nil {
		return &kind.FieldError{Field: "http.allowed_domains", Err: err}
	}
	sample := map[string]any{}
	for _, v := range c.Vars() {
		sample[v] = "x"
	}
	r, err := c.Render(sample, func(string) (string, error) { return "x", nil })
	if err != nil {
		return &kind.FieldError{Field: "http.url", Err: err}
	}
	if _, err := guard.CheckAuthoredURL(r.URL); err != nil {
		return &kind.FieldError{Field: "http.url", Err: fmt.Errorf("%w (is the host in allowed_domains?)", err)}
	}
	return nil
}

// NeededArgs are those of the URL's path and of the headers; the query's,
// the params' and the body's may be absent (left out, or null).
func (s *Spec) NeededArgs() []kind.NeededArg {
	c, err := template.CompileHTTP(s.Template())
	if err != nil {
		return nil // Check reports it
	}
	var out []kind.NeededArg
	for _, v := range c.Required() {
		out = append(out, kind.NeededArg{Name: v, Field: "http"})
	}
	return out
}

// Compile compiles the request templates.
func (s *Spec) Compile(kind.Tool) (kind.Compiled, error) {
	r, err := template.CompileHTTP(s.Template())
	if err != nil {
		return nil, &kind.FieldError{Field: "http", Err: err}
	}
	return &Compiled{spec: s, Request: r}, nil
}

// Compiled is an http block ready for calls.
type Compiled struct {
	spec    *Spec
	Request *template.CompiledHTTP
}

// Templated: an http call can be shown without running it.
func (c *Compiled) Templated() {}

// Secrets are those the templates use.
func (c *Compiled) Secrets(kind.Tool) ([]string, bool) { return c.Request.Secrets(), false }

// Build renders the request with the secret values, checks its URL
// against the tool's allowlist (the executor checks again, after DNS, as
// it dials), and, in the same step, renders it with a stand-in token per
// secret when the egress proxy runs. The stand-in rendering is left out
// when a secret lands where the proxy cannot put it back (the URL's scheme
// or host): then the real request goes to the executor, as the only way
// the call can run. Reaching the network is all an http tool does: its
// executor gets the network permission, and every dial passes the guard.
func (c *Compiled) Build(_ context.Context, call *kind.Call, req *kind.Request) (*kind.Built, error) {
	if !call.Tool.Has("network") {
		req.Permissions = append(slices.Clone(req.Permissions), "network")
	}
	args, err := call.DecodeArgs()
	if err != nil {
		return nil, err
	}
	real, err := c.render(call, args, call.Secret)
	if err != nil {
		return nil, err
	}
	req.HTTP = real
	built := &kind.Built{}
	if !call.Env.StandIns || call.Env.Preview || len(call.Tool.Secrets) == 0 {
		return built, nil
	}
	stand := map[string]string{}
	tokens := func(name string) (string, error) {
		if _, err := call.Secret(name); err != nil {
			return "", err
		}
		t, ok := stand[name]
		if !ok {
			t = call.Env.NewToken()
			stand[name] = t
		}
		return t, nil
	}
	r, err := c.render(call, args, tokens)
	if err != nil || len(stand) == 0 {
		return built, nil
	}
	ru, err1 := url.Parse(real.URL)
	tu, err2 := url.Parse(r.URL)
	if err1 != nil || err2 != nil || ru.Scheme != tu.Scheme || ru.Host != tu.Host {
		return built, nil
	}
	built.StandIn = r
	return built, nil
}

func (c *Compiled) render(call *kind.Call, args map[string]any, secrets func(string) (string, error)) (*toolspec.HTTPCall, error) {
	if netguard.AllowsAnyHost(c.spec.AllowedDomains) {
		return nil, errdefs.Errorf(errdefs.PolicyDenied, `http.allowed_domains: "*" (any host) is only for the built-in fetch toolset`)
	}
	r, err := c.Request.Render(args, secrets)
	if err != nil {
		return nil, kind.RenderError(err)
	}
	guard, err := call.Env.Guards.Get(c.spec.AllowedDomains, call.Env.AllowPrivateHosts)
	if err != nil {
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	if _, err := guard.Guard.CheckURL(r.URL); err != nil {
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	return &toolspec.HTTPCall{
		Method: r.Method, URL: r.URL, Headers: r.Headers, Body: r.Body,
		AllowedDomains: c.spec.AllowedDomains, AllowPrivateHosts: call.Env.AllowPrivateHosts,
		MaxResponseBytes: int64(c.spec.MaxResponseBytes),
	}, nil
}

// Interface guards.
var (
	_ kind.Kind          = Kind{}
	_ kind.Spec          = (*Spec)(nil)
	_ kind.Parameterizer = (*Spec)(nil)
	_ kind.Effecter      = (*Spec)(nil)
	_ kind.ArgNeeder     = (*Spec)(nil)
	_ kind.Templated     = (*Compiled)(nil)
)
