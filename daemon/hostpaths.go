package daemon

import (
	"errors"
	"fmt"

	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/host"
)

// mountChecker is the runner that says whether a workspace can be given
// to an executor as its own: the process sandbox's, else docker's.
func (d *Daemon) mountChecker() host.MountChecker {
	if d.sandbox != nil {
		return d.sandbox
	}
	if d.docker != nil {
		return d.docker
	}
	return nil
}

// checkHostPaths refuses a worker whose workspace or mounts the sandbox
// cannot give its tools as their own (the kernel or file system cannot
// idmap it), with the path, its owner and mode and what to do: known now,
// it must not surface as a failed executor start at every call.
func checkHostPaths(w *worker.Worker, mc host.MountChecker) error {
	if mc == nil {
		return nil
	}
	var errs []error
	for _, hp := range w.HostPaths() {
		if err := mc.CheckMount(host.Mount{Source: hp.Path, Writable: hp.Writable}); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", hp.What, err))
		}
	}
	if len(errs) > 0 {
		return errdefs.Errorf(errdefs.Forbidden, "%v", errors.Join(errs...))
	}
	return nil
}
