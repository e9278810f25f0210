// Package js is the daemon's side of JavaScript tools: the js: block
// (code and fetch's allowlist), its checks, and the request of one call.
package js

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/jscheck"
	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/toolcage/toolcage/toolspec"
)

// Kind is the js kind.
type Kind struct{}

// Name is "js".
func (Kind) Name() toolspec.Kind { return toolspec.JS }

// Decode reads a js: block.
func (Kind) Decode(raw json.RawMessage) (kind.Spec, error) { return kind.DecodeSpec[Spec](raw) }

// Required is the problem of a js tool with no block.
func (Kind) Required() kind.Problem { return kind.Problem{Field: "js.code", Message: "is required"} }

// ResetAfterCall is false: goja has no host API, so a call leaves nothing
// behind, and the reset's half millisecond is saved.
func (Kind) ResetAfterCall() bool { return false }

// CallsHost is true: a tool's code may call other tools (utils.callTool).
func (Kind) CallsHost() bool { return true }

// Spec is the body of a js tool.
type Spec struct {
	Code string `json:"code"`
	// AllowedDomains is what fetch may reach; with the network permission
	// it is required.
	AllowedDomains []string `json:"allowed_domains,omitempty"`
}

// New is a js block holding code.
func New(code string) *Spec { return &Spec{Code: code} }

// Normalize does nothing: a js block has no defaults.
func (s *Spec) Normalize() {}

// Effects: code alone only computes; what it may reach is its
// permissions' to say (fetch needs network).
func (s *Spec) Effects() kind.Effects { return kind.Effects{ReadOnly: true} }

// Validate checks the block's fields.
func (s *Spec) Validate(t kind.Tool) []kind.Problem {
	if strings.TrimSpace(s.Code) == "" {
		return []kind.Problem{{Field: "js.code", Message: "is required"}}
	}
	if t.Has("network") && len(s.AllowedDomains) == 0 {
		return []kind.Problem{{Field: "js.allowed_domains", Message: "is required with the network permission: name the hosts fetch may reach"}}
	}
	if netguard.AllowsAnyHost(s.AllowedDomains) {
		return []kind.Problem{{Field: "js.allowed_domains", Message: anyHostProblem}}
	}
	return nil
}

// anyHostProblem refuses "*" in a tool's own allowlist: only the fetch
// toolset, which a person turns on in a worker file, reaches any host.
const anyHostProblem = `"*" (any host) is only for the built-in fetch toolset: name the hosts`

// Check runs the static code check and checks fetch's allowlist.
func (s *Spec) Check(kind.Tool) error {
	if err := jscheck.Check(s.Code); err != nil {
		return &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	if len(s.AllowedDomains) > 0 {
		if _, err := netguard.New(netguard.Config{AllowedDomains: s.AllowedDomains}); err != nil {
			return &kind.FieldError{Field: "js.allowed_domains", Err: err}
		}
	}
	return nil
}

// Compile has nothing to compile: the executor compiles the code.
func (s *Spec) Compile(kind.Tool) (kind.Compiled, error) { return compiled{s}, nil }

type compiled struct{ spec *Spec }

// Secrets are every secret the definition lists, as envelopes:
// JavaScript reaches its secrets through utils, by name.
func (c compiled) Secrets(t kind.Tool) ([]string, bool) { return slices.Clone(t.Secrets), true }

// Build checks the code again (the stored code may predate a stricter
// rule) and sets the JavaScript call.
func (c compiled) Build(_ context.Context, call *kind.Call, req *kind.Request) (*kind.Built, error) {
	if err := jscheck.Check(c.spec.Code); err != nil {
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	if netguard.AllowsAnyHost(c.spec.AllowedDomains) {
		return nil, errdefs.Errorf(errdefs.PolicyDenied, "js.allowed_domains: %s", anyHostProblem)
	}
	req.JS = &toolspec.JSCall{Code: c.spec.Code, Secrets: call.Envelopes}
	if call.Tool.Has("network") {
		req.JS.AllowedDomains = c.spec.AllowedDomains
		req.JS.AllowPrivateHosts = call.Env.AllowPrivateHosts
	}
	return &kind.Built{}, nil
}

// Interface guards.
var (
	_ kind.Kind       = Kind{}
	_ kind.Spec       = (*Spec)(nil)
	_ kind.Compiled   = compiled{}
	_ kind.HostCaller = Kind{}
)
