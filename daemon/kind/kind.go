// Package kind is the daemon's side of a tool kind: one interface per
// kind (decode its block of a definition, validate and check it, compile
// its templates, build the executor request of one call, say whether its
// sandbox is reset after a call) and the registry they are listed in.
// Each kind is a package of its own under daemon/kind; kind/builtin lists
// them in one place. Neither this nor any kind links the executors or
// their gRPC glue (the tool format uses them): a kind builds a toolspec
// body, which the dispatcher puts into the executor request, and the
// static executor never links a template or a deny rule.
package kind

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/toolcage/toolcage/policy/shellguard"
	"github.com/toolcage/toolcage/toolspec"
)

// Kind is one tool kind.
type Kind interface {
	// Name is the value of a definition's kind: and the key of its block.
	Name() toolspec.Kind
	// Decode reads the kind's block of a definition strictly: unknown
	// fields are errors.
	Decode(raw json.RawMessage) (Spec, error)
	// Required is the problem reported for a definition of this kind
	// that has no block.
	Required() Problem
	// ResetAfterCall reports whether the executor's sandbox is reset after
	// every call: true for a kind whose calls can leave processes or files
	// behind.
	ResetAfterCall() bool
}

// Tool is what a block is told of the definition around it.
type Tool struct {
	Name        string
	Permissions []string
	Secrets     []string
}

// Has reports whether the tool holds permission p.
func (t Tool) Has(p string) bool { return slices.Contains(t.Permissions, p) }

// Spec is a kind's block of a definition, as its author wrote it.
type Spec interface {
	// Normalize fills in what the block may omit and puts what it holds
	// in canonical form.
	Normalize()
	// Validate lists the block's problems, fields named from the block's
	// key ("shell.command").
	Validate(t Tool) []Problem
	// Check runs the deeper checks a definition must pass before it is
	// stored or run: a *FieldError, or a coded error (policy_denied).
	Check(t Tool) error
	// Compile compiles the block's templates once, for every call; an
	// error is a *FieldError.
	Compile(t Tool) (Compiled, error)
}

// Effects is what a block's calls do to the world by themselves, the
// tool's permissions aside: MCP's tool annotations are derived from it
// and the permissions (daemon/mcp.Annotations).
type Effects struct {
	// ReadOnly: a call changes nothing (computes, or reads).
	ReadOnly bool
	// Destructive: a call may change or remove what exists (not only add).
	Destructive bool
	// OpenWorld: a call reaches things outside the daemon's host.
	OpenWorld bool
}

// Effecter is a Spec that tells its Effects. A Spec that does not is
// taken at its worst: not read-only, destructive, open world.
type Effecter interface {
	Effects() Effects
}

// Parameterizer is a Spec that can write the parameters schema of a
// definition that gives none (an http tool's follow from its {{vars}}).
type Parameterizer interface {
	Parameters() (json.RawMessage, error)
}

// Compiled is a block ready for calls.
type Compiled interface {
	// Secrets lists the secrets a call uses, each once, in order.
	// envelopes is true when the call gets each one's whole stored
	// envelope by name (JavaScript reads fields through utils) rather than
	// only the {{secret.NAME}} value.
	Secrets(t Tool) (names []string, envelopes bool)
	// Build renders and checks one call and fills req's body; it may add
	// to req.Permissions what the kind always needs.
	Build(ctx context.Context, c *Call, req *Request) (*Built, error)
}

// Templated is a Compiled whose call can be shown without running it
// (`toolcage tools render`): a rendered command or request.
type Templated interface {
	Compiled
	Templated()
}

// Env is what the daemon gives every kind to build calls with.
type Env struct {
	// ShellRules are the shell deny rules.
	ShellRules *shellguard.Rules
	// Guards caches a network guard per allowlist.
	Guards *netguard.Cache
	// AllowPrivateHosts names hosts that may resolve to private addresses.
	AllowPrivateHosts []string
	// NetworkShellTools names the shell tools that may hold network.
	NetworkShellTools []string
	// StandIns asks an http call that uses secrets to render its request
	// a second time with stand-in tokens, for the egress proxy.
	StandIns bool
	// NewToken makes one stand-in token.
	NewToken func() string
	// Preview says the call is only shown (`toolcage tools render`), not
	// run: checks on how it would run (a shell tool's network grant) are
	// left out, and so are stand-ins.
	Preview bool
}

// Call is one call as a kind builds it.
type Call struct {
	Env  *Env
	Tool Tool
	// Args are the call's validated arguments, as JSON: a kind that
	// renders templates decodes them (DecodeArgs), one that does not
	// pays nothing.
	Args json.RawMessage
	// AllowDash names the parameters whose values may start with "-"
	// (the schema's say).
	AllowDash map[string]bool
	// Secret returns a secret's value for {{secret.NAME}}.
	Secret func(name string) (string, error)
	// Envelopes are the stored envelopes of the secrets, by name, when
	// the kind asked for them.
	Envelopes map[string]string
}

// Request is the part of an executor request a kind builds: the body of
// its kind and the permissions its executor gets.
type Request struct {
	Permissions []string
	JS          *toolspec.JSCall
	Shell       *toolspec.ShellCall
	HTTP        *toolspec.HTTPCall
}

// Built is what a build leaves besides the request body.
type Built struct {
	// StandIn is the http request rendered with stand-in tokens for its
	// secrets: the executor gets it, and the egress proxy the real one.
	// Nil when the call uses no secret or the proxy could not place one.
	StandIn *toolspec.HTTPCall
}

// Problem is one thing wrong with a block.
type Problem struct {
	Field   string
	Message string
}

// FieldError is a problem found while checking or compiling a block.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Registry is a fixed set of kinds, by name.
type Registry struct {
	kinds map[toolspec.Kind]Kind
	names []toolspec.Kind
}

// NewRegistry lists kinds; two with one name are a programming error.
func NewRegistry(kinds ...Kind) *Registry {
	r := &Registry{kinds: make(map[toolspec.Kind]Kind, len(kinds))}
	for _, k := range kinds {
		if _, dup := r.kinds[k.Name()]; dup {
			panic(fmt.Sprintf("kind %q registered twice", k.Name()))
		}
		r.kinds[k.Name()] = k
		r.names = append(r.names, k.Name())
	}
	return r
}

// Get returns the kind named n.
func (r *Registry) Get(n toolspec.Kind) (Kind, bool) {
	k, ok := r.kinds[n]
	return k, ok
}

// Names lists the kinds in the order they were registered.
func (r *Registry) Names() []toolspec.Kind { return slices.Clone(r.names) }

// String lists the names for messages: "js, shell or http".
func (r *Registry) String() string {
	s := make([]string, len(r.names))
	for i, n := range r.names {
		s[i] = string(n)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
