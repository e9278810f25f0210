package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadOrCreateKeyCreates0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "secrets.key")
	key, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatalf("LoadOrCreateKey: %v", err)
	}
	if len(key) != KeySize {
		t.Fatalf("key is %d bytes, want %d", len(key), KeySize)
	}
	if bytes.Equal(key, make([]byte, KeySize)) {
		t.Fatal("key is all zeros")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("key file mode %04o, want 0600", perm)
	}
	if fi.Size() != KeySize {
		t.Errorf("key file size %d, want %d", fi.Size(), KeySize)
	}

	// A second call loads the same key instead of making a new one.
	again, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatalf("second LoadOrCreateKey: %v", err)
	}
	if !bytes.Equal(key, again) {
		t.Error("second call returned a different key")
	}

	// Two files get two different keys.
	other, err := LoadOrCreateKey(filepath.Join(t.TempDir(), "other.key"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(key, other) {
		t.Error("two new key files hold the same key")
	}
}

func TestLoadOrCreateKeyRefusesReadableByOthers(t *testing.T) {
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		path := filepath.Join(t.TempDir(), "secrets.key")
		if _, err := LoadOrCreateKey(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadOrCreateKey(path)
		if err == nil || !strings.Contains(err.Error(), "group and others") {
			t.Errorf("mode %04o: err = %v, want refusal naming group and others", mode, err)
		}
		// The file is refused, not repaired or replaced.
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("mode changed to %04o", fi.Mode().Perm())
		}
	}
}

func TestLoadOrCreateKeyRefusesWrongSize(t *testing.T) {
	for _, size := range []int{0, 16, KeySize - 1, KeySize + 1, 64} {
		path := filepath.Join(t.TempDir(), "secrets.key")
		content := bytes.Repeat([]byte{7}, size)
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadOrCreateKey(path)
		if err == nil || !strings.Contains(err.Error(), "want exactly 32") {
			t.Errorf("size %d: err = %v, want wrong-size refusal", size, err)
		}
		// Not overwritten.
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, content) {
			t.Errorf("size %d: key file was rewritten", size)
		}
	}
}

func TestLoadOrCreateKeyRefusesDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets.key")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(path); err == nil {
		t.Error("a directory was accepted as key file")
	}
}

func TestLoadOrCreateKeyEmptyPath(t *testing.T) {
	if _, err := LoadOrCreateKey(""); err == nil {
		t.Error("empty path accepted")
	}
}
