package host

import (
	"context"

	"github.com/hashicorp/go-plugin"

	"github.com/toolcage/toolcage/executors/sandbox"
)

// AfterCaller is implemented by runners whose executors must be brought
// back to a clean state between calls. The pool calls AfterCall after every
// call an executor survived; a non-nil error means the executor must be
// retired instead of reused (an errdefs.Error with code limit_exceeded
// when the call broke a sandbox limit).
type AfterCaller interface {
	AfterCall(ctx context.Context, c *plugin.Client) error
}

// Name implements Runner.
func (r *SandboxRunner) Name() string { return "process" }

// Check starts one sandbox with this runner's configuration and reports
// what it really got (for `toolcage sandbox check`); where there is no
// sandbox, it says so.
func (r *SandboxRunner) Check() sandbox.Report {
	return sandbox.ProbeWith(r.Path, r.Config)
}
