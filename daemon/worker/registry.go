package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/toolcage/toolcage/daemon/changes"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/internal/filetrust"
	"github.com/toolcage/toolcage/policy/mounts"
	"github.com/toolcage/toolcage/store"
)

// The worker registry: the registered workers' last good definitions, kept
// in the store and in memory, and a watcher that reloads their files. A
// good edit replaces the definition (store and memory); a broken one keeps
// the last good version and is logged with its file:line:col.

// Registry holds the registered workers. Safe for concurrent use.
type Registry struct {
	st    *store.Store
	log   *slog.Logger
	watch *Watcher
	// changes hears of every registration, reload and removal: each may
	// change what tools a worker's agent sees.
	changes *changes.Broadcaster

	// Check refuses a parsed edit the daemon cannot honour (an unknown
	// profile); nil accepts every good parse. Set it before Run.
	Check func(*Worker) error

	mu     sync.RWMutex
	byName map[string]*Worker
	errs   map[string]string // name → why its last edit was refused
}

// NewRegistry loads the registered workers from the store and
// watches their files (Run starts the watching).
func NewRegistry(ctx context.Context, st *store.Store, log *slog.Logger, ch *changes.Broadcaster, retry time.Duration) (*Registry, error) {
	reg := &Registry{st: st, log: log, changes: ch, byName: map[string]*Worker{}, errs: map[string]string{}}
	w, err := NewWatcher(WatchConfig{Log: log, OnChange: reg.changed, OnError: reg.refused, RetryRefused: retry})
	if err != nil {
		return nil, err
	}
	reg.watch = w
	list, err := st.ListWorkers(ctx)
	if err != nil {
		return nil, err
	}
	for _, sw := range list {
		var wk Worker
		if err := json.Unmarshal(sw.Definition, &wk); err != nil {
			log.Error("a registered worker's stored definition does not read; it stays out of service", "worker", sw.Name, "err", err)
			continue
		}
		reg.byName[wk.Name] = &wk
		if err := wk.CheckTrust(filetrust.ForProcess()); err != nil {
			// The stored version was read when its files were the
			// person's; it stays, as a reload would keep it.
			reg.refused(wk.Path, err)
		}
		if err := reg.watch.Add(&wk); err != nil {
			// The file's directory may be gone; its last good version
			// still serves.
			log.Warn("cannot watch a worker file", "worker", wk.Name, "path", wk.Path, "err", err)
		}
	}
	return reg, nil
}

// Run watches the files until ctx ends.
func (reg *Registry) Run(ctx context.Context) {
	if err := reg.watch.Run(ctx); err != nil {
		reg.log.Error("worker file watcher stopped; edits are no longer picked up", "err", err)
	}
}

// changed takes a good edit: the store and memory get the new version.
// An edit the daemon's check refuses is returned refused: the watcher
// keeps the last good version and tries the edit again (on the file's
// next change, or on its timer) until the cause is gone.
func (reg *Registry) changed(w *Worker) error {
	if reg.Check != nil {
		if err := reg.Check(w); err != nil {
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

// ActReload names, in the admin log, a worker's files refused at a
// reload or at start because someone else can change them.
const ActReload = "worker.reload"

// refused notes a broken edit; the last good version stays.
func (reg *Registry) refused(path string, err error) {
	msg := err.Error()
	var pe *ParseError
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
			if filetrust.Is(err) && level == slog.LevelWarn {
				// Someone else can change the person's files: news
				// for the admin log, once per cause.
				a := &store.AdminAct{Act: ActReload, Target: path, CallerID: "toolcage", Worker: name,
					Outcome: store.ActRefused, ErrorCode: string(errdefs.CodeOf(err)), Error: msg}
				if err := reg.st.RecordAdminAct(context.Background(), a); err != nil {
					reg.log.Error("recording admin act", "act", a.Act, "target", path, "err", err)
				}
			}
			reg.errs[name] = msg
			reg.log.Log(context.Background(), level, "worker file edit refused; the last good version stays in force", "worker", name, "error", msg)
		}
	}
}

// Get returns the last good version of the worker called name, or an
// error wrapping store.ErrNotFound.
func (reg *Registry) Get(name string) (*Worker, error) {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	if w, ok := reg.byName[name]; ok {
		return w, nil
	}
	return nil, fmt.Errorf("worker %q: %w", name, store.ErrNotFound)
}

// Guard is g with what no registered worker's tools may make writable:
// every worker's own files and tool file directories (Worker.Guard).
func (reg *Registry) Guard(g mounts.Guard) mounts.Guard {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	for _, w := range reg.byName {
		g = w.Guard(g)
	}
	return g
}

// ReloadError is why the last edit of the worker called name was
// refused, "" when it was not.
func (reg *Registry) ReloadError(name string) string {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	return reg.errs[name]
}

// ByPath is the name of the worker registered from path, "" for none.
func (reg *Registry) ByPath(path string) string {
	reg.mu.RLock()
	defer reg.mu.RUnlock()
	for name, w := range reg.byName {
		if w.Path == path {
			return name
		}
	}
	return ""
}

// Add registers w and returns its first token.
func (reg *Registry) Add(ctx context.Context, w *Worker) (*store.Worker, string, string, error) {
	if name := reg.ByPath(w.Path); name != "" {
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

// Remove unregisters the worker called name; its tokens go with it.
func (reg *Registry) Remove(ctx context.Context, name string) error {
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
