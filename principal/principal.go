// Package principal names who is behind a request: the identity that
// travels with every call so that policy, audit and worker toolsets can tell
// callers apart. It is a leaf: every layer imports it, it imports nothing
// of ours.
package principal

// Caller says who asked for a call.
type Caller struct {
	// ID is a stable identity, such as "uid:1000" or an MCP client name.
	ID string `json:"id"`
	// Type is "user" or "llm"; it decides lifecycle rules.
	Type string `json:"type"`
	// Worker is the worker toolset the call came through, if any.
	Worker string `json:"worker,omitempty"`
	// Profile is a tool profile the caller asked to be held to on top of
	// its configured ones (Toolcage-Profile); the daemon's business only,
	// never sent to an executor.
	Profile string `json:"-"`
}
