package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/policy/mounts"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// catalogOptions are the catalog's rules for tools agents make: the
// config's agents.always_pending and each worker's secret grant.
func (d *Daemon) catalogOptions() []catalog.Option {
	return []catalog.Option{
		catalog.WithAlwaysPending(d.cfg.Agents.AlwaysPending),
		catalog.WithAgentRules(d.agentRules),
		catalog.WithMountGuard(d.mountGuard),
		catalog.WithOnChange(d.changes.Publish),
		catalog.WithAgentCaps(d.cfg.WorkerLimits.Tools, d.cfg.WorkerLimits.Versions),
	}
}

// mountGuard holds the daemon's own paths, which no workspace or mount
// may reach: the data dir (database, secrets), the socket, the secrets
// key, and the sandbox state dir (other executors' plugin sockets); and
// the files that say what workers may do, which none may make writable:
// the config file and every registered worker's file, tool files and
// tool file directories.
func (d *Daemon) mountGuard() mounts.Guard {
	unset := func(p string) bool { return p == "" }
	g := mounts.Guard{Forbidden: slices.DeleteFunc([]string{d.cfg.DataDir, d.cfg.Socket, d.cfg.Secrets.KeyFile, d.sandboxState, tokenDir()}, unset),
		NoWrite: slices.DeleteFunc([]string{d.cfg.File}, unset)}
	if d.workers != nil {
		g = d.workers.Guard(g)
	}
	return g
}

// tokenDir is where the CLI keeps worker token files by default
// (`worker add --save-token`, read by `toolcage mcp`): the config
// directory of the daemon's user, which is the person's when they run it
// themselves. "" when that user has none. Read at each check, as the
// environment names it.
func tokenDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "toolcage")
}

// agentRules reads the rules of the caller's worker from the registry
// (its last good definition). A caller with no worker, or naming one that
// is not registered, gets no grant: its tools may name no secret.
func (d *Daemon) agentRules(_ context.Context, c principal.Caller) (catalog.AgentRules, error) {
	if c.Worker == "" {
		return catalog.AgentRules{}, nil
	}
	w, err := d.workers.Get(c.Worker)
	if errors.Is(err, store.ErrNotFound) {
		return catalog.AgentRules{}, nil
	}
	if err != nil {
		return catalog.AgentRules{}, err
	}
	r := catalog.AgentRules{Secrets: w.Secrets}
	for _, lt := range w.LocalTools {
		r.Reserved = append(r.Reserved, lt.Def.Name)
	}
	if w.Workspace != "" {
		r.Mounts = append(r.Mounts, catalog.MountGrant{Path: w.Workspace, Writable: !w.ReadOnly})
	}
	for _, m := range w.Mounts {
		r.Mounts = append(r.Mounts, catalog.MountGrant{Path: m.Path, Writable: !m.ReadOnly})
	}
	return r, nil
}
