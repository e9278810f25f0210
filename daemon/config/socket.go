package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// DefaultSocketPath is $XDG_RUNTIME_DIR/toolcage/toolcage.sock; without
// XDG_RUNTIME_DIR, /run/toolcage/toolcage.sock for root and
// /tmp/toolcage-<uid>/toolcage.sock for anyone else (ssh, cron, CI), who
// cannot create /run/toolcage. Client and daemon both take it from here.
func DefaultSocketPath() string {
	return defaultSocketPath(os.Getenv, os.Geteuid())
}

func defaultSocketPath(getenv func(string) string, euid int) string {
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "toolcage", "toolcage.sock")
	}
	if euid == 0 {
		return "/run/toolcage/toolcage.sock"
	}
	return filepath.Join(fallbackSocketDir(euid), "toolcage.sock")
}

// fallbackSocketDir is the per-user socket directory in the shared /tmp.
func fallbackSocketDir(euid int) string {
	return filepath.Join(os.TempDir(), "toolcage-"+strconv.Itoa(euid))
}

// CheckSocketDir refuses a socket whose directory is the per-user fallback
// in /tmp and was not made by this user, mode 0700: anyone can create
// /tmp/toolcage-<uid> first and wait there with a socket of their own for
// the client's requests. A missing directory is fine (nothing listens).
// Other directories are the user's choice and are not checked.
func CheckSocketDir(socket string) error {
	dir := filepath.Dir(socket)
	if dir != fallbackSocketDir(os.Geteuid()) {
		return nil
	}
	return privateDir(dir, os.Geteuid(), false)
}

// PrepareSocketDir creates the socket's directory, 0700; the per-user
// fallback in /tmp is created with Mkdir (never through a planted symlink)
// and checked as CheckSocketDir does.
func PrepareSocketDir(socket string) error {
	dir := filepath.Dir(socket)
	if dir == fallbackSocketDir(os.Geteuid()) {
		return privateDir(dir, os.Geteuid(), true)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("socket dir: %w", err)
	}
	return nil
}

// privateDir checks that dir is a real directory (not a symlink) owned by
// uid with mode 0700, creating it first when create is set.
func privateDir(dir string, uid int, create bool) error {
	if create {
		if err := os.Mkdir(dir, 0o700); err == nil {
			// The umask may have taken bits; 0700 is what the check wants.
			if err := os.Chmod(dir, 0o700); err != nil {
				return fmt.Errorf("socket dir: %w", err)
			}
		} else if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("socket dir: %w", err)
		}
	}
	fi, err := os.Lstat(dir)
	switch {
	case err != nil && !create && errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("socket dir: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("socket dir %s is not a directory (%s); remove it", dir, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
		return fmt.Errorf("socket dir %s belongs to another user; remove it or set XDG_RUNTIME_DIR or --socket", dir)
	}
	if fi.Mode().Perm() != 0o700 {
		return fmt.Errorf("socket dir %s has mode %04o, want 0700; remove it or chmod 700 it", dir, fi.Mode().Perm())
	}
	return nil
}

// ListenSocket binds the API socket: its directory 0700, the socket 0600. A
// stale socket from a crashed daemon is removed; a live one is an error.
func ListenSocket(path string) (net.Listener, error) {
	if len(path) > 107 {
		return nil, fmt.Errorf("socket path %q is longer than the 107 bytes a Unix socket allows", path)
	}
	if err := PrepareSocketDir(path); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("another daemon is already listening on %s", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("removing stale socket: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("socket mode: %w", err)
	}
	return ln, nil
}
