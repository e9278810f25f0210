package host

import (
	"context"

	"github.com/hashicorp/go-plugin"

	"github.com/toolcage/toolcage/errdefs"
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

// ReuseChecker is implemented by runners whose idle executors can become
// unfit without running anything: one bound to a mount source that names
// another file now (moved, replaced, swapped for a symlink). The pool
// asks before it hands an idle executor of a key with mounts a call; a
// non-nil error retires it, and the call gets a fresh one (whose start
// checks the source again).
type ReuseChecker interface {
	CheckReuse(ctx context.Context, c *plugin.Client) error
}

// checkPins: each source, walked with no symlink, still names the file
// pinned there when its executor started.
func checkPins(binds []Mount, ids []sandbox.FileID) error {
	if len(ids) != len(binds) {
		return errdefs.Errorf(errdefs.ExecutorFailed, "executor has %d pinned mounts for %d mounts", len(ids), len(binds))
	}
	for i, m := range binds {
		id, err := sandbox.PinID(m.Source)
		if err != nil {
			return errdefs.Errorf(errdefs.PolicyDenied, "mount %s: %v", m.Source, err)
		}
		if id != ids[i] {
			return errdefs.Errorf(errdefs.PolicyDenied, "mount %s names %s now, not the %s its executor was given", m.Source, id, ids[i])
		}
	}
	return nil
}

// Name implements Runner.
func (r *SandboxRunner) Name() string { return "process" }

// Check starts one sandbox with this runner's configuration and reports
// what it really got (for `toolcage sandbox check`); where there is no
// sandbox, it says so.
func (r *SandboxRunner) Check() sandbox.Report {
	return sandbox.ProbeWith(r.Path, r.Config)
}
