package testfs

import (
	"os"
	"path/filepath"
	"testing"
)

// Undeletable holds: RemoveAll fails until undo, then succeeds.
func TestUndeletable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	undo := Undeletable(t, dir)
	if err := os.RemoveAll(dir); err == nil {
		t.Fatal("RemoveAll of an undeletable directory succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); err != nil {
		t.Fatalf("its file is gone: %v", err)
	}
	undo()
	undo() // twice is harmless
	if err := os.RemoveAll(dir); err != nil {
		t.Fatalf("after undo: %v", err)
	}
}
