package worker

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/toolcage/toolcage/daemon/changes"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/store"
)

// TestRegistry: a worker added is found by name and path, announced, kept
// in the store (a new registry over it loads it), refused a second time
// by name or path, and gone once removed.
func TestRegistry(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ch := &changes.Broadcaster{}
	heard, stop := ch.Subscribe()
	defer stop()
	reg, err := NewRegistry(ctx, st, slog.New(slog.DiscardHandler), ch, 0)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.yaml")
	w := &Worker{Name: "w", Path: path}
	if _, tok, _, err := reg.Add(ctx, w); err != nil || tok == "" {
		t.Fatalf("add: %q %v", tok, err)
	}
	select {
	case <-heard:
	default:
		t.Fatal("the registration was not announced")
	}
	if got, err := reg.Get("w"); err != nil || got != w || reg.ByPath(path) != "w" || reg.ReloadError("w") != "" {
		t.Fatalf("get: %v %v; by path %q", got, err, reg.ByPath(path))
	}
	if _, _, _, err := reg.Add(ctx, &Worker{Name: "other", Path: path}); errdefs.CodeOf(err) != errdefs.Conflict {
		t.Fatalf("the same path again: %v", err)
	}
	if _, _, _, err := reg.Add(ctx, &Worker{Name: "w", Path: path + ".2"}); errdefs.CodeOf(err) != errdefs.Conflict {
		t.Fatalf("the same name again: %v", err)
	}
	again, err := NewRegistry(ctx, st, slog.New(slog.DiscardHandler), ch, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := again.Get("w"); err != nil || got.Path != path {
		t.Fatalf("reloaded from the store: %+v %v", got, err)
	}
	if err := reg.Remove(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Get("w"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after remove: %v", err)
	}
	if err := reg.Remove(ctx, "w"); errdefs.CodeOf(err) != errdefs.NotFound {
		t.Fatalf("remove twice: %v", err)
	}
}
