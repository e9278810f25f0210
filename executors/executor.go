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
	KindFS    = toolspec.FS
)

// Limits bound one call. A zero field means "use the executor's default".
type Limits = toolspec.Limits

// Request is one call handed to an executor. Exactly one of JS, Shell,
// HTTP and FS is set, matching Kind. Templates are already rendered and policy has
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
	FS    *FSCall    `json:"fs,omitempty"`

	// Host, when set, lets the call call back into the daemon (host.go);
	// nil means it may not. It never travels as data: over gRPC it is a
	// broker endpoint.
	Host Host `json:"-"`
}

// The call bodies are toolspec's: the daemon's tool kinds build them
// without linking this package.
type (
	JSCall      = toolspec.JSCall
	ShellCall   = toolspec.ShellCall
	HTTPCall    = toolspec.HTTPCall
	FSCall      = toolspec.FSCall
	Egress      = toolspec.Egress
	JSState     = toolspec.JSState
	StateChange = toolspec.StateChange
)

// The egress proxy's protocol: an executor sends each request of the call
// to Egress.Addr in absolute form with the token in EgressTokenHeader. A
// response the proxy made itself (the guard refused, the API could not be
// reached) carries EgressErrorHeader: "<code>: <message>", where code is
// policy_denied or unreachable. Egress.Addr is host:port, or
// EgressUnixPrefix and the path of a Unix socket.
const (
	EgressTokenHeader = "Toolcage-Egress-Token"
	EgressErrorHeader = "Toolcage-Egress-Error"
	EgressUnixPrefix  = "unix:"
)

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
	// StateChanges are a JavaScript call's writes to its worker's state
	// (utils.setState, utils.deleteState), in order; the daemon writes
	// them.
	StateChanges []StateChange `json:"state_changes,omitempty"`
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
