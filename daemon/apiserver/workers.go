package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/visible"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/internal/filetrust"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// workerView is the wire shape of a registered worker; tools lists its
// effective tools.
func (d *Server) workerView(ctx context.Context, sw *store.Worker, tools bool) (api.Worker, error) {
	v := api.Worker{Name: sw.Name, Path: sw.Path, CreatedAt: sw.CreatedAt, UpdatedAt: sw.UpdatedAt,
		ReloadError: d.workers.ReloadError(sw.Name)}
	w, err := d.workers.Get(sw.Name)
	if err != nil {
		return v, nil // stored but not readable: logged at start
	}
	v.Description, v.Profile = w.Description, w.Profile
	v.Workspace, v.ReadOnly, v.Protect = w.Workspace, w.ReadOnly, w.ProtectMode()
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
	made, err := d.disp.Views().Made(ctx, w)
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
	for _, name := range visible.MetaNames(w) {
		v.Tools = append(v.Tools, api.WorkerTool{Name: name, Source: "meta",
			Approval: w.ToolApproval(name, catalog.ApprovalPreApproved, catalog.CreatedByUser)})
	}
	return v, lookupErr
}

func (d *Server) addWorker(w http.ResponseWriter, r *http.Request) error {
	var req api.WorkerAddRequest
	// An agent is refused (and recorded) whatever its body holds.
	decodeErr := decodeJSON(r, &req)
	return d.personOnly(r, ActWorkerAdd, req.Path, func(principal.Caller) error {
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
		if filetrust.Is(err) {
			return err
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
		sw, tok, id, err := d.workers.Add(r.Context(), wk)
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
func (d *Server) leftData(ctx context.Context, name string) error {
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

func (d *Server) listWorkers(w http.ResponseWriter, r *http.Request) error {
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

func (d *Server) getWorker(w http.ResponseWriter, r *http.Request) error {
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

func (d *Server) rotateWorkerToken(w http.ResponseWriter, r *http.Request) error {
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

func (d *Server) removeWorker(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	again := false
	if err := d.workers.Remove(r.Context(), name); err != nil {
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

// revokeWorkerTokens revokes every token of a worker and issues none: its
// agent is locked out until a person rotates.
func (d *Server) revokeWorkerTokens(w http.ResponseWriter, r *http.Request) error {
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
func (d *Server) checkWorker(w *worker.Worker) error {
	if err := d.disp.Views().KnownProfile(w.Profile); err != nil {
		return fmt.Errorf("profile: %w", err)
	}
	if err := w.CheckMounts(d.mountGuard()); err != nil {
		return errdefs.Errorf(errdefs.Forbidden, "%v", err)
	}
	if d.hostPaths != nil {
		return d.hostPaths(w)
	}
	return nil
}
