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
	// FS is the filesystem toolset's kind: file operations confined to the
	// workspace. No definition outside the toolset may name it.
	FS Kind = "fs"
)

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	switch k {
	case JS, Shell, HTTP, FS:
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
	Addr  string `json:"addr"`  // host:port on the loopback interface, or unix:PATH
	Token string `json:"token"` // the call's grant; worthless after the call
}

// The file operations of FSCall.Op.
const (
	FSReadFile   = "read_file"
	FSWriteFile  = "write_file"
	FSEditFile   = "edit_file"
	FSListFiles  = "list_files"
	FSGlob       = "glob"
	FSSearch     = "search"
	FSDeleteFile = "delete_file"
	FSFileInfo   = "file_info"
)

// FSCall is one file operation, confined to Root (the workspace as the
// sandbox sees it): every path is relative to it and opened beneath it.
type FSCall struct {
	Op       string `json:"op"`
	Root     string `json:"root"`
	ReadOnly bool   `json:"read_only,omitempty"`
	Path     string `json:"path,omitempty"`
	Content  string `json:"content,omitempty"`
	Find     string `json:"find,omitempty"`
	Replace  string `json:"replace,omitempty"`
	Pattern  string `json:"pattern,omitempty"`
	// StartLine and EndLine select lines of read_file, from 1; 0 is open.
	StartLine int64 `json:"start_line,omitempty"`
	EndLine   int64 `json:"end_line,omitempty"`
	// Caps: the bytes one read may return, one write may leave in a file,
	// and the matches (or entries) one search, glob or list may return.
	MaxReadBytes  int64 `json:"max_read_bytes"`
	MaxWriteBytes int64 `json:"max_write_bytes"`
	MaxMatches    int   `json:"max_matches"`
}
