//go:build !linux

package host

import (
	"context"

	"github.com/hashicorp/go-plugin"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/sandbox"
)

// SandboxRunner is the process sandbox; it needs Linux, so here every start
// fails with sandbox.ErrUnsupported.
type SandboxRunner struct {
	Path            string
	Launcher        string
	Env             []string
	Config          sandbox.Config
	FilesystemBinds []sandbox.Bind
	StateDir        string
}

// ClientConfig implements Runner; it always fails here.
func (r *SandboxRunner) ClientConfig(context.Context, Key) (*plugin.ClientConfig, error) {
	return nil, &errdefs.Error{Code: errdefs.Unavailable, Op: "start sandboxed executor", Err: sandbox.ErrUnsupported}
}

// Starts is always 0: no sandbox starts here.
func (r *SandboxRunner) Starts() int64 { return 0 }

// AfterCall fails: there are no sandboxed executors here.
func (r *SandboxRunner) AfterCall(context.Context, *plugin.Client) error {
	return sandbox.ErrUnsupported
}

// Interface guards.
var (
	_ Runner      = (*SandboxRunner)(nil)
	_ AfterCaller = (*SandboxRunner)(nil)
)
