// Package toolspec holds the plain facts about a tool that the tool format
// (daemon/catalog, daemon/kind) and the executor contract (executors)
// share: its kind, the limits of one call, and the rendered body of one
// call as a kind builds it and an executor runs it. It is a leaf, so the tool format does not link the
// executor's gRPC glue to know them.
package toolspec

import (
	"encoding/json"
	"time"
)

// Kind names one kind of tool, and of executor: one executor process serves
// one kind.
type Kind string

// The kinds.
const (
	JS    Kind = "js"
	Shell Kind = "shell"
	HTTP  Kind = "http"
)

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	switch k {
	case JS, Shell, HTTP:
		return true
	}
	return false
}

// Limits bound one call. A zero field means "use the executor's default".
type Limits struct {
	Timeout     time.Duration `json:"timeout"`
	MemoryBytes int64         `json:"memory_bytes"`
	OutputBytes int64         `json:"output_bytes"`
	Requests    int           `json:"requests"`
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
	// State is the calling worker's state for utils.getState and the
	// rest; nil when the call has none (no worker, or its state toolset
	// is off), and then those helpers throw.
	State *JSState `json:"-"`
}

// JSState is a worker's state as a JavaScript call gets it: every value,
// and the caps its writes are held to. The executor sends back what the
// call changed (Result.StateChanges); the daemon writes that, checking
// the caps again.
type JSState struct {
	Values        map[string]json.RawMessage
	MaxKeys       int
	MaxKeyBytes   int
	MaxValueBytes int
}

// StateChange is one write to a worker's state: Value nil deletes Key.
type StateChange struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value,omitempty"`
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
	// TruncateBody cuts a body over MaxResponseBytes there (the value
	// says "truncated": true) instead of refusing the call.
	TruncateBody bool `json:"truncate_body,omitempty"`
	// Egress, when set, is the daemon's egress proxy the request goes
	// through: the daemon puts the call's secrets in there, so the URL,
	// headers and body here hold stand-in tokens instead.
	Egress *Egress `json:"egress,omitempty"`
}

// Egress names the daemon's egress proxy for one call.
type Egress struct {
	Addr  string `json:"addr"`  // host:port on the loopback interface
	Token string `json:"token"` // the call's grant; worthless after the call
}
