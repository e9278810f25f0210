package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultSocketPath(t *testing.T) {
	t.Setenv("TMPDIR", "/tmp")
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	tests := []struct {
		name string
		env  map[string]string
		euid int
		want string
	}{
		{"XDG_RUNTIME_DIR", map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}, 1000, "/run/user/1000/toolcage/toolcage.sock"},
		{"root", nil, 0, "/run/toolcage/toolcage.sock"},
		{"user without XDG_RUNTIME_DIR", nil, 1000, "/tmp/toolcage-1000/toolcage.sock"},
		{"empty XDG_RUNTIME_DIR", map[string]string{"XDG_RUNTIME_DIR": ""}, 42, "/tmp/toolcage-42/toolcage.sock"},
	}
	for _, tt := range tests {
		if got := defaultSocketPath(env(tt.env), tt.euid); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestPrivateSocketDir: the per-user fallback directory in /tmp is created
// 0700, and one someone else made first (another owner, another mode, a
// symlink, a file) is refused by the daemon and the client alike.
func TestPrivateSocketDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	uid := os.Geteuid()
	dir := fallbackSocketDir(uid)
	sock := filepath.Join(dir, "toolcage.sock")
	if !strings.HasPrefix(dir, tmp+"/toolcage-") {
		t.Fatalf("fallback dir %s not under TMPDIR", dir)
	}

	// Missing: the client has nothing to fear; the daemon creates it.
	if err := CheckSocketDir(sock); err != nil {
		t.Errorf("client, dir missing: %v", err)
	}
	if err := PrepareSocketDir(sock); err != nil {
		t.Fatalf("daemon, dir missing: %v", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("created %v %v", fi.Mode(), err)
	}
	// Ours and 0700: both go on, again and again.
	if err := PrepareSocketDir(sock); err != nil {
		t.Errorf("daemon, dir ours: %v", err)
	}
	if err := CheckSocketDir(sock); err != nil {
		t.Errorf("client, dir ours: %v", err)
	}
	ln, err := ListenSocket(sock)
	if err != nil {
		t.Fatalf("listen in the fallback dir: %v", err)
	}
	ln.Close()

	refused := func(name, want string) {
		t.Helper()
		if err := CheckSocketDir(sock); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("client, %s: %v, want %q", name, err, want)
		}
		if err := PrepareSocketDir(sock); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("daemon, %s: %v, want %q", name, err, want)
		}
		if _, err := ListenSocket(sock); err == nil {
			t.Errorf("daemon listened in a %s", name)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	refused("dir of mode 0755", "has mode 0755, want 0700")
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if uid == 0 { // only root can give a directory away
		if err := os.Chown(dir, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		refused("dir of another user", "belongs to another user")
		if err := os.Chown(dir, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink to a directory that would pass is still refused: Lstat.
	real := filepath.Join(tmp, "elsewhere")
	if err := os.Rename(dir, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, dir); err != nil {
		t.Fatal(err)
	}
	refused("symlink", "is not a directory")
	os.Remove(dir)
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	refused("file", "is not a directory")

	// A socket elsewhere is the user's choice and is not checked.
	if err := CheckSocketDir(filepath.Join(tmp, "elsewhere", "x.sock")); err != nil {
		t.Errorf("explicit socket: %v", err)
	}
}
