// Package fetch is the fetch kind: the fetch_url tool of the built-in
// fetch toolset, whose URL, method, headers and body are the call's
// arguments. It runs on the http executor like an http tool, through the
// network guard with the toolset's allowlist, in which "*" means any host
// (every address check still applies, after DNS, at dial time), and only
// with the methods the toolset allows (GET and HEAD unless it says
// more). Only the toolset writes this kind, so an agent's own tools never
// get "*".
package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/kind"
	khttp "github.com/toolcage/toolcage/daemon/kind/http"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/toolcage/toolcage/toolspec"
)

// Name is the kind's name, and its toolset's.
const Name toolspec.Kind = "fetch"

// DefaultMaxResponseBytes is the body cap when the toolset sets none: a
// body past it is cut, with truncated set.
const DefaultMaxResponseBytes = 100_000

// Kind is the fetch kind.
type Kind struct{}

// Name is "fetch".
func (Kind) Name() toolspec.Kind { return Name }

// Toolset is "fetch": the kind exists only for that toolset.
func (Kind) Toolset() string { return string(Name) }

// Executor is http: a fetch is an HTTP request.
func (Kind) Executor() toolspec.Kind { return toolspec.HTTP }

// Decode reads a fetch: block.
func (Kind) Decode(raw json.RawMessage) (kind.Spec, error) { return kind.DecodeSpec[Spec](raw) }

// Required is the problem of a fetch tool with no block.
func (Kind) Required() kind.Problem {
	return kind.Problem{Field: "fetch.allowed_domains", Message: "is required"}
}

// ResetAfterCall is false: the executor runs no code of the tool's.
func (Kind) ResetAfterCall() bool { return false }

// Spec is the block of the fetch tool: the hosts it may reach and the
// methods it may send.
type Spec struct {
	AllowedDomains   []string      `json:"allowed_domains"`
	MaxResponseBytes kind.ByteSize `json:"max_response_bytes,omitempty"`
	// Methods are the methods a call may use (DefaultMethods when none).
	Methods []string `json:"methods,omitempty"`
}

// Normalize fills in the body cap and the methods, and upper-cases them.
func (s *Spec) Normalize() {
	if s.MaxResponseBytes == 0 {
		s.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if len(s.Methods) == 0 {
		s.Methods = slices.Clone(DefaultMethods)
	}
	for i, m := range s.Methods {
		s.Methods[i] = strings.ToUpper(m)
	}
}

// Validate checks the allowlist is there.
func (s *Spec) Validate(kind.Tool) []kind.Problem {
	var ps []kind.Problem
	if len(s.AllowedDomains) == 0 {
		ps = append(ps, kind.Problem{Field: "fetch.allowed_domains", Message: `is required ("*" for any public host)`})
	}
	if s.MaxResponseBytes < 0 {
		ps = append(ps, kind.Problem{Field: "fetch.max_response_bytes", Message: "must not be negative"})
	}
	if err := CheckMethods(s.Methods); err != nil {
		ps = append(ps, kind.Problem{Field: "fetch.methods", Message: err.Error()})
	}
	return ps
}

// CheckMethods checks a list of methods as the toolset's settings give
// it, in any case: each one fetch_url can send, none twice, at least one.
func CheckMethods(methods []string) error {
	if len(methods) == 0 {
		return errors.New("list at least one method")
	}
	seen := map[string]bool{}
	for _, m := range methods {
		up := strings.ToUpper(m)
		switch {
		case !slices.Contains(Methods, up):
			return fmt.Errorf("unknown method %q (want %s)", m, strings.Join(Methods, ", "))
		case seen[up]:
			return fmt.Errorf("%s is listed twice", up)
		}
		seen[up] = true
	}
	return nil
}

// Check checks the allowlist's entries.
func (s *Spec) Check(kind.Tool) error {
	if _, err := netguard.New(netguard.Config{AllowedDomains: s.AllowedDomains}); err != nil {
		return &kind.FieldError{Field: "fetch.allowed_domains", Err: err}
	}
	return nil
}

// Effects follow the methods fetch_url may send, as an http tool's follow
// its one method: read-only with GET, HEAD and OPTIONS only, destructive
// with PUT, PATCH or DELETE; the network it holds is what it is for.
func (s *Spec) Effects() kind.Effects {
	e := khttp.MethodEffects(s.Methods...)
	e.Holds = []string{"network"}
	return e
}

// Compile keeps the block.
func (s *Spec) Compile(kind.Tool) (kind.Compiled, error) { return &Compiled{spec: s}, nil }

// Compiled is the fetch tool ready for calls.
type Compiled struct{ spec *Spec }

// Secrets: a fetch uses none; an agent that has a key sends it itself.
func (c *Compiled) Secrets(kind.Tool) ([]string, bool) { return nil, false }

// Methods are those fetch_url can send, where its toolset allows them.
var Methods = []string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"}

// DefaultMethods are those fetch_url sends when its toolset names none:
// it reads.
var DefaultMethods = []string{"GET", "HEAD"}

// DefaultMethod is the method of a call that names none: GET where
// allowed, else the first of methods.
func DefaultMethod(methods []string) string {
	if len(methods) == 0 || slices.Contains(methods, "GET") {
		return "GET"
	}
	return methods[0]
}

// framing are headers the HTTP client owns (the executor refuses them too).
var framing = map[string]bool{
	"host": true, "content-length": true, "transfer-encoding": true, "connection": true,
	"keep-alive": true, "proxy-connection": true, "proxy-authorization": true, "te": true,
	"trailer": true, "upgrade": true,
}

type args struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Body    *string           `json:"body"`
}

// Build checks the URL against the allowlist and the headers, and sets
// the HTTP request; the executor checks the URL again and every address
// it dials.
func (c *Compiled) Build(_ context.Context, call *kind.Call, req *kind.Request) (*kind.Built, error) {
	if !call.Tool.Has("network") {
		req.Permissions = append(slices.Clone(req.Permissions), "network")
	}
	raw, err := call.DecodeArgs()
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(raw)
	var a args
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err}
	}
	method := strings.ToUpper(a.Method)
	if method == "" {
		method = DefaultMethod(c.spec.Methods)
	}
	if !slices.Contains(Methods, method) {
		return nil, errdefs.Errorf(errdefs.InvalidArguments, "method %q: want one of %s", a.Method, strings.Join(c.spec.Methods, ", "))
	}
	if !slices.Contains(c.spec.Methods, method) {
		return nil, errdefs.Errorf(errdefs.Forbidden, "method %s is not allowed: this worker's fetch toolset allows %s (toolsets: fetch: methods:)", method, strings.Join(c.spec.Methods, ", "))
	}
	for k, v := range a.Headers {
		if err := checkHeader(k, v); err != nil {
			return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
		}
	}
	entry, err := call.Env.Guards.Get(c.spec.AllowedDomains, call.Env.AllowPrivateHosts)
	if err != nil {
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	if _, err := entry.Guard.CheckURL(a.URL); err != nil {
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	h := &toolspec.HTTPCall{
		Method: method, URL: a.URL, Headers: a.Headers,
		AllowedDomains: c.spec.AllowedDomains, AllowPrivateHosts: call.Env.AllowPrivateHosts,
		MaxResponseBytes: int64(c.spec.MaxResponseBytes), TruncateBody: true,
	}
	if a.Body != nil {
		h.Body = []byte(*a.Body)
	}
	req.HTTP = h
	return &kind.Built{}, nil
}

// checkHeader refuses a header the client owns, a name that is not a
// token and a value with a control character.
func checkHeader(name, value string) error {
	if name == "" || strings.ContainsFunc(name, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r)
	}) {
		return fmt.Errorf("header %q: not a valid header name", name)
	}
	if framing[strings.ToLower(name)] {
		return fmt.Errorf("header %q: set by the HTTP client, not by a call", http.CanonicalHeaderKey(name))
	}
	if strings.ContainsFunc(value, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }) {
		return fmt.Errorf("header %q: the value holds a control character", name)
	}
	return nil
}

// Interface guards.
var (
	_ kind.ToolsetOnly = Kind{}
	_ kind.RunsOn      = Kind{}
	_ kind.Spec        = (*Spec)(nil)
	_ kind.Effecter    = (*Spec)(nil)
	_ kind.Compiled    = (*Compiled)(nil)
)
