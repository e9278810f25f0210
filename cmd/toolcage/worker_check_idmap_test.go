package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolcage/toolcage/internal/testutil"
)

// TestWorkerCheckWorkspaceOwner: run as root, worker check refuses a
// workspace another user owns on a file system that cannot be idmapped
// (ramfs) with the path, owner and mode, and accepts one in that user's
// 0700 home on ext4 (the sandbox will map it).
func TestWorkerCheckWorkspaceOwner(t *testing.T) {
	u := testutil.NewUser(t)
	bin, err := testutil.Binaries(t.TempDir(), "toolcage", "toolcage-executor")
	if err != nil {
		t.Fatal(err)
	}
	ram := t.TempDir()
	if err := syscall.Mount("ramfs", ram, "ramfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0700"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(ram, syscall.MNT_DETACH) })
	if err := os.Chown(ram, u.UID, u.GID); err != nil {
		t.Fatal(err)
	}
	u.Run(t, u.Home, "mkdir", "repo")
	dir := t.TempDir()
	check := func(ws string) (int, string) {
		f := filepath.Join(dir, "w.yaml")
		if err := os.WriteFile(f, []byte("name: ws_agent\nworkspace: "+ws+"\nreadonly: false\ntoolsets: {filesystem: {}}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd := exec.Command(filepath.Join(bin, "toolcage"), "worker", "check", f)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), out.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, out.String()
	}
	code, out := check(ram)
	if code != exitRefused {
		t.Fatalf("a ramfs workspace: exit %d, want %d: %s", code, exitRefused, out)
	}
	for _, want := range []string{"workspace: " + ram, "owner " + u.Name, "mode 0700", "idmapped mounts"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q lacks %q", out, want)
		}
	}
	if code, out := check(filepath.Join(u.Home, "repo")); code != 0 || !strings.Contains(out, "is valid") {
		t.Fatalf("a workspace in the user's 0700 home: exit %d: %s", code, out)
	}
}
