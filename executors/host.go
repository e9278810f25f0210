package executors

import (
	"context"
	"encoding/json"
)

// Host is what a call may ask of the daemon while it runs: call another
// tool and list the tools it may call (JavaScript's utils.callTool and
// utils.listTools). The daemon sets Request.Host for the calls that may
// call back; it answers under the running call's caller and policy, so
// nothing an executor sends can name who is asking.
//
// Over go-plugin the daemon opens a Host stream to each executor that may
// call back (host.Key.Host), once, on the executor's own connection (a
// sandbox reaches no other socket): the executor sends an ask per
// callback and the daemon answers it. Each ask names the call it is for;
// an ask for any other call than the one running is refused.
type Host interface {
	// CallTool runs the tool called name with args as a nested call of
	// the running one. A refused or failed call is an error with a stable
	// code; a tool that ran and failed on its own terms is a result with
	// IsError set.
	CallTool(ctx context.Context, name string, args json.RawMessage) (*HostCallResult, error)
	// ListTools lists the tools a nested call may name.
	ListTools(ctx context.Context) ([]HostTool, error)
}

// HostCallResult is what a nested call returned, scrubbed by the daemon.
type HostCallResult struct {
	// CallID is the nested call's id in the audit log.
	CallID  string
	Value   json.RawMessage
	IsError bool
	Error   string
}

// HostTool is one tool a nested call may name.
type HostTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}
