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
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
	"github.com/toolcage/toolcage/store/workerdb"
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

// ToolsetOnly is a Kind that exists only for a built-in toolset
// (daemon/toolset): the catalog refuses a definition of it that a person
// or an agent wrote, so the toolset, which writes its definitions with
// the guarantees it needs, is the only way to get one.
type ToolsetOnly interface {
	Kind
	// Toolset names the toolset the kind belongs to.
	Toolset() string
}

// TurnedOnBy is a ToolsetOnly kind whose tools a worker file turns on
// otherwise than under toolsets: (the meta kind's, by agent_tools).
type TurnedOnBy interface {
	ToolsetOnly
	// TurnedOnBy is what a worker file writes to turn them on.
	TurnedOnBy() string
}

// TurnOn is what a worker file writes to turn on the tools of k:
// "toolsets: {NAME: {}}" unless k says otherwise (TurnedOnBy).
func TurnOn(k ToolsetOnly) string {
	if t, ok := k.(TurnedOnBy); ok {
		return t.TurnedOnBy()
	}
	return "toolsets: {" + k.Toolset() + ": {}}"
}

// RunsOn is a Kind whose calls run on another kind's executor (the fetch
// kind's requests on the http executor): its Build fills that kind's
// body, and the pool key and default limits are that kind's.
type RunsOn interface {
	Kind
	Executor() toolspec.Kind
}

// executorOf is the executor kind k's calls run on.
func executorOf(k Kind) toolspec.Kind {
	if r, ok := k.(RunsOn); ok {
		return r.Executor()
	}
	return k.Name()
}

// CallApprover is a Compiled whose approval depends on the call (the exec
// toolset's per-command rules): the dispatcher holds a call to the
// stricter of this and the tool's effective approval.
type CallApprover interface {
	Compiled
	// CallApproval decides one call with validated arguments:
	// preApproved, ask or blocked, or an error refusing it.
	CallApproval(c *Call) (string, error)
}

// HostCaller is a Kind whose calls may call back into the daemon while
// they run (JavaScript's utils.callTool): its executors are started with
// the callback channel (host.Key.Host).
type HostCaller interface {
	CallsHost() bool
}

// CallsHost reports whether k's calls may call back into the daemon.
func CallsHost(k Kind) bool {
	h, ok := k.(HostCaller)
	return ok && h.CallsHost()
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
// tool's permissions aside: function-calling hints (MCP's tool
// annotations) are derived from it and the permissions (defs.AnnotationsOf).
type Effects struct {
	// ReadOnly: a call changes nothing (computes, or reads).
	ReadOnly bool
	// Destructive: a call may change or remove what exists (not only add).
	Destructive bool
	// OpenWorld: a call reaches things outside the daemon's host.
	OpenWorld bool
	// Holds are the permissions the block's own operation holds (an fs
	// tool's filesystem, fetch_url's network): the fields above already
	// say what it does with them, so they do not widen the hints. Only a
	// toolset-only kind sets it: its toolset writes the permissions.
	Holds []string
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

// ArgNeeder is a Spec whose templates cannot render without some
// arguments (a shell command's words, an http tool's path and headers):
// the catalog refuses such a definition unless each of them is required
// by its schema or has a default there, so no call meets a missing
// argument the author never chose a value for.
type ArgNeeder interface {
	NeededArgs() []NeededArg
}

// NeededArg is one argument a template cannot do without.
type NeededArg struct {
	// Name is the argument; Field the block's field whose template uses it.
	Name, Field string
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

// Local is a Compiled whose calls the daemon runs itself rather than on
// a pooled executor: kinds whose whole work is in the daemon (the
// worker's state in the store, its SQLite file, which need cgo the
// static executor cannot link; the catalog the meta-tools change, which
// no executor reaches). The dispatcher gives a local
// call what it gives an executor call: the same timeout and output cap,
// rate limits, scrubbing and audit record. Build runs first, as for any
// kind (its checks), and may leave the request's body empty.
type Local interface {
	Compiled
	// Run runs one call; ctx ends at the call's timeout, and Run must
	// return promptly when it does. A failure on the tool's own terms is
	// a LocalResult with IsError; a refusal or a broken limit is a coded
	// error.
	Run(ctx context.Context, call *LocalCall) (*LocalResult, error)
}

// LocalCall is one call a Local runs.
type LocalCall struct {
	Env    *Env
	Caller principal.Caller
	// Worker names the worker the call came through; "" for none.
	Worker string
	Tool   Tool
	// Args are the validated arguments (DecodeArgs fills defaults).
	Args     json.RawMessage
	Defaults map[string]json.RawMessage
	Limits   toolspec.Limits
	// Catalog is the catalog as the worker's agent manages its own
	// tools, bound to this call's caller and worker: set when the call
	// came through a worker that offers the meta-tools, nil otherwise.
	Catalog AgentCatalog
}

// AgentCatalog is the catalog as a worker's agent manages its own tools
// (the meta kind). The dispatcher gives a call one bound to the call's
// caller and worker: it sees only that worker's tools (any other is
// tool_not_found, as if absent), and every change is held to the
// catalog's rules for what agents make (pending unless harmless
// JavaScript, only the secrets the worker grants, never a person's
// tool). Errors carry errdefs codes.
type AgentCatalog interface {
	// Made lists the tools the worker's agent made that still exist.
	Made(ctx context.Context) ([]AgentTool, error)
	// Visible lists the tools the worker's agent may call, as its
	// profiles allow; the meta-tools are not among them.
	Visible(ctx context.Context) ([]AgentTool, error)
	// Tool is one of the worker's tools and its definition as written
	// (JSON, with no approval where none was written).
	Tool(ctx context.Context, name string) (*AgentTool, json.RawMessage, error)
	// Create stores a tool from its definition (JSON, as a tool file
	// holds it), made by the call's caller, and adds it to the worker's
	// tools.
	Create(ctx context.Context, def json.RawMessage) (*AgentTool, error)
	// Update replaces the definition of the worker's tool called name.
	Update(ctx context.Context, name string, def json.RawMessage) (*AgentTool, error)
	// Delete deletes the worker's tool called name.
	Delete(ctx context.Context, name string) error
	// SetEnabled enables or disables the worker's tool called name.
	SetEnabled(ctx context.Context, name string, enabled bool) (*AgentTool, error)
}

// AgentTool is a tool as AgentCatalog tells of it.
type AgentTool struct {
	Name        string
	Description string
	Kind        toolspec.Kind
	Category    string
	// Status and CreatedBy are the catalog's words: "active",
	// "pending_approval", ...; "user" or "llm".
	Status     string
	CreatedBy  string
	Version    int
	UsageCount int64
	// InFile: the tool is defined in a file of the worker (tool_files or
	// a toolset); a person changes it there.
	InFile bool
}

// DecodeArgs decodes the call's arguments as Call.DecodeArgs does.
func (c *LocalCall) DecodeArgs() (map[string]any, error) {
	return (&Call{Args: c.Args, Defaults: c.Defaults}).DecodeArgs()
}

// LocalResult is what a local call produced.
type LocalResult struct {
	// Value is the JSON result.
	Value   json.RawMessage
	IsError bool
	Error   string
	Logs    []LogLine
}

// LogLine is one log line of a local call.
type LogLine struct {
	Level, Message string
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
	// Store is the daemon's store: the state kind keeps each worker's
	// state there. Nil where no local call runs (a preview).
	Store *store.Store
	// WorkerDBs opens each worker's own SQLite database (the sql kind).
	WorkerDBs *workerdb.Set
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
	// Defaults are the schema's default values of its top-level
	// properties: DecodeArgs fills in each argument that is absent or
	// null.
	Defaults map[string]json.RawMessage
	// Secret returns a secret's value for {{secret.NAME}}.
	Secret func(name string) (string, error)
	// Envelopes are the stored envelopes of the secrets, by name, when
	// the kind asked for them.
	Envelopes map[string]string
	// Workspace is the host directory the call sees at /workspace (its
	// worker's workspace, when the tool holds filesystem), for checks
	// that read what is there; "" when none.
	Workspace string
}

// Request is the part of an executor request a kind builds: the body of
// its kind and the permissions its executor gets.
type Request struct {
	Permissions []string
	JS          *toolspec.JSCall
	Shell       *toolspec.ShellCall
	HTTP        *toolspec.HTTPCall
	FS          *toolspec.FSCall
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

// ToolsetOnly reports whether the kind named n exists only for a
// built-in toolset.
func (r *Registry) ToolsetOnly(n toolspec.Kind) bool {
	_, only := r.kinds[n].(ToolsetOnly)
	return only
}

// ExecutorKind is the executor kind that runs calls of the kind named n.
func (r *Registry) ExecutorKind(n toolspec.Kind) toolspec.Kind {
	if k, ok := r.kinds[n]; ok {
		return executorOf(k)
	}
	return n
}

// Names lists the kinds in the order they were registered.
func (r *Registry) Names() []toolspec.Kind { return slices.Clone(r.names) }

// String lists the names a definition may give, for messages: "js,
// shell or http" (toolset-only kinds are left out).
func (r *Registry) String() string {
	s := make([]string, 0, len(r.names))
	for _, n := range r.names {
		if !r.ToolsetOnly(n) {
			s = append(s, string(n))
		}
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
