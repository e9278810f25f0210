// Package testutil holds what the project's tests share: the built binaries
// a test runs (the ones `make build` left in TOOLCAGE_BIN_DIR, or built here
// once), the checks that a test can run on this machine (user namespaces,
// root), and a buffer a process writes while the test reads it.
package testutil

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BinDirEnv names the directory `make build` put the binaries in.
const BinDirEnv = "TOOLCAGE_BIN_DIR"

// binaries lists the mains a test may need and how each is built: the
// executor and the sandbox launcher are static, the CLI needs cgo.
var binaries = map[string]string{
	"toolcage":          "1",
	"toolcage-executor": "0",
	"toolcage-sandbox":  "0",
}

// ModuleRoot is the directory of go.mod, found from this file's place.
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// Binaries returns a directory holding every named binary: TOOLCAGE_BIN_DIR
// when it has them all, or else dir, where the missing ones are built from
// this module (the executor's sandbox launcher goes with it, since the
// process runner looks for it beside the executor).
func Binaries(dir string, names ...string) (string, error) {
	if bin := os.Getenv(BinDirEnv); bin != "" && haveAll(bin, names) {
		return bin, nil
	}
	for _, name := range withLauncher(names) {
		cgo, ok := binaries[name]
		if !ok {
			return "", fmt.Errorf("testutil: no binary %q in this module", name)
		}
		if IsFile(filepath.Join(dir, name)) {
			continue
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = ModuleRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("building %s: %v\n%s", name, err, out)
		}
	}
	return dir, nil
}

// Executor returns the path of a toolcage-executor (with the sandbox
// launcher beside it), built into dir when TOOLCAGE_BIN_DIR has none.
func Executor(dir string) (string, error) {
	d, err := Binaries(dir, "toolcage-executor")
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "toolcage-executor"), nil
}

func withLauncher(names []string) []string {
	out := append([]string(nil), names...)
	for _, n := range names {
		if n == "toolcage-executor" {
			return append(out, "toolcage-sandbox")
		}
	}
	return out
}

func haveAll(dir string, names []string) bool {
	for _, n := range names {
		if !IsFile(filepath.Join(dir, n)) {
			return false
		}
	}
	return true
}

// IsFile reports whether p is a regular file.
func IsFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Unavailable skips the test for why, except under CI=true, where
// everything a test needs is installed and a skip would hide a failure.
func Unavailable(tb testing.TB, why ...any) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatal(append([]any{"CI=true and this test cannot run:"}, why...)...)
	}
	tb.Skip(why...)
}

// NeedSandbox stops the test unless this machine can make the namespaces
// the process sandbox uses (user, pid and mount).
func NeedSandbox(tb testing.TB) {
	tb.Helper()
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	if err := cmd.Run(); err != nil {
		Unavailable(tb, "no user namespaces here:", err)
	}
}

// NeedRoot stops the test unless it runs as root (and NeedSandbox holds):
// cgroup limits and the daemon's uid drop need a root daemon.
func NeedRoot(tb testing.TB) {
	tb.Helper()
	NeedSandbox(tb)
	if os.Geteuid() != 0 {
		Unavailable(tb, "needs root")
	}
}

// SyncBuffer is a bytes.Buffer a process or goroutine writes while the
// test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// User is a local user a test made (NewUser).
type User struct {
	Name     string
	UID, GID int
	// Home is the user's home directory, mode 0700 and theirs, as Debian
	// 12 makes new homes.
	Home string
}

// NewUser makes a local user with a 0700 home under a temporary
// directory (useradd, as root) and removes it when the test ends.
func NewUser(tb testing.TB) User {
	tb.Helper()
	NeedRoot(tb)
	if _, err := exec.LookPath("useradd"); err != nil {
		Unavailable(tb, "no useradd:", err)
	}
	name := fmt.Sprintf("tc%d%d", os.Getpid()%100000, time.Now().UnixNano()%100000)
	// The homes' parent is searchable (0711), as /home is; the home
	// itself is the user's 0700.
	base, err := os.MkdirTemp("", "toolcage-home-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o711); err != nil {
		tb.Fatal(err)
	}
	home := filepath.Join(base, name)
	if out, err := exec.Command("useradd", "--home-dir", home, "--create-home", "--user-group", "--shell", "/bin/sh", name).CombinedOutput(); err != nil {
		tb.Fatalf("useradd %s: %v: %s", name, err, out)
	}
	tb.Cleanup(func() {
		if out, err := exec.Command("userdel", "--remove", name).CombinedOutput(); err != nil {
			tb.Errorf("userdel %s: %v: %s", name, err, out)
		}
	})
	if err := os.Chmod(home, 0o700); err != nil {
		tb.Fatal(err)
	}
	fi, err := os.Stat(home)
	if err != nil {
		tb.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return User{Name: name, UID: int(st.Uid), GID: int(st.Gid), Home: home}
}

// Run runs name with args as u (setuid to u.UID and u.GID) in dir and
// returns its combined output.
func (u User) Run(tb testing.TB, dir, name string, args ...string) string {
	tb.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + u.Home, "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID)}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("%s %v as %s: %v: %s", name, args, u.Name, err, out)
	}
	return string(out)
}
