package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolcage/toolcage/internal/testutil"
)

// TestBindMappedToOwner: a root daemon's sandbox (uid 65534 on the host)
// reads and writes a workspace in another user's 0700 home as its own,
// and what it writes lands as that user's.
func TestBindMappedToOwner(t *testing.T) {
	u := testutil.NewUser(t)
	ws := filepath.Join(u.Home, "repo")
	u.Run(t, u.Home, "mkdir", "repo")
	u.Run(t, ws, "sh", "-c", "echo theirs > f")
	for _, tc := range []struct {
		name     string
		writable bool
		script   string
		want     string
	}{
		{"read", false, "cat /workspace/f; stat -c %u:%g /workspace/f; touch /workspace/ro 2>&1 | grep -o Read-only", "theirs\n0:0\nRead-only\n"},
		{"write", true, "echo mine > /workspace/new && mkdir /workspace/d && stat -c %u:%g /workspace/new /workspace/d", "0:0\n0:0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := sh(t, Config{Binds: []Bind{{Source: ws, Target: "/workspace", Writable: tc.writable, NoSymlinks: true}}}, tc.script)
			if code != 0 || out != tc.want {
				t.Fatalf("exit %d, output %q, want %q", code, out, tc.want)
			}
		})
	}
	for _, p := range []string{"new", "d"} {
		fi, err := os.Stat(filepath.Join(ws, p))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != u.UID || int(st.Gid) != u.GID {
			t.Errorf("%s on the host: owner %d:%d, want the workspace's owner %d:%d", p, st.Uid, st.Gid, u.UID, u.GID)
		}
	}
	// A file the owner's mapping does not cover stays someone else's.
	if err := os.WriteFile(filepath.Join(ws, "roots"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := sh(t, Config{Binds: []Bind{{Source: ws, Target: "/workspace", Writable: true, NoSymlinks: true}}}, "cat /workspace/roots 2>&1; stat -c %u /workspace/roots")
	if code != 0 || !strings.Contains(out, "Permission denied") || !strings.HasSuffix(out, "65534\n") {
		t.Fatalf("a root-owned 0600 file in the workspace: exit %d, %q", code, out)
	}
}

// TestBindRootOwnedNotMapped: a source root owns is not mapped to the
// sandbox (root's 0600 files stay closed to it).
func TestBindRootOwnedNotMapped(t *testing.T) {
	testutil.NeedRoot(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := sh(t, Config{Binds: []Bind{{Source: dir, Target: "/workspace", NoSymlinks: true}}}, "cat /workspace/secret 2>&1; stat -c %u /workspace")
	if code != 0 || !strings.Contains(out, "Permission denied") || !strings.HasSuffix(out, "65534\n") {
		t.Fatalf("exit %d, %q", code, out)
	}
}

// TestBindErrorMessage: the refusal names the path, its owner and mode
// and what to do.
func TestBindErrorMessage(t *testing.T) {
	e := &BindError{Path: "/home/a/repo", UID: 12345, GID: 12345, Mode: 0o40700, HostUID: 65534, FSType: "fuse", Err: errors.New("invalid argument")}
	for _, want := range []string{"/home/a/repo", "uid 12345", "mode 0700", "on fuse", "idmapped mounts", "chown"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("%q lacks %q", e.Error(), want)
		}
	}
}

// TestBindRefusedWhereTheFSCannotIdmap: on a file system without
// idmapped mounts (ramfs) a source someone else owns is refused by
// CheckBind and by Start with a *BindError that names it, its owner and
// mode and what to do; nothing starts.
func TestBindRefusedWhereTheFSCannotIdmap(t *testing.T) {
	u := testutil.NewUser(t)
	dir := ramfs(t)
	if err := os.Chown(dir, u.UID, u.GID); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o700)
	b := Bind{Source: dir, Target: "/workspace", Writable: true, NoSymlinks: true}
	err := CheckBind(b, DefaultHostID, DefaultHostID, &IDMaps{Helper: "/proc/self/exe"})
	var be *BindError
	if !errors.As(err, &be) {
		t.Fatalf("CheckBind: %v, want a *BindError", err)
	}
	t.Log(err)
	for _, want := range []string{dir, u.Name, "mode 0700", "idmapped mounts", "chown"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	c := Command(Config{Binds: []Bind{b}}, "/proc/self/exe")
	if err := c.Start(); !errors.As(err, &be) {
		c.Wait()
		t.Fatalf("Start: %v, want a *BindError", err)
	}
	// The sandbox's own ids need no mapping: the same file system serves.
	if err := os.Chown(dir, DefaultHostID, DefaultHostID); err != nil {
		t.Fatal(err)
	}
	if err := CheckBind(b, DefaultHostID, DefaultHostID, &IDMaps{Helper: "/proc/self/exe"}); err != nil {
		t.Fatal(err)
	}
}

// ramfs mounts a ramfs (no idmapped mounts) on a temporary directory.
func ramfs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("ramfs", dir, "ramfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0755"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// BenchmarkPrepareBind: what a root daemon does per bind before a
// sandbox starts, for a source the sandbox's uid owns (cloned, flagged)
// and for one another uid owns (cloned, flagged and idmapped, the user
// namespace made once and reused as a runner's IDMaps does).
func BenchmarkPrepareBind(b *testing.B) {
	testutil.NeedRoot(b)
	maps := &IDMaps{Helper: "/proc/self/exe"}
	defer maps.Close()
	for _, tc := range []struct {
		name  string
		owner int
	}{{"bind", DefaultHostID}, {"idmap", 4242}} {
		dir := b.TempDir()
		if err := os.Chown(dir, tc.owner, tc.owner); err != nil {
			b.Fatal(err)
		}
		bind := Bind{Source: dir, Target: "/workspace", Writable: true, NoSymlinks: true}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				db, err := prepareBind(bind, DefaultHostID, DefaultHostID, maps)
				if err != nil {
					b.Fatal(err)
				}
				db.tree.Close()
			}
		})
	}
}
