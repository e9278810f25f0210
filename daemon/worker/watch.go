package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/toolcage/toolcage/internal/filetrust"
)

// DefaultSettle is how long a file must stay quiet after a change before
// it is read: editors write a file in steps (truncate, write, rename), and
// reading between them would see a broken edit that is not one.
const DefaultSettle = 100 * time.Millisecond

// DefaultRetryRefused is how often an edit a guard refused is tried again
// while nothing changes: the cause may be outside the file (a path it
// names, a directory a mount reaches), and go away without an edit.
const DefaultRetryRefused = 30 * time.Second

// WatchConfig configures a Watcher.
type WatchConfig struct {
	// Log receives a line for every reload and every refused edit.
	Log *slog.Logger
	// OnChange is called with the new version of a worker after a good
	// edit of its file or of one of its tool files. An error refuses the
	// version (a guard of the caller's: a mount reaching the daemon's own
	// paths, an unknown profile): the last good version stays, and the
	// edit is tried again on the next event of its files, even when they
	// read the same, and every RetryRefused until it is taken or the
	// files go back to the last good version.
	OnChange func(*Worker) error
	// OnError, if set, is called when an edit is refused: a *ParseError
	// (file:line:col), a file that cannot be read, or a name change. The
	// last good version stays in force.
	OnError func(path string, err error)
	// Settle overrides DefaultSettle.
	Settle time.Duration
	// RetryRefused overrides DefaultRetryRefused.
	RetryRefused time.Duration
	// Trust says whose files a version may be read from (CheckTrust); a
	// version with a file anyone else can change is refused through
	// OnError. No owners: filetrust.ForProcess.
	Trust filetrust.Policy
}

// Watcher reloads registered worker files when they or their tool files
// change, keeping the last good version of each when an edit is broken.
// It watches directories, not files, because editors replace a file by
// renaming a new one over it. Callbacks run one at a time on Run's
// goroutine; the *Worker they get is shared with Current and must be
// treated as read-only. Add and Remove may be called at any time; Run
// runs once.
type Watcher struct {
	cfg     WatchConfig
	fsw     *fsnotify.Watcher
	pending chan string   // worker paths due for a reload
	done    chan struct{} // closed when Run returns

	mu      sync.Mutex
	workers map[string]*watched    // worker file → its state
	deps    map[string][]string    // watched file or tool_files pattern → worker files to reload
	dirs    map[string]int         // directory → files watched in it
	timers  map[string]*time.Timer // worker file → its settle timer
	retries map[string]*time.Timer // worker file → its refused edit's retry
}

// watched is one registered worker file.
type watched struct {
	last *Worker  // the last good version
	json []byte   // last, marshalled: a reload that changes nothing is no change
	deps []string // the worker file, its tool files and tool_files patterns
	// refused is set while the files hold a version OnChange refused.
	refused bool
}

// NewWatcher returns a watcher; call Run to start it.
func NewWatcher(cfg WatchConfig) (*Watcher, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Settle <= 0 {
		cfg.Settle = DefaultSettle
	}
	if cfg.RetryRefused <= 0 {
		cfg.RetryRefused = DefaultRetryRefused
	}
	if len(cfg.Trust.Owners) == 0 {
		cfg.Trust = filetrust.ForProcess()
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("worker watcher: %w", err)
	}
	return &Watcher{
		cfg:     cfg,
		fsw:     fsw,
		pending: make(chan string, 64),
		done:    make(chan struct{}),
		workers: map[string]*watched{},
		deps:    map[string][]string{},
		dirs:    map[string]int{},
		timers:  map[string]*time.Timer{},
		retries: map[string]*time.Timer{},
	}, nil
}

// Add watches the file w was parsed from, and its tool files, with w as
// the last good version.
func (wt *Watcher) Add(w *Worker) error {
	b, err := json.Marshal(w)
	if err != nil {
		return fmt.Errorf("worker watcher: %w", err)
	}
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if _, ok := wt.workers[w.Path]; ok {
		return fmt.Errorf("worker watcher: %s is already watched", w.Path)
	}
	st := &watched{last: w, json: b}
	wt.workers[w.Path] = st
	if err := wt.setDeps(w.Path, st, depsOf(w)); err != nil {
		wt.dropLocked(w.Path)
		return err
	}
	return nil
}

// Remove stops watching the worker file at path.
func (wt *Watcher) Remove(path string) {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	wt.dropLocked(path)
}

// Current returns the last good version of the worker file at path, or
// nil if it is not watched.
func (wt *Watcher) Current(path string) *Worker {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if st, ok := wt.workers[path]; ok {
		return st.last
	}
	return nil
}

// Run handles file events until ctx ends, then releases the watcher. It
// returns nil when ctx ends and an error when the event source fails.
func (wt *Watcher) Run(ctx context.Context) error {
	defer func() {
		close(wt.done)
		wt.mu.Lock()
		for _, t := range wt.timers {
			t.Stop()
		}
		for _, t := range wt.retries {
			t.Stop()
		}
		wt.mu.Unlock()
		_ = wt.fsw.Close() // nothing left to tell anyone
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-wt.fsw.Events:
			if !ok {
				return errors.New("worker watcher: event source closed")
			}
			wt.schedule(filepath.Clean(ev.Name))
		case err, ok := <-wt.fsw.Errors:
			if !ok {
				return errors.New("worker watcher: event source closed")
			}
			// An overflow loses events: reload everything to be sure.
			wt.cfg.Log.Warn("worker watcher: file events lost; reloading every worker file", "error", err)
			wt.mu.Lock()
			paths := make([]string, 0, len(wt.workers))
			for p := range wt.workers {
				paths = append(paths, p)
			}
			wt.mu.Unlock()
			for _, p := range paths {
				wt.scheduleWorker(p)
			}
		case path := <-wt.pending:
			wt.reload(path)
		}
	}
}

// schedule reloads, once the file settles, every worker that depends on
// the file named by an event, or has a tool_files pattern it matches (a
// new tool file); events about other files in the same directories are
// ignored.
func (wt *Watcher) schedule(file string) {
	wt.mu.Lock()
	workers := slices.Clone(wt.deps[file])
	for key, ws := range wt.deps {
		if hasMeta(key) && filepath.Dir(key) == filepath.Dir(file) {
			if ok, _ := filepath.Match(key, file); ok {
				workers = append(workers, ws...)
			}
		}
	}
	wt.mu.Unlock()
	for _, p := range workers {
		wt.scheduleWorker(p)
	}
}

func (wt *Watcher) scheduleWorker(path string) {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if t, ok := wt.timers[path]; ok {
		t.Reset(wt.cfg.Settle)
		return
	}
	wt.timers[path] = wt.queueAfter(wt.timers, path, wt.cfg.Settle)
}

// queueAfter queues path for a reload after d, dropping its timer from
// timers (wt.timers or wt.retries) when it fires.
func (wt *Watcher) queueAfter(timers map[string]*time.Timer, path string, d time.Duration) *time.Timer {
	return time.AfterFunc(d, func() {
		wt.mu.Lock()
		delete(timers, path)
		wt.mu.Unlock()
		select {
		case wt.pending <- path:
		case <-wt.done:
		}
	})
}

// reload re-reads the worker file at path and its tool files.
func (wt *Watcher) reload(path string) {
	wt.mu.Lock()
	st, ok := wt.workers[path]
	wt.mu.Unlock()
	if !ok {
		return // removed meanwhile
	}
	log := wt.cfg.Log.With("worker", st.last.Name, "file", path)
	data, err := readLimited(path, MaxFileBytes)
	if err != nil {
		wt.refuse(log, path, err)
		return
	}
	w, err := Parse(path, data)
	if err == nil && w.Name != st.last.Name {
		err = &ParseError{Problems: []*Error{nameChanged(path, data, st.last.Name, w.Name)}}
		w = nil
	}
	if err == nil {
		// After the parse, which found the tool files: a file another
		// user could have written is never taken, however it reads.
		err = w.CheckTrust(wt.cfg.Trust)
	}
	if err != nil {
		wt.refuse(log, path, err)
		return
	}
	b, err := json.Marshal(w)
	if err != nil {
		wt.refuse(log, path, err)
		return
	}
	wt.mu.Lock()
	if cur, ok := wt.workers[path]; !ok || cur != st {
		wt.mu.Unlock()
		return // removed meanwhile
	}
	if bytes.Equal(b, st.json) {
		// Back to the last good version: a refusal standing is over,
		// and the caller hears the good version again to say so.
		was := st.refused
		st.refused = false
		wt.stopRetryLocked(path)
		wt.mu.Unlock()
		if was && wt.cfg.OnChange != nil {
			_ = wt.cfg.OnChange(st.last)
		}
		log.Debug("worker file event, but nothing changed")
		return
	}
	// Offered as the new version (Current says so while OnChange runs),
	// taken back if OnChange refuses it.
	prev, prevJSON := st.last, st.json
	st.last, st.json = w, b
	wt.mu.Unlock()
	var refusal error
	if wt.cfg.OnChange != nil {
		refusal = wt.cfg.OnChange(w)
	}
	wt.mu.Lock()
	if cur, ok := wt.workers[path]; !ok || cur != st {
		wt.mu.Unlock()
		return // removed meanwhile
	}
	if refusal != nil {
		st.last, st.json = prev, prevJSON
		again := st.refused
		st.refused = true
		// The refused version's files are watched too: an edit of one
		// of them is the next try.
		depErr := wt.setDeps(path, st, union(depsOf(st.last), depsOf(w)))
		wt.retryLocked(path)
		wt.mu.Unlock()
		if depErr != nil {
			log.Warn("some of a refused version's files cannot be watched", "error", depErr)
		}
		level := slog.LevelWarn
		if again {
			level = slog.LevelDebug // a retry refused: said already
		}
		log.Log(context.Background(), level, "worker file edit refused; keeping the last good version, and trying the edit again on its next change or in "+
			wt.cfg.RetryRefused.String(), "error", refusal.Error())
		return
	}
	st.refused = false
	wt.stopRetryLocked(path)
	depErr := wt.setDeps(path, st, depsOf(w))
	wt.mu.Unlock()
	if depErr != nil {
		log.Warn("worker reloaded, but some of its files cannot be watched", "error", depErr)
	}
	log.Info("worker file reloaded", "tools", len(w.Tools)+len(w.LocalTools))
}

// retryLocked tries the worker file at path again in RetryRefused, unless
// a try is due already. wt.mu is held.
func (wt *Watcher) retryLocked(path string) {
	if _, ok := wt.retries[path]; ok {
		return
	}
	wt.retries[path] = wt.queueAfter(wt.retries, path, wt.cfg.RetryRefused)
}

// stopRetryLocked drops path's retry. wt.mu is held.
func (wt *Watcher) stopRetryLocked(path string) {
	if t, ok := wt.retries[path]; ok {
		t.Stop()
		delete(wt.retries, path)
	}
}

// union is a's files, then b's not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, f := range b {
		if !contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// refuse logs a refused edit with its first problem's line and column.
func (wt *Watcher) refuse(log *slog.Logger, path string, err error) {
	attrs := []any{"error", err.Error()}
	var pe *ParseError
	if errors.As(err, &pe) {
		first := pe.First()
		attrs = append(attrs, "at", fmt.Sprintf("%s:%d:%d", first.File, first.Line, first.Column),
			"line", first.Line, "column", first.Column, "problems", len(pe.Problems))
	}
	log.Warn("worker file edit refused; keeping the last good version", attrs...)
	if wt.cfg.OnError != nil {
		wt.cfg.OnError(path, err)
	}
}

// nameChanged places the refusal of a renamed worker at its name.
func nameChanged(path string, data []byte, was, now string) *Error {
	e := &Error{File: path, Line: 1, Column: 1,
		Message: fmt.Sprintf("name: changed from %q to %q; a worker's name is its identity: remove the worker and register the file anew", was, now)}
	if root, err := readDocument(data, "worker"); err == nil {
		if n := valueOf(root, "name"); n != root {
			e.Line, e.Column = n.Line, n.Column
		}
	}
	return e
}

// depsOf lists the files a worker is read from, and its tool_files
// patterns whose directory part is literal, so a tool file added there is
// noticed. (A wildcard in a directory part would need a recursive watch; a
// tool file added under one is read with the worker file's next change.)
func depsOf(w *Worker) []string {
	files := []string{w.Path}
	for _, t := range w.LocalTools {
		files = append(files, filepath.Clean(t.File))
	}
	for _, p := range w.ToolFiles {
		abs := filepath.Join(filepath.Dir(w.Path), p)
		if hasMeta(filepath.Base(abs)) && !hasMeta(filepath.Dir(abs)) && !contains(files, abs) {
			files = append(files, abs)
		}
	}
	return files
}

// hasMeta reports whether a path holds glob syntax.
func hasMeta(path string) bool { return strings.ContainsAny(path, `*?[\`) }

// setDeps makes path depend on files (and patterns), watching their
// directories. wt.mu is held.
func (wt *Watcher) setDeps(path string, st *watched, files []string) error {
	var errs []error
	for _, f := range files {
		if contains(st.deps, f) {
			continue
		}
		if err := wt.watchDir(filepath.Dir(f)); err != nil {
			errs = append(errs, err)
			continue
		}
		wt.deps[f] = append(wt.deps[f], path)
		st.deps = append(st.deps, f)
	}
	// Files the worker no longer reads.
	kept := st.deps[:0]
	for _, f := range st.deps {
		if contains(files, f) {
			kept = append(kept, f)
			continue
		}
		wt.unlink(f, path)
	}
	st.deps = kept
	return errors.Join(errs...)
}

// dropLocked forgets the worker file at path. wt.mu is held.
func (wt *Watcher) dropLocked(path string) {
	st, ok := wt.workers[path]
	if !ok {
		return
	}
	for _, f := range st.deps {
		wt.unlink(f, path)
	}
	if t, ok := wt.timers[path]; ok {
		t.Stop()
		delete(wt.timers, path)
	}
	wt.stopRetryLocked(path)
	delete(wt.workers, path)
}

// unlink removes worker's dependency on file, unwatching its directory
// when nothing there is watched any more. wt.mu is held.
func (wt *Watcher) unlink(file, worker string) {
	list := wt.deps[file]
	for i, p := range list {
		if p == worker {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(wt.deps, file)
	} else {
		wt.deps[file] = list
	}
	dir := filepath.Dir(file)
	if wt.dirs[dir]--; wt.dirs[dir] <= 0 {
		delete(wt.dirs, dir)
		_ = wt.fsw.Remove(dir) // gone already, or never added: either way unwatched
	}
}

// watchDir counts one more watched file in dir, watching dir for the first.
func (wt *Watcher) watchDir(dir string) error {
	if wt.dirs[dir] == 0 {
		if err := wt.fsw.Add(dir); err != nil {
			return fmt.Errorf("worker watcher: watch %s: %w", dir, err)
		}
	}
	wt.dirs[dir]++
	return nil
}
