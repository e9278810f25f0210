package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/changes"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/policy/mounts"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// The worker registry: the registered workers' last good definitions, kept
// in the store and in memory, and a watcher that reloads their files. A
// good edit replaces the definition (store and memory); a broken one keeps
// the last good version and is logged with its file:line:col.

// workerRegistry holds the registered workers. Safe for concurrent use.
type workerRegistry struct {
	st    *store.Store
	log   *slog.Logger
	watch *worker.Watcher
	// changes hears of every registration, reload and removal: each may
	// change what tools a worker's agent sees.
	changes *changes.Broadcaster

	// check refuses a parsed edit the daemon cannot honour (an unknown
	// profile); nil accepts every good parse.
	check func(*worker.Worker) error

	mu     sync.RWMutex
	byName map[string]*worker.Worker
	errs   map[string]string // name → why its last edit was refused
}

// newWorkerRegistry loads the registered workers from the store and
// watches their files (Run starts the watching).
func newWorkerRegistry(ctx context.Context, st *store.Store, log *slog.Logger, ch *changes.Broadcaster, retry time.Duration) (*workerRegistry, error) {
	reg := &workerRegistry{st: st, log: log, changes: ch, byName: map[string]*worker.Worker{}, errs: map[string]string{}}
	w, err := worker.NewWatcher(worker.WatchConfig{Log: log, OnChange: reg.changed, OnError: reg.refused, RetryRefused: retry})
	if err != nil {
		return nil, err
	}
	reg.watch = w
	list, err := st.ListWorkers(ctx)
	if err != nil {
		return nil, err
	}
	for _, sw := range list {
		var wk worker.Worker
		if err := json.Unmarshal(sw.Definition, &wk); err != nil {
			log.Error("a registered worker's stored definition does not read; it stays out of service", "worker", sw.Name, "err", err)
			continue
		}
		reg.byName[wk.Name] = &wk
		if err := reg.watch.Add(&wk); err != nil {
			// The file's directory may be gone; its last good version
			// still serves.
			log.Warn("cannot watch a worker file", "worker", wk.Name, "path", wk.Path, "err", err)
		}
	}
	return reg, nil
}

// run watches the files until ctx ends.
func (reg *workerRegistry) run(ctx context.Context) {
	if err := reg.watch.Run(ctx); err != nil {
		reg.log.Error("worker file watcher stopped; edits are no longer picked up", "err", err)
	}
}

// changed takes a good edit: the store and memory get the new version.
// An edit the daemon's check refuses is returned refused: the watcher
// keeps the last good version and tries the edit again (on the file's
// next change, or on its timer) until the cause is gone.
func (reg *workerRegistry) changed(w *worker.Worker) error {
	if reg.check != nil {
		if err := reg.check(w); err != nil {
			err = fmt.Errorf("%s: %w", w.Path, err)
			reg.refused(w.Path, err)
			return err
		}
	}
	b, err := json.Marshal(w)
	if err == nil {
		err = reg.st.UpdateWorker(context.Background(), w.Name, b)
	}
	if err != nil {
		reg.log.Error("storing a worker's new version", "worker", w.Name, "err", err)
		return err
	}
	reg.mu.Lock()
	reg.byName[w.Name] = w
	delete(reg.errs, w.Name)
	reg.mu.Unlock()
	reg.log.Info("worker reloaded", "worker", w.Name, "path", w.Path)
	reg.changes.Publish()
	return nil
}

// refused notes a broken edit; the last good version stays.
func (reg *workerRegistry) refused(path string, err error) {
	msg := err.Error()
	var pe *worker.ParseError
	if errors.As(err, &pe) {
		msg = pe.First().Error()
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for name, w := range reg.byName {
		if w.Path == path {
			// A retry refused for the same reason is not news.
			level := slog.LevelWarn
			if reg.errs[name] == msg {
				level = slog.LevelDebug
			}
			reg.errs[name] = msg
			reg.log.Log(context.Background(), level, "worker file edit refused; the last good version stays in force", "worker", name, "error", msg)
		}
	}
}

// get returns the last good version of the worker called name, or an
// error wrapping store.ErrNotFound.
func (reg *workerRegistry) get(name string) (*worker.Worker, error) {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	if w, ok := reg.byName[name]; ok {
		return w, nil
	}
	return nil, fmt.Errorf("worker %q: %w", name, store.ErrNotFound)
}

// guard is g with what no registered worker's tools may make writable:
// every worker's own files and tool file directories (worker.Guard).
func (reg *workerRegistry) guard(g mounts.Guard) mounts.Guard {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	for _, w := range reg.byName {
		g = w.Guard(g)
	}
	return g
}

func (reg *workerRegistry) reloadError(name string) string {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	return reg.errs[name]
}

func (reg *workerRegistry) byPath(path string) string {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	for name, w := range reg.byName {
		if w.Path == path {
			return name
		}
	}
	return ""
}

// add registers w and returns its first token.
func (reg *workerRegistry) add(ctx context.Context, w *worker.Worker) (*store.Worker, string, string, error) {
	if name := reg.byPath(w.Path); name != "" {
		return nil, "", "", errdefs.Errorf(errdefs.Conflict, "%s is registered already, as worker %q", w.Path, name)
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, "", "", err
	}
	sw := &store.Worker{Name: w.Name, Path: w.Path, Definition: b}
	tok, id, err := reg.st.RegisterWorker(ctx, sw)
	if errors.Is(err, store.ErrConflict) {
		return nil, "", "", errdefs.Errorf(errdefs.Conflict, "a worker named %q is registered already", w.Name)
	}
	if err != nil {
		return nil, "", "", err
	}
	reg.mu.Lock()
	reg.byName[w.Name] = w
	reg.mu.Unlock()
	if err := reg.watch.Add(w); err != nil {
		reg.log.Warn("cannot watch a worker file", "worker", w.Name, "path", w.Path, "err", err)
	}
	reg.changes.Publish()
	return sw, tok, id, nil
}

// remove unregisters the worker called name; its tokens go with it.
func (reg *workerRegistry) remove(ctx context.Context, name string) error {
	if err := reg.st.DeleteWorker(ctx, name); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errdefs.Errorf(errdefs.NotFound, "no worker named %q", name)
		}
		return err
	}
	reg.mu.Lock()
	w := reg.byName[name]
	delete(reg.byName, name)
	delete(reg.errs, name)
	reg.mu.Unlock()
	if w != nil {
		reg.watch.Remove(w.Path)
	}
	reg.changes.Publish()
	return nil
}

// workerView is the wire shape of a registered worker; tools lists its
// effective tools.
func (d *Daemon) workerView(ctx context.Context, sw *store.Worker, tools bool) (api.Worker, error) {
	v := api.Worker{Name: sw.Name, Path: sw.Path, CreatedAt: sw.CreatedAt, UpdatedAt: sw.UpdatedAt,
		ReloadError: d.workers.reloadError(sw.Name)}
	w, err := d.workers.get(sw.Name)
	if err != nil {
		return v, nil // stored but not readable: logged at start
	}
	v.Description, v.Profile = w.Description, w.Profile
	v.Workspace, v.ReadOnly = w.Workspace, w.ReadOnly
	if !tools {
		return v, nil
	}
	var lookupErr error
	for _, t := range w.EffectiveTools(func(name string) (worker.CatalogTool, bool) {
		t, err := d.catalog.Get(ctx, name)
		if err != nil {
			if !errdefs.Is(err, errdefs.ToolNotFound) {
				lookupErr = err
			}
			return worker.CatalogTool{}, false
		}
		return worker.CatalogTool{WrittenApproval: t.Def.WrittenApproval(), CreatedBy: t.CreatedBy}, true
	}) {
		v.Tools = append(v.Tools, api.WorkerTool(t))
	}
	made, err := d.disp.AgentTools(ctx, w)
	if err != nil {
		return v, err
	}
	for _, name := range made {
		if slices.Contains(w.Tools, name) {
			continue
		}
		t, err := d.catalog.Get(ctx, name)
		if errdefs.Is(err, errdefs.ToolNotFound) {
			continue // deleted since
		}
		if err != nil {
			return v, err
		}
		v.Tools = append(v.Tools, api.WorkerTool{Name: name, Source: "agent",
			Approval: w.ToolApproval(name, t.Def.WrittenApproval(), t.CreatedBy)})
	}
	for _, name := range d.disp.MetaToolNames(w) {
		v.Tools = append(v.Tools, api.WorkerTool{Name: name, Source: "meta",
			Approval: w.ToolApproval(name, catalog.ApprovalPreApproved, catalog.CreatedByUser)})
	}
	return v, lookupErr
}

func (d *Daemon) addWorker(w http.ResponseWriter, r *http.Request) error {
	var req api.WorkerAddRequest
	// An agent is refused (and recorded) whatever its body holds.
	decodeErr := decodeJSON(r, &req)
	return d.personOnly(r, actWorkerAdd, req.Path, func(principal.Caller) error {
		if decodeErr != nil {
			return decodeErr
		}
		if !filepath.IsAbs(req.Path) {
			return badRequest("path must be absolute, not %q", req.Path)
		}
		wk, err := worker.Load(filepath.Clean(req.Path))
		var pe *worker.ParseError
		if errors.As(err, &pe) {
			return &errdefs.Error{Code: errdefs.InvalidDefinition, Err: err}
		}
		if err != nil {
			return badRequest("reading the worker file: %v", err)
		}
		if err := d.checkWorker(wk); err != nil {
			return fmt.Errorf("worker %q: %w", wk.Name, err)
		}
		if err := d.leftData(r.Context(), wk.Name); err != nil {
			return err
		}
		sw, tok, id, err := d.workers.add(r.Context(), wk)
		if err != nil {
			return err
		}
		d.log.Info("worker registered", "worker", wk.Name, "path", wk.Path, "token_id", id)
		v, err := d.workerView(r.Context(), sw, true)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, api.WorkerToken{Worker: v, Token: tok, TokenID: id})
	})
}

// leftData refuses a new worker the data directory a removed worker of
// the same name left (its removal could not delete it): the new worker
// would find the old one's tables. A registered worker of the name is
// left to add's own conflict.
func (d *Daemon) leftData(ctx context.Context, name string) error {
	if !d.workerDBs.Left(name) {
		return nil
	}
	if _, err := d.store.GetWorker(ctx, name); !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return errdefs.Errorf(errdefs.Conflict, "the data directory %s of a removed worker named %q is still there; "+
		"run `toolcage worker rm %s` to delete it (or delete it yourself), then add the worker again", d.workerDBs.Dir(name), name, name)
}

// visibleWorker refuses an agent a worker other than its own, as if it
// did not exist.
func visibleWorker(c principal.Caller, name string) error {
	if c.IsPerson() || c.Worker == name {
		return nil
	}
	return errdefs.Errorf(errdefs.NotFound, "no worker named %q", name)
}

func (d *Daemon) listWorkers(w http.ResponseWriter, r *http.Request) error {
	c, err := callerOf(r)
	if err != nil {
		return err
	}
	list, err := d.store.ListWorkers(r.Context())
	if err != nil {
		return err
	}
	out := api.WorkerList{Workers: []api.Worker{}}
	for _, sw := range list {
		if visibleWorker(c, sw.Name) != nil {
			continue
		}
		v, err := d.workerView(r.Context(), sw, false)
		if err != nil {
			return err
		}
		out.Workers = append(out.Workers, v)
	}
	return writeJSON(w, http.StatusOK, out)
}

func (d *Daemon) getWorker(w http.ResponseWriter, r *http.Request) error {
	c, err := callerOf(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	if err := visibleWorker(c, name); err != nil {
		return err
	}
	sw, err := d.store.GetWorker(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return errdefs.Errorf(errdefs.NotFound, "no worker named %q", name)
	}
	if err != nil {
		return err
	}
	v, err := d.workerView(r.Context(), sw, true)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

func (d *Daemon) rotateWorkerToken(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	tok, id, err := d.store.RotateWorkerToken(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return errdefs.Errorf(errdefs.NotFound, "no worker named %q", name)
	}
	if err != nil {
		return err
	}
	d.log.Info("worker token rotated", "worker", name, "token_id", id)
	sw, err := d.store.GetWorker(r.Context(), name)
	if err != nil {
		return err
	}
	v, err := d.workerView(r.Context(), sw, false)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, api.WorkerToken{Worker: v, Token: tok, TokenID: id})
}

func (d *Daemon) removeWorker(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	again := false
	if err := d.workers.remove(r.Context(), name); err != nil {
		// No such worker, but the data directory an earlier removal could
		// not delete is there: this removal finishes that one.
		if !errdefs.Is(err, errdefs.NotFound) || !d.workerDBs.Left(name) {
			return err
		}
		again = true
	}
	// Its database goes with it (its state rows went with the store's
	// row): a worker added again under the name starts empty. The worker
	// is gone by now, so no new call reopens the file. A directory that
	// cannot be deleted fails the removal, which did all but that: the
	// person is told where it is and why, and a second rm finishes it.
	if err := d.workerDBs.Remove(name); err != nil {
		dir := d.workerDBs.Dir(name)
		d.log.Error("worker removed, but not its data directory", "worker", name, "path", dir, "err", err)
		return errdefs.Errorf(errdefs.Internal, "worker %q is removed (its tokens no longer work), but its data directory %s could not be deleted: %v; "+
			"fix that and run `toolcage worker rm %s` again, or delete the directory yourself: a worker added again under the name would find its data there", name, dir, err, name)
	}
	if again {
		d.log.Info("data directory of a removed worker deleted", "worker", name, "path", d.workerDBs.Dir(name))
	} else {
		d.log.Info("worker removed", "worker", name)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Guard: the wire type mirrors the worker package's.
var _ = api.WorkerTool(worker.EffectiveTool{})

// callerWorker is the registered worker the caller acts through, or nil.
func (d *Daemon) callerWorker(c principal.Caller) (*worker.Worker, error) {
	if c.Worker == "" {
		return nil, nil
	}
	w, err := d.workers.get(c.Worker)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return w, err
}

// toolFor gets the tool called name as the request's caller may see it:
// through a worker, only the worker's tools exist.
func (d *Daemon) toolFor(r *http.Request, name string) (*catalog.Tool, error) {
	c, err := callerOf(r)
	if err != nil {
		return nil, err
	}
	w, err := d.callerWorker(c)
	if err != nil || w == nil {
		if err != nil {
			return nil, err
		}
		return d.catalog.Get(r.Context(), name)
	}
	if lt := w.LocalTool(name); lt != nil {
		return &catalog.Tool{Def: lt.Def, Status: catalog.StatusActive, CreatedBy: catalog.CreatedByUser, Version: 1}, nil
	}
	ok, err := d.disp.WorkerHasTool(r.Context(), w, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &errdefs.Error{Code: errdefs.ToolNotFound, Err: fmt.Errorf("no tool named %q", name)}
	}
	return d.catalog.Get(r.Context(), name)
}

// listWorkerTools is GET /v1/tools for a caller acting through w.
func (d *Daemon) listWorkerTools(ctx context.Context, w *worker.Worker, f catalog.Filter, profile string) ([]*catalog.Tool, int, error) {
	if err := d.disp.KnownProfile(profile); err != nil {
		return nil, 0, err
	}
	all, err := d.disp.ToolsFor(ctx, w)
	if err != nil {
		return nil, 0, err
	}
	kept := slices.DeleteFunc(all, func(t *catalog.Tool) bool {
		return (f.Status != "" && t.Status != f.Status) || (f.Kind != "" && string(t.Def.Kind) != f.Kind) ||
			(f.CreatedBy != "" && t.CreatedBy != f.CreatedBy) ||
			(f.Category != "" && !strings.EqualFold(t.Def.Category, f.Category)) ||
			(profile != "" && !d.disp.ProfileAllows(t.Def, profile))
	})
	total := len(kept)
	kept = kept[min(f.Offset, total):]
	if f.Limit > 0 && f.Limit < len(kept) {
		kept = kept[:f.Limit]
	}
	return kept, total, nil
}

// makesTools guards the routes that make or change tools: an agent whose
// worker does not let it (agent_tools.create: false) is refused. Callers
// through no registered worker are left to the catalog's own rules.
func (d *Daemon) makesTools(fn func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := callerOf(r)
		if err != nil {
			return err
		}
		wk, err := d.callerWorker(c)
		if err != nil {
			return err
		}
		if wk != nil && !wk.AgentTools.Create {
			return errdefs.Errorf(errdefs.Forbidden, "worker %q does not let its agent make or change tools (agent_tools.create: false)", wk.Name)
		}
		return fn(w, r)
	}
}

// seesTool guards the routes about one tool: through a worker, a tool
// outside it reads as absent.
func (d *Daemon) seesTool(fn func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := d.toolFor(r, r.PathValue("name")); err != nil {
			return err
		}
		return fn(w, r)
	}
}

// noAdHoc refuses ad-hoc code to an agent acting through a worker: no
// worker grants it (yet), and it would run outside the worker's tools.
func (d *Daemon) noAdHoc(fn func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		c, err := callerOf(r)
		if err != nil {
			return err
		}
		wk, err := d.callerWorker(c)
		if err != nil {
			return err
		}
		if wk != nil {
			return errdefs.Errorf(errdefs.Forbidden, "worker %q does not grant ad-hoc code; call its tools", wk.Name)
		}
		return fn(w, r)
	}
}

// adoptAgentTool makes a tool an agent just made one of its worker's.
func (d *Daemon) adoptAgentTool(ctx context.Context, c principal.Caller, tool string) error {
	w, err := d.callerWorker(c)
	if err != nil || w == nil {
		return err
	}
	if err := d.store.AddWorkerTool(ctx, w.Name, tool); err != nil {
		return fmt.Errorf("tool %q was made, but not added to worker %q: %w", tool, w.Name, err)
	}
	d.changes.Publish()
	return nil
}

// revokeWorkerTokens revokes every token of a worker and issues none: its
// agent is locked out until a person rotates.
func (d *Daemon) revokeWorkerTokens(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	n, err := d.store.RevokeWorkerTokens(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return errdefs.Errorf(errdefs.NotFound, "no worker named %q", name)
	}
	if err != nil {
		return err
	}
	d.log.Info("worker tokens revoked", "worker", name, "tokens", n)
	return writeJSON(w, http.StatusOK, api.WorkerTokensRevoked{Worker: name, Revoked: n})
}

// checkWorker refuses a parsed worker the daemon cannot honour: an
// unknown profile, or a workspace or mount that reaches the daemon's own
// paths (checked after resolving symlinks).
func (d *Daemon) checkWorker(w *worker.Worker) error {
	if err := d.disp.KnownProfile(w.Profile); err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	if err := w.CheckMounts(d.mountGuard()); err != nil {
		return errdefs.Errorf(errdefs.Forbidden, "%v", err)
	}
	return checkHostPaths(w, d.mountChecker())
}

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
