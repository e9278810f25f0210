// Package worker holds the worker file format: the unit a person gives an
// agent (its tools, rules, limits, rate limit, profile and identity), read
// strictly from YAML with every error naming file:line:col; the precedence
// rule between a tool's approval and its worker's; and a watcher that
// reloads registered worker files, keeping the last good version of each.
package worker

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/policy"
)

// MaxFileBytes bounds a worker file.
const MaxFileBytes = 1 << 20

// MaxNameLen bounds worker names.
const MaxNameLen = 64

// Worker is a parsed, valid worker file. Its JSON form is what the store
// keeps as the last good definition; it reads back with json.Unmarshal.
type Worker struct {
	// Path is the absolute path of the file the worker was read from.
	Path        string `json:"path"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Profile names a tool profile of the daemon's config that narrows the
	// worker's tools further. Parse checks only its form: profiles live in
	// the daemon's config, which registration checks against.
	Profile string `json:"profile,omitempty"`
	// Tools are catalog tools by name, in file order.
	Tools []string `json:"tools,omitempty"`
	// ToolFiles are the patterns as written; LocalTools what they matched.
	ToolFiles  []string     `json:"tool_files,omitempty"`
	LocalTools []*LocalTool `json:"local_tools,omitempty"`
	// Secrets are what tools made by this worker's agent may ask for.
	Secrets    []string   `json:"secrets,omitempty"`
	Approval   Approval   `json:"approval"`
	Limits     Limits     `json:"limits"`
	RateLimit  *RateLimit `json:"rate_limit,omitempty"`
	AgentTools AgentTools `json:"agent_tools"`
	// Toolsets are the built-in toolsets the worker turns on, each with its
	// settings as JSON ({} when none); see toolsets.go.
	Toolsets map[string]json.RawMessage `json:"toolsets,omitempty"`
	// Workspace is the directory the worker's tools holding the
	// filesystem permission see at /workspace: absolute, symlinks
	// resolved; "" for none. ReadOnly (readonly:, default true) keeps
	// them from writing it. See workspace.go.
	Workspace string `json:"workspace,omitempty"`
	ReadOnly  bool   `json:"readonly"`
	// Protect (protect:) is what becomes of a command that destroys work in
	// a writable workspace (the shell rules' ask groups: git reset --hard,
	// rm -r...) run by an exec call or a shell tool holding filesystem:
	// policy.ProtectAsk (the default, "" read as it) holds it for a
	// person, policy.ProtectBlocked refuses it, policy.ProtectOff runs it.
	Protect string `json:"protect,omitempty"`
	// Mounts are the host paths tools made by this worker's agent may
	// name under mounts: (besides the workspace), as secrets are.
	Mounts []MountGrant `json:"mounts,omitempty"`
}

// ProtectMode is what protect: says for calls that see the workspace
// writable, "" when they see none or see it read-only (nothing there to
// protect).
func (w *Worker) ProtectMode() string {
	if w == nil || w.Workspace == "" || w.ReadOnly {
		return ""
	}
	if w.Protect == "" {
		return policy.ProtectAsk
	}
	return w.Protect
}

// MountGrant is one host path (absolute, symlinks resolved) an agent's
// tools may mount, at or below it; writable only when the grant is.
type MountGrant struct {
	Path     string `json:"path"`
	ReadOnly bool   `json:"readonly"`
}

// LocalTool is a tool defined by a file next to the worker (tool_files):
// it belongs to this worker only.
type LocalTool struct {
	// File is the absolute path of the tool's definition.
	File string `json:"file"`
	// Def is the definition as catalog.Parse returns it (defaults filled).
	Def *catalog.Definition `json:"definition"`
	// WrittenApproval is the approval the file states, "" when it states
	// none (Def.Approval then holds the format's default): what
	// EffectiveApproval needs to know whether the tool speaks.
	WrittenApproval string `json:"written_approval,omitempty"`
}

// Approval is the worker's approval setting.
type Approval struct {
	// Default applies to every tool the worker has; "" when not written.
	Default string `json:"default,omitempty"`
	// Tools sets the approval of single tools, overriding Default.
	Tools map[string]string `json:"tools,omitempty"`
}

// Limits cap the limits of every call the worker's agent makes: the
// smaller of the tool's and the worker's wins (see CapLimits). Zero fields
// set no cap.
type Limits = catalog.Limits

// RateLimit is one token bucket for all of the worker's calls.
type RateLimit struct {
	PerMinute int `json:"per_minute"`
	Burst     int `json:"burst,omitempty"`
}

// Bucket converts the rate limit into the policy package's bucket.
func (r RateLimit) Bucket() policy.RateLimit {
	return policy.RateLimit{Rate: float64(r.PerMinute) / 60, Burst: r.Burst}
}

// AgentTools says what the worker's agent may do to tools.
type AgentTools struct {
	// Create lets the agent create tools; they still start pending where
	// the catalog's rules say so and follow this worker's approval.
	Create bool `json:"create"`
	// MetaTools offers the agent the meta-tools as tools of its own
	// (daemon/kind/meta): list_custom_tools, search_tools and
	// get_tool always, and with Create also create_tool, update_tool,
	// delete_custom_tool and toggle_custom_tool.
	MetaTools bool `json:"meta_tools,omitempty"`
}

// ToolApproval is the effective approval of the worker's tool named name,
// whose own written approval is toolApproval ("" when it wrote none) and
// whose creator is createdBy (catalog.CreatedByUser or CreatedByLLM).
func (w *Worker) ToolApproval(name, toolApproval, createdBy string) string {
	return EffectiveApproval(toolApproval, createdBy, w.Approval.Default, w.Approval.Tools[name])
}

// HasTool reports whether name is one of the worker's tools, from the
// catalog or its tool files.
func (w *Worker) HasTool(name string) bool {
	return w.LocalTool(name) != nil || contains(w.Tools, name)
}

// LocalTool returns the worker's tool-file tool called name, or nil.
func (w *Worker) LocalTool(name string) *LocalTool {
	for _, t := range w.LocalTools {
		if t.Def.Name == name {
			return t
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// CapLimits returns the tool's limits capped by the worker's: for each
// limit the smaller of the two, where zero means "not set".
func CapLimits(tool, worker Limits) Limits {
	return Limits{
		Timeout:  minSet(tool.Timeout, worker.Timeout),
		Memory:   minSet(tool.Memory, worker.Memory),
		Output:   minSet(tool.Output, worker.Output),
		Requests: minSet(tool.Requests, worker.Requests),
	}
}

func minSet[T ~int64 | ~int](a, b T) T {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}

// Error is one problem in a worker file (or a tool file it names), with
// where it is. Line and Column count from 1.
type Error struct {
	File    string
	Line    int
	Column  int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Message)
}

// ParseError lists every problem Parse found, in file order.
type ParseError struct {
	Problems []*Error
}

// Error prints one problem per line, file:line:col: message.
func (e *ParseError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// First is the first problem, for one-line reports (such as a log line).
func (e *ParseError) First() *Error { return e.Problems[0] }
