package main

import (
	"os"
	"path/filepath"
	"strconv"
)

// defaultSocketPath is where the daemon listens unless told otherwise:
// $XDG_RUNTIME_DIR/toolcage/toolcage.sock in a user session, else
// /run/toolcage/toolcage.sock.
func defaultSocketPath() string {
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		return filepath.Join(dir, "toolcage", "toolcage.sock")
	}
	return "/run/toolcage/toolcage.sock"
}

// defaultDataDir is where the daemon keeps its database: /var/lib/toolcage
// for root; for anyone else $XDG_DATA_HOME/toolcage, which defaults to
// ~/.local/share/toolcage.
func defaultDataDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/toolcage"
	}
	if dir := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "toolcage")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".local", "share", "toolcage")
	}
	// No home: a per-user directory that at least never collides.
	return filepath.Join(os.TempDir(), "toolcage-"+strconv.Itoa(os.Geteuid()))
}
