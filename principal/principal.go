// Package principal names who is behind a request: the identity that
// travels with every call so that policy, audit and worker toolsets can tell
// callers apart. It is a leaf: every layer imports it, it imports nothing
// of ours.
package principal

// The two caller types. A person (TypeUser) reaches the daemon over its
// socket as the socket's owner; an agent (TypeLLM) is a session of a
// worker, or a person narrowed to act as one.
const (
	TypeUser = "user"
	TypeLLM  = "llm"
)

// Caller says who asked for a call.
type Caller struct {
	// ID is a stable identity, such as "uid:1000" or an MCP client name.
	ID string `json:"id"`
	// Type is "user" or "llm"; it decides lifecycle rules.
	Type string `json:"type"`
	// Worker is the worker toolset the call came through, if any.
	Worker string `json:"worker,omitempty"`
	// TokenID is the public id of the worker token the caller presented;
	// "" for a person (who has no token).
	TokenID string `json:"token_id,omitempty"`
	// Session is a label the client may add (Toolcage-Session) to tell an
	// agent's sessions apart in the audit log; it grants nothing.
	Session string `json:"session,omitempty"`
	// Profile is a tool profile the caller asked to be held to on top of
	// its configured ones (Toolcage-Profile); the daemon's business only,
	// never sent to an executor.
	Profile string `json:"-"`
}

// IsPerson reports whether the caller is a person acting as one: only a
// person decides approvals and manages secrets, workers and tokens.
func (c Caller) IsPerson() bool { return c.Type == TypeUser && c.TokenID == "" }
