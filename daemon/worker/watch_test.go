package worker

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolcage/toolcage/internal/testutil"
)

// waitLimit bounds every wait for a reload.
const waitLimit = 10 * time.Second

type watchHarness struct {
	t       *testing.T
	dir     string
	path    string
	w       *Watcher
	changes chan *Worker
	errs    chan error
	refused chan error // OnChange's refusals (startGuardedWatcher)
	log     *testutil.SyncBuffer
}

// startWatcher registers dir/w.yaml (content) with a running watcher.
func startWatcher(t *testing.T, files map[string]string) *watchHarness {
	t.Helper()
	return startGuardedWatcher(t, files, nil, 0)
}

// startGuardedWatcher is startWatcher whose OnChange refuses what guard
// does (into h.refused), retrying refused edits every retry.
func startGuardedWatcher(t *testing.T, files map[string]string, guard func(*Worker) error, retry time.Duration) *watchHarness {
	t.Helper()
	h := &watchHarness{t: t, dir: writeFiles(t, files), changes: make(chan *Worker, 16), errs: make(chan error, 16),
		refused: make(chan error, 64), log: &testutil.SyncBuffer{}}
	h.path = filepath.Join(h.dir, "w.yaml")
	data, err := os.ReadFile(h.path)
	if err != nil {
		t.Fatal(err)
	}
	first, err := Parse(h.path, data)
	if err != nil {
		t.Fatal(err)
	}
	h.w, err = NewWatcher(WatchConfig{
		Log: slog.New(slog.NewTextHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnChange: func(w *Worker) error {
			if guard != nil {
				if err := guard(w); err != nil {
					h.refused <- err
					return err
				}
			}
			h.changes <- w
			return nil
		},
		OnError:      func(_ string, err error) { h.errs <- err },
		Settle:       20 * time.Millisecond,
		RetryRefused: retry,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.w.Add(first); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(waitLimit):
			t.Error("Run did not return after cancel")
		}
	})
	return h
}

// replace writes content to dir/name the way editors do: a new file
// renamed over the old one.
func (h *watchHarness) replace(name, content string) {
	h.t.Helper()
	tmp := filepath.Join(h.dir, "."+filepath.Base(name)+".swp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(h.dir, name)); err != nil {
		h.t.Fatal(err)
	}
}

// write overwrites dir/name in place.
func (h *watchHarness) write(name, content string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, name), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *watchHarness) change() *Worker {
	h.t.Helper()
	select {
	case w := <-h.changes:
		return w
	case err := <-h.errs:
		h.t.Fatalf("edit refused: %v", err)
	case <-time.After(waitLimit):
		h.t.Fatalf("no reload within %s; log:\n%s", waitLimit, h.log)
	}
	return nil
}

func (h *watchHarness) refusal() error {
	h.t.Helper()
	select {
	case err := <-h.errs:
		return err
	case w := <-h.changes:
		h.t.Fatalf("edit accepted: %+v", w)
	case <-time.After(waitLimit):
		h.t.Fatalf("no refusal within %s; log:\n%s", waitLimit, h.log)
	}
	return nil
}

// logged waits until the log holds s.
func (h *watchHarness) logged(s string) {
	h.t.Helper()
	for deadline := time.Now().Add(waitLimit); !strings.Contains(h.log.String(), s); {
		if time.Now().After(deadline) {
			h.t.Fatalf("log never said %q:\n%s", s, h.log)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWatcherGoodBrokenFixed(t *testing.T) {
	h := startWatcher(t, map[string]string{"w.yaml": "name: ops\ndescription: first\ntools: [a]\n"})

	// A good edit, written the way editors write, is picked up.
	h.replace("w.yaml", "name: ops\ndescription: second\ntools: [a, b]\n")
	w := h.change()
	if w.Description != "second" || len(w.Tools) != 2 {
		t.Fatalf("reloaded %+v", w)
	}
	if cur := h.w.Current(h.path); cur != w {
		t.Errorf("Current = %+v, want the reloaded worker", cur)
	}

	// A broken edit keeps the last good version and says where.
	h.write("w.yaml", "name: ops\ndescription: third\nlimits: {timeout: soon}\n")
	err := h.refusal()
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), h.path+":3:19: limits.timeout: bad duration") {
		t.Fatalf("refusal %v, want %s:3:19: ...", err, h.path)
	}
	if cur := h.w.Current(h.path); cur.Description != "second" {
		t.Errorf("after a broken edit Current is %+v, want the last good one", cur)
	}
	if log := h.log.String(); !strings.Contains(log, "keeping the last good version") || !strings.Contains(log, "line=3") ||
		!strings.Contains(log, "at="+h.path+":3:19") {
		t.Errorf("log does not say why with the line:\n%s", log)
	}

	// A later fix is picked up.
	h.replace("w.yaml", "name: ops\ndescription: fourth\n")
	if w := h.change(); w.Description != "fourth" || len(w.Tools) != 0 {
		t.Fatalf("fix reloaded %+v", w)
	}

	// Rewriting the file without changing it reloads nothing: the reload
	// happens (the log says so) but reports no change.
	h.write("w.yaml", "name: ops\ndescription: fourth\n")
	h.logged("nothing changed")
	h.replace("w.yaml", "name: ops\ndescription: fifth\n")
	if w := h.change(); w.Description != "fifth" {
		t.Fatalf("after an unchanged write, the next change is %+v", w)
	}
}

func TestWatcherRefusesRename(t *testing.T) {
	h := startWatcher(t, map[string]string{"w.yaml": "# ops\nname: ops\n"})
	h.replace("w.yaml", "# ops\nname: ops2\n")
	err := h.refusal()
	if !strings.HasPrefix(err.Error(), h.path+`:2:7: name: changed from "ops" to "ops2"`) {
		t.Fatalf("refusal %v", err)
	}
	if h.w.Current(h.path).Name != "ops" {
		t.Error("a rename replaced the worker")
	}
}

func TestWatcherToolFiles(t *testing.T) {
	h := startWatcher(t, map[string]string{
		"w.yaml":            "name: ops\ntool_files: [tools/*.yaml]\n",
		"tools/lookup.yaml": lookupTool,
	})
	// An edit of a tool file reloads its worker.
	h.replace("tools/lookup.yaml", strings.Replace(lookupTool, "Look something up", "Look it up", 1))
	w := h.change()
	if len(w.LocalTools) != 1 || w.LocalTools[0].Def.Description != "Look it up" {
		t.Fatalf("reloaded %+v", w.LocalTools)
	}
	// A broken tool file is refused with its own position.
	h.write("tools/lookup.yaml", strings.Replace(lookupTool, "kind: js", "kind: perl", 1))
	err := h.refusal()
	if want := filepath.Join(h.dir, "tools", "lookup.yaml") + `:3:7: tool: kind: unknown kind "perl"`; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("refusal %v, want %s", err, want)
	}
	// Other files in the directory are none of the watcher's business: the
	// next change reported is the next edit of the tool.
	h.write("tools/notes.txt", "hello")
	h.replace("tools/lookup.yaml", strings.Replace(lookupTool, "Look something up", "Look again", 1))
	if w := h.change(); w.LocalTools[0].Def.Description != "Look again" {
		t.Fatalf("reloaded %+v", w.LocalTools[0].Def)
	}
}

func TestWatcherNewToolFile(t *testing.T) {
	h := startWatcher(t, map[string]string{
		"w.yaml":            "name: ops\ntool_files: [tools/*.yaml]\n",
		"tools/lookup.yaml": lookupTool,
	})
	// A tool file dropped where a pattern points is picked up.
	h.replace("tools/asker.yaml", askTool)
	w := h.change()
	if len(w.LocalTools) != 2 || w.LocalTool("asker") == nil {
		t.Fatalf("reloaded %+v", w.LocalTools)
	}
	// And its removal is noticed too.
	if err := os.Remove(filepath.Join(h.dir, "tools", "asker.yaml")); err != nil {
		t.Fatal(err)
	}
	if w := h.change(); len(w.LocalTools) != 1 || w.LocalTool("lookup") == nil {
		t.Fatalf("after removal %+v", w.LocalTools)
	}
	// Removing the last one leaves the pattern matching nothing: refused,
	// the last good version stays.
	if err := os.Remove(filepath.Join(h.dir, "tools", "lookup.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := h.refusal(); !strings.Contains(err.Error(), `tool_files: "tools/*.yaml" matches no file`) {
		t.Fatalf("refusal %v", err)
	}
	if h.w.Current(h.path).LocalTool("lookup") == nil {
		t.Error("the last good version was dropped")
	}
}

func TestWatcherFileRemovedAndBack(t *testing.T) {
	h := startWatcher(t, map[string]string{"w.yaml": "name: ops\n"})
	if err := os.Remove(h.path); err != nil {
		t.Fatal(err)
	}
	if err := h.refusal(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("refusal %v, want a missing file", err)
	}
	if h.w.Current(h.path) == nil {
		t.Fatal("a removed file dropped the worker")
	}
	h.write("w.yaml", "name: ops\ndescription: back\n")
	if w := h.change(); w.Description != "back" {
		t.Fatalf("reloaded %+v", w)
	}
	// Remove stops watching.
	h.w.Remove(h.path)
	if h.w.Current(h.path) != nil {
		t.Error("Current after Remove")
	}
	// Events are handled in order: with w.yaml unwatched, the first change
	// reported after editing it and then another watched file is the other.
	h.write("w2.yaml", "name: other\n")
	other, err := Load(filepath.Join(h.dir, "w2.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.w.Add(other); err != nil {
		t.Fatal(err)
	}
	h.write("w.yaml", "name: ops\ndescription: unwatched\n")
	h.replace("w2.yaml", "name: other\ndescription: watched\n")
	if w := h.change(); w.Name != "other" || w.Description != "watched" {
		t.Fatalf("after Remove, the next change is %+v", w)
	}
}

// An edit a guard of OnChange refuses keeps the last good version and is
// tried again: on a timer while nothing changes, on the next event of its
// file even when the file reads the same, and it ends when the file goes
// back to the last good version.
func TestWatcherRetriesAGuardsRefusal(t *testing.T) {
	var blocked atomic.Bool
	guard := func(w *Worker) error {
		if blocked.Load() && w.Description != "first" {
			return errors.New("the workspace reaches the daemon's data dir")
		}
		return nil
	}
	refusedOnce := func(h *watchHarness) {
		t.Helper()
		select {
		case <-h.refused:
		case <-time.After(waitLimit):
			t.Fatalf("no refusal; log:\n%s", h.log)
		}
	}
	t.Run("timer", func(t *testing.T) {
		h := startGuardedWatcher(t, map[string]string{"w.yaml": "name: ops\ndescription: first\n"}, guard, 100*time.Millisecond)
		blocked.Store(true)
		h.replace("w.yaml", "name: ops\ndescription: second\n")
		refusedOnce(h)
		// Taken back once OnChange has returned.
		for deadline := time.Now().Add(waitLimit); h.w.Current(h.path).Description != "first"; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("after a refusal Current is %q", h.w.Current(h.path).Description)
			}
		}
		refusedOnce(h) // tried again on the timer, still refused
		blocked.Store(false)
		if w := h.change(); w.Description != "second" {
			t.Fatalf("retried: %q", w.Description)
		}
		if cur := h.w.Current(h.path); cur.Description != "second" {
			t.Fatalf("after the retry Current is %q", cur.Description)
		}
	})
	t.Run("same content again", func(t *testing.T) {
		h := startGuardedWatcher(t, map[string]string{"w.yaml": "name: ops\ndescription: first\n"}, guard, time.Hour)
		blocked.Store(true)
		h.replace("w.yaml", "name: ops\ndescription: second\n")
		refusedOnce(h)
		blocked.Store(false)
		h.write("w.yaml", "name: ops\ndescription: second\n") // touched, same text
		if w := h.change(); w.Description != "second" {
			t.Fatalf("retried: %q", w.Description)
		}
	})
	t.Run("back to the last good version", func(t *testing.T) {
		h := startGuardedWatcher(t, map[string]string{"w.yaml": "name: ops\ndescription: first\n"}, guard, 50*time.Millisecond)
		blocked.Store(true)
		h.replace("w.yaml", "name: ops\ndescription: second\n")
		refusedOnce(h)
		h.replace("w.yaml", "name: ops\ndescription: first\n")
		if w := h.change(); w.Description != "first" {
			t.Fatalf("the good version again: %q", w.Description)
		}
		// No more tries: the refusal is over.
		for len(h.refused) > 0 {
			<-h.refused // tries before the file went back
		}
		time.Sleep(300 * time.Millisecond)
		select {
		case err := <-h.refused:
			t.Fatalf("tried again after the file went back: %v", err)
		default:
		}
		blocked.Store(false)
	})
}
