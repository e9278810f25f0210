// Package executors holds the contract between the daemon and an executor:
// the request and result types, the Executor interface, and the go-plugin
// glue that carries them over gRPC (the error codes are errdefs'). It says
// nothing about how an executor process is started; that is executors/host's
// job.
package executors

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/toolspec"
)

// Kind names one kind of executor. One executor process serves one kind.
type Kind = toolspec.Kind

// The executor kinds.
const (
	KindJS    = toolspec.JS
	KindShell = toolspec.Shell
	KindHTTP  = toolspec.HTTP
)

// Limits bound one call. A zero field means "use the executor's default".
type Limits = toolspec.Limits

// Request is one call handed to an executor. Exactly one of JS, Shell and
// HTTP is set, matching Kind. Templates are already rendered and policy has
// already been applied by the daemon; executors check their guards again.
type Request struct {
	CallID      string           `json:"call_id"`
	Tool        string           `json:"tool"`
	Version     int              `json:"version"`
	Caller      principal.Caller `json:"caller"`
	Kind        Kind             `json:"kind"`
	Args        json.RawMessage  `json:"args"`
	Permissions []string         `json:"permissions,omitempty"`
	Limits      Limits           `json:"limits"`

	JS    *JSCall    `json:"js,omitempty"`
	Shell *ShellCall `json:"shell,omitempty"`
	HTTP  *HTTPCall  `json:"http,omitempty"`
}

// JSCall is the body of a JavaScript call: code run as an async function
// body with args, context, console and utils in scope.
type JSCall struct {
	Code string `json:"code"`
	// AllowedDomains is fetch's allowlist (exact hosts or "*.example.com");
	// fetch exists only when the tool holds the network permission.
	AllowedDomains []string `json:"allowed_domains,omitempty"`
	// AllowPrivateHosts names hosts fetch may reach on private addresses.
	AllowPrivateHosts []string `json:"allow_private_hosts,omitempty"`
	// Secrets holds the tool's declared secrets for utils.getApiKey and the
	// Config Center helpers, by name: JSON {"value": "..."} or
	// {"service": {"fields": {...}, "entries": [{"label", "fields"}]}}.
	Secrets map[string]string `json:"-"`
}

// ShellCall is a rendered shell command. Argv is set when the template is one
// simple command (no shell involved); otherwise Command holds the text for
// sh -c, with every argument value already single-quoted.
type ShellCall struct {
	Argv    []string          `json:"argv,omitempty"`
	Command string            `json:"command,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"dir,omitempty"`
}

// HTTPCall is a rendered HTTP request.
type HTTPCall struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"`
	// AllowedDomains is the tool's allowlist: exact hosts or "*.example.com".
	AllowedDomains []string `json:"allowed_domains"`
	// AllowPrivateHosts names hosts that may resolve to private addresses
	// (local development only; empty by default).
	AllowPrivateHosts []string `json:"allow_private_hosts,omitempty"`
	MaxResponseBytes  int64    `json:"max_response_bytes"`
	// Egress, when set, is the daemon's egress proxy the request goes
	// through: the daemon puts the call's secrets in there, so the URL,
	// headers and body here hold stand-in tokens instead.
	Egress *Egress `json:"egress,omitempty"`
}

// The egress proxy's protocol: an executor sends each request of the call
// to Egress.Addr in absolute form with the token in EgressTokenHeader. A
// response the proxy made itself (the guard refused, the API could not be
// reached) carries EgressErrorHeader: "<code>: <message>", where code is
// policy_denied or unreachable.
const (
	EgressTokenHeader = "Toolcage-Egress-Token"
	EgressErrorHeader = "Toolcage-Egress-Error"
)

// Egress names the daemon's egress proxy for one call.
type Egress struct {
	Addr  string `json:"addr"`  // host:port on the loopback interface
	Token string `json:"token"` // the call's grant; worthless after the call
}

// LogLine is one captured console or log line.
type LogLine struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// Result is what a call produced. A tool that ran and failed on its own terms
// (a thrown JS error, a non-zero exit) is a Result with IsError set; a call
// the executor had to stop (timeout, limit) is an *Error instead.
type Result struct {
	// Value is the JSON-encoded result.
	Value json.RawMessage `json:"result"`
	Logs  []LogLine       `json:"logs,omitempty"`
	// IsError marks a tool-level failure; Error holds its message.
	IsError bool   `json:"is_error"`
	Error   string `json:"error,omitempty"`
	// OutputBytes counts the bytes of Value and Logs.
	OutputBytes int64 `json:"output_bytes"`
	// Truncated is set when logs were cut at the output cap.
	Truncated bool `json:"truncated,omitempty"`
	// Duration is the time spent running inside the executor.
	Duration time.Duration `json:"duration"`
}

// Executor runs one call at a time. Implementations must honour ctx: when it
// ends, the call stops and Execute returns promptly.
type Executor interface {
	Execute(ctx context.Context, req *Request) (*Result, error)
}

// ExecutorFunc adapts a function to the Executor interface.
type ExecutorFunc func(ctx context.Context, req *Request) (*Result, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, req *Request) (*Result, error) {
	return f(ctx, req)
}

// Interface guards.
var _ Executor = ExecutorFunc(nil)
