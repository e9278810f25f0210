package dispatch

import (
	"fmt"
	"slices"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/policy/mounts"
)

// callMounts lists the host paths one call's executor sees: the worker's
// workspace at /workspace when the tool holds the filesystem permission,
// and the tool's own mounts at their own paths. Each is resolved and
// checked against the daemon's own paths again now, and a path that became
// a symlink since it was loaded is refused (the sandbox refuses one that
// becomes a symlink after this).
func (d *Dispatcher) callMounts(w *worker.Worker, def *catalog.Definition, perms []string) ([]host.Mount, error) {
	if !slices.Contains(perms, "filesystem") {
		return nil, nil
	}
	var g mounts.Guard
	if d.cfg.Mounts != nil {
		g = d.cfg.Mounts()
	}
	if w != nil {
		g = w.Guard(g)
	}
	var out []host.Mount
	if w != nil && w.Workspace != "" {
		src, err := mounts.Resolve(w.Workspace)
		if err == nil && src != w.Workspace {
			err = fmt.Errorf("%s has become a symlink (to %s) since the worker was loaded", w.Workspace, src)
		}
		if err == nil {
			err = g.Check(src, !w.ReadOnly)
		}
		if err != nil {
			return nil, errdefs.Errorf(errdefs.PolicyDenied, "workspace of worker %q: %v", w.Name, err)
		}
		out = append(out, host.Mount{Source: src, Target: mounts.Workspace, Writable: !w.ReadOnly})
	}
	for i, m := range def.Mounts {
		src, err := mounts.Resolve(m.Path)
		if err == nil && src != m.Path {
			// Made with no symlink on the way (catalog.checkMounts): one
			// now is a swap by whoever can write there, pointing the
			// mount where no one granted or approved.
			err = fmt.Errorf("%s has become a symlink (to %s) since the tool was made", m.Path, src)
		}
		if err == nil {
			err = g.Check(src, !m.ReadOnly)
		}
		if err == nil {
			// The tool sees the path it named; what is bound there is
			// what it resolves to now.
			err = mounts.CheckTarget(m.Path)
		}
		if err != nil {
			return nil, errdefs.Errorf(errdefs.PolicyDenied, "tool %q: mounts[%d]: %v", def.Name, i, err)
		}
		out = append(out, host.Mount{Source: src, Target: m.Path, Writable: !m.ReadOnly})
	}
	return out, nil
}

// callWorkspace is the host directory a call sees at /workspace: its
// worker's workspace when the tool holds filesystem, or "".
func callWorkspace(w *worker.Worker, perms []string) string {
	if w == nil || w.Workspace == "" || !slices.Contains(perms, "filesystem") {
		return ""
	}
	return w.Workspace
}

// callProtect is the worker's protect: setting for a call that sees its
// workspace writable (the tool holds filesystem), or "".
func callProtect(w *worker.Worker, perms []string) string {
	if callWorkspace(w, perms) == "" {
		return ""
	}
	return w.ProtectMode()
}
