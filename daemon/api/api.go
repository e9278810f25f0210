// Package api holds the socket API's wire types and a client for it. The
// daemon serves these shapes and the CLI prints them, so they live in one
// place.
package api

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolcage/toolcage/errdefs"
)

// Header names carrying the caller's identity on every request.
const (
	HeaderCallerType = "Toolcage-Caller-Type" // user | llm
	HeaderCallerID   = "Toolcage-Caller-Id"
	HeaderWorker     = "Toolcage-Worker"
	// HeaderProfile narrows a caller to one more tool profile.
	HeaderProfile = "Toolcage-Profile"
	// HeaderSession is a label an agent's client may add to tell its
	// sessions apart in the audit log.
	HeaderSession = "Toolcage-Session"
	// HeaderAuthorization carries a worker token: "Bearer tcw_…".
	HeaderAuthorization = "Authorization"
	// HeaderApprovalWait "0" makes a call of an approval: ask tool return
	// approval_required with the approval id at once instead of waiting.
	HeaderApprovalWait = "Toolcage-Approval-Wait"
	// MCPUpgrade is the protocol GET /v1/mcp switches a connection to: one
	// MCP session as newline-delimited JSON-RPC (what `toolcage mcp`
	// relays from its stdio).
	MCPUpgrade = "toolcage-mcp"
)

// ErrorBody is every error response: {"error": {...}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail carries a stable code and a human message.
type ErrorDetail struct {
	Code    errdefs.Code `json:"code"`
	Message string       `json:"message"`
	// CallID is set when the error ended a call, to find it in the audit log.
	CallID string `json:"call_id,omitempty"`
	// Limit names the broken limit for timeout and limit_exceeded.
	Limit string `json:"limit,omitempty"`
	// Problems lists every problem of an invalid definition.
	Problems []Problem `json:"problems,omitempty"`
	// RetryAfterSeconds hints when a rate-limited call may be retried.
	RetryAfterSeconds float64 `json:"retry_after_seconds,omitempty"`
	// ApprovalID names the approval a call parked in (approval_required,
	// approval_denied).
	ApprovalID string `json:"approval_id,omitempty"`
}

// Problem is one problem with a definition.
type Problem struct {
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// Tool is a stored tool: its definition plus catalog state.
type Tool struct {
	Definition json.RawMessage `json:"definition"`
	Status     string          `json:"status"`
	CreatedBy  string          `json:"created_by"`
	Version    int             `json:"version"`
	// ApprovedVersion is the last version a person let run (0 if none): a
	// pending tool's change is shown against it (toolcage tools show).
	ApprovedVersion int `json:"approved_version,omitempty"`
	// ApprovalDefault says the definition's approval was not written: it
	// is the default for the tool's creator (preApproved for a person's
	// tool, ask for an agent's), which a worker's settings may change.
	ApprovalDefault bool       `json:"approval_default,omitempty"`
	UsageCount      int64      `json:"usage_count"`
	LastUsedAt      *time.Time `json:"last_used_at,omitempty"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	// MissingSecrets lists declared secrets that are not set (GET of one tool).
	MissingSecrets []string `json:"missing_secrets,omitempty"`
}

// ToolList is GET /v1/tools.
type ToolList struct {
	Tools []Tool `json:"tools"`
	Total int    `json:"total"`
}

// ToolDefinitions is GET /v1/tools/definitions: the active tools a caller
// (or a worker's agent) may call, as function-calling definitions in
// Format (openai, anthropic or mcp), ready for an agent framework's tool
// list.
type ToolDefinitions struct {
	Format string `json:"format"`
	// Worker is the worker whose tools these are; "" for the catalog's.
	Worker string            `json:"worker,omitempty"`
	Tools  []json.RawMessage `json:"tools"`
}

// ToolVersion is one entry of GET /v1/tools/{name}/history.
type ToolVersion struct {
	Version    int             `json:"version"`
	Definition json.RawMessage `json:"definition"`
	CreatedAt  time.Time       `json:"created_at"`
}

// ToolHistory is GET /v1/tools/{name}/history.
type ToolHistory struct {
	Tool     string        `json:"tool"`
	Current  int           `json:"current"`
	Versions []ToolVersion `json:"versions"`
}

// RollbackRequest is POST /v1/tools/{name}/rollback.
type RollbackRequest struct {
	Version int `json:"version"`
}

// Stats is GET /v1/stats.
type Stats struct {
	Total           int   `json:"total"`
	Active          int   `json:"active"`
	Disabled        int   `json:"disabled"`
	PendingApproval int   `json:"pending_approval"`
	Rejected        int   `json:"rejected"`
	CreatedByLLM    int   `json:"created_by_llm"`
	CreatedByUser   int   `json:"created_by_user"`
	TotalUsage      int64 `json:"total_usage"`
	Executions      int   `json:"executions"`
}

// CallRequest is POST /v1/tools/{name}/call.
type CallRequest struct {
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// LogLine is one console or log line a call captured.
type LogLine struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// CallResponse is the result of any call that ran.
type CallResponse struct {
	CallID     string          `json:"call_id"`
	Tool       string          `json:"tool"`
	Version    int             `json:"version"`
	Result     json.RawMessage `json:"result"`
	Logs       []LogLine       `json:"logs"`
	IsError    bool            `json:"is_error"`
	Error      string          `json:"error,omitempty"`
	Truncated  bool            `json:"truncated,omitempty"`
	DurationMS float64         `json:"duration_ms"`
}

// TestRequest is POST /v1/tools/test: a dry run of an unsaved definition.
type TestRequest struct {
	Definition json.RawMessage `json:"definition"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
}

// JSRequest is POST /v1/js: ad-hoc code, run sandboxed and not stored.
type JSRequest struct {
	Code      string          `json:"code"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Timeout like "5s"; Memory like "64MiB". Empty means the defaults.
	Timeout string `json:"timeout,omitempty"`
	Memory  string `json:"memory,omitempty"`
}

// Execution is one audit record.
type Execution struct {
	ID         string `json:"id"`
	Tool       string `json:"tool"`
	Version    int    `json:"version"`
	CallerID   string `json:"caller_id"`
	CallerType string `json:"caller_type"`
	Worker     string `json:"worker,omitempty"`
	TokenID    string `json:"token_id,omitempty"`
	Session    string `json:"session,omitempty"`
	// ParentCallID is the call whose code made this one (utils.callTool).
	ParentCallID string          `json:"parent_call_id,omitempty"`
	Arguments    json.RawMessage `json:"arguments"`
	Outcome      string          `json:"outcome"`
	ErrorCode    string          `json:"error_code,omitempty"`
	Limit        string          `json:"limit,omitempty"`
	Error        string          `json:"error,omitempty"`
	DurationMS   float64         `json:"duration_ms"`
	OutputBytes  int64           `json:"output_bytes"`
	StartedAt    time.Time       `json:"started_at"`
	FinishedAt   time.Time       `json:"finished_at"`
}

// ExecutionList is GET /v1/executions.
type ExecutionList struct {
	Executions []Execution `json:"executions"`
}

// AdminAct is one administrative act in the audit log (GET /v1/admin-acts):
// who decided an approval, approved a tool, touched a secret, a worker or
// a token, or was refused trying.
type AdminAct struct {
	ID         string    `json:"id"`
	Act        string    `json:"act"`
	Target     string    `json:"target,omitempty"`
	CallerID   string    `json:"caller_id"`
	CallerType string    `json:"caller_type"`
	Worker     string    `json:"worker,omitempty"`
	TokenID    string    `json:"token_id,omitempty"`
	Session    string    `json:"session,omitempty"`
	Outcome    string    `json:"outcome"` // ok | refused | failed
	ErrorCode  string    `json:"error_code,omitempty"`
	Error      string    `json:"error,omitempty"`
	At         time.Time `json:"at"`
}

// AdminActList is GET /v1/admin-acts, newest first.
type AdminActList struct {
	AdminActs []AdminAct `json:"admin_acts"`
}

// Health is GET /v1/health.
type Health struct {
	Status        string  `json:"status"`
	Version       string  `json:"version"`
	UptimeSeconds float64 `json:"uptime_seconds"`
	// Socket and DataDir are the daemon's paths on the host: shown to a
	// person only (an agent has no use for them).
	Socket  string `json:"socket,omitempty"`
	DataDir string `json:"data_dir,omitempty"`
}

// SecretValue is PUT /v1/secrets/{name}: exactly one of Value (a plain
// string) or Service (a service's fields and named entries). Values travel
// only this way, into the daemon; no answer ever carries one.
type SecretValue struct {
	Value   *string        `json:"value,omitempty"`
	Service *ServiceSecret `json:"service,omitempty"`
}

// ServiceSecret is a service's credentials. {{secret.NAME}} of a service
// secret is its "api_key" field.
type ServiceSecret struct {
	Fields  map[string]string `json:"fields,omitempty"`
	Entries json.RawMessage   `json:"entries,omitempty"`
}

// Secret describes one stored secret, never its value.
type Secret struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// UsedBy names the tools whose definitions list the secret.
	UsedBy []string `json:"used_by"`
}

// SecretList is GET /v1/secrets.
type SecretList struct {
	Secrets []Secret `json:"secrets"`
}

// SecretsRotation answers POST /v1/secrets/rotate: how many secrets were
// re-encrypted under the new key, and the file that now holds it.
type SecretsRotation struct {
	Secrets int    `json:"secrets"`
	KeyFile string `json:"key_file"`
}

// Approval is one call of an approval: ask tool in the approval queue.
// Rendered is what would run: a shell tool's argv (JSON) or `sh -c` command,
// an HTTP tool's method and URL (credentials redacted), or sha256:<hex> of
// a JavaScript tool's code. Arguments are scrubbed of credentials.
type Approval struct {
	ID         string          `json:"id"`
	Tool       string          `json:"tool"`
	Version    int             `json:"version"`
	CallerID   string          `json:"caller_id"`
	CallerType string          `json:"caller_type"`
	Worker     string          `json:"worker,omitempty"`
	Arguments  json.RawMessage `json:"arguments"`
	Rendered   string          `json:"rendered"`
	// Change is what a filesystem write, edit or delete would do to its
	// file, as it stood when the call parked: a summary line, then a
	// unified diff ("new file x, N bytes", "delete x, N bytes", binary
	// files said so), scrubbed; absent for other calls.
	Change    string     `json:"change,omitempty"`
	Status    string     `json:"status"` // pending | allowed | denied | expired
	CreatedAt time.Time  `json:"created_at"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	DecidedBy string     `json:"decided_by,omitempty"`
	// UsedAt is when an allowed call ran on it: the waiting caller, or its
	// retry of the identical call. An allowed approval runs one call.
	UsedAt *time.Time `json:"used_at,omitempty"`
	// Always is set on the answer to an allow that approved the call for good.
	Always bool `json:"always,omitempty"`
}

// ApprovalAnnouncement is what the approvals webhook POSTs for each new
// approval. Text is one line for a person (chat webhooks show it as is).
type ApprovalAnnouncement struct {
	Event    string   `json:"event"` // approval.pending
	Text     string   `json:"text"`
	Approval Approval `json:"approval"`
}

// Server-sent events on the socket API (GET /v1/approvals/events, GET
// /v1/executions/events): each event's data is one JSON object.
const (
	// EventApproval carries an Approval: new (pending) or just decided.
	EventApproval = "approval"
	// EventExecution carries an Execution, once it is recorded.
	EventExecution = "execution"
	// EventOverflow ends a stream whose reader fell too far behind; data
	// is an ErrorBody. Reconnect to go on (events in between are lost).
	EventOverflow = "overflow"
)

// ApprovalList is GET /v1/approvals.
type ApprovalList struct {
	Approvals []Approval `json:"approvals"`
}

// ApprovalDecision is the body of POST /v1/approvals/{id}/allow: Always
// approves this exact call (tool, version, arguments) from then on.
type ApprovalDecision struct {
	Always bool `json:"always,omitempty"`
}

// WorkerAddRequest is POST /v1/workers: the worker file's absolute path.
// The daemon reads and parses the file itself.
type WorkerAddRequest struct {
	Path string `json:"path"`
}

// Worker is a registered worker (GET /v1/workers, GET /v1/workers/{name}).
type Worker struct {
	Name        string `json:"name"`
	Path        string `json:"path"`
	Description string `json:"description,omitempty"`
	Profile     string `json:"profile,omitempty"`
	// Workspace is the directory its tools holding filesystem see at
	// /workspace ("" for none); ReadOnly whether they may only read it.
	Workspace string `json:"workspace,omitempty"`
	ReadOnly  bool   `json:"readonly,omitempty"`
	// Protect is what becomes of a command that destroys work in a
	// writable workspace (ask, blocked, off); "" without one.
	Protect string `json:"protect,omitempty"`
	// Tools are the worker's tools with their effective approvals (GET of
	// one worker only).
	Tools []WorkerTool `json:"tools,omitempty"`
	// ReloadError is why the last edit of the file was refused, as
	// file:line:col: message; the last good version stays in force.
	ReloadError string    `json:"reload_error,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// WorkerTool is one of a worker's tools.
type WorkerTool struct {
	Name string `json:"name"`
	// Source is "catalog", the tool file defining it, "agent" for a tool
	// its agent made, or "meta" for a meta-tool it offers.
	Source   string `json:"source"`
	Approval string `json:"approval,omitempty"`
	// Missing: a catalog tool the catalog does not hold.
	Missing bool `json:"missing,omitempty"`
}

// WorkerList is GET /v1/workers.
type WorkerList struct {
	Workers []Worker `json:"workers"`
}

// WorkerToken is a worker's new token, shown once: POST /v1/workers (with
// the worker) and POST /v1/workers/{name}/token.
type WorkerToken struct {
	Worker  Worker `json:"worker"`
	Token   string `json:"token"`
	TokenID string `json:"token_id"`
}

// WorkerTokensRevoked is DELETE /v1/workers/{name}/token.
type WorkerTokensRevoked struct {
	Worker  string `json:"worker"`
	Revoked int    `json:"revoked"`
}

// ParseTime reads a time bound of the audit filters: RFC 3339 (with or
// without fractions of a second), or a duration like 90m or 1h30m meaning
// that long before now. Days are written in hours (72h).
func ParseTime(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time (2026-01-02T15:04:05Z) nor a duration before now (1h, 30m)", s)
	}
	return now.Add(-d), nil
}

// UILogin is POST /v1/ui/login: a one-time link that logs a browser in to
// the review page.
type UILogin struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}
