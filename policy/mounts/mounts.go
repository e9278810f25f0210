// Package mounts decides which host paths a tool's sandbox may see: a
// worker's workspace and a tool's own mounts. A path is judged after
// resolving its symlinks, never by its spelling: the daemon's own files
// (data dir, socket, secrets key, sandbox state) and every parent of them
// can never be mounted, nor "/", nor a path on the sandbox's own mount
// points, and a writable mount may not hold the worker's own files (an
// agent could rewrite its own rules).
package mounts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Workspace is where a worker's workspace appears in a sandbox.
const Workspace = "/workspace"

// Mount is one host path a sandbox sees, at the same path inside
// (Target "") or at Target.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target,omitempty"`
	Writable bool   `json:"writable,omitempty"`
}

// At is where m appears inside the sandbox.
func (m Mount) At() string {
	if m.Target != "" {
		return m.Target
	}
	return m.Source
}

// Guard holds the paths no mount may reach.
type Guard struct {
	// Forbidden are the daemon's own paths: none of them, nothing under
	// them and none of their parents may be mounted.
	Forbidden []string
	// NoWrite are paths a writable mount may not hold (the worker's own
	// file and tool files); a read-only one may.
	NoWrite []string
	// NoWriteIn are directories where a file appearing is read as a grant
	// (the directories workers' tool_files patterns match in): a writable
	// mount may neither hold one nor lie in one.
	NoWriteIn []string
}

// WithDirs returns g with more NoWriteIn directories.
func (g Guard) WithDirs(dirs ...string) Guard {
	g.NoWriteIn = append(append([]string(nil), g.NoWriteIn...), dirs...)
	return g
}

// With returns g with more NoWrite paths.
func (g Guard) With(noWrite ...string) Guard {
	g.NoWrite = append(append([]string(nil), g.NoWrite...), noWrite...)
	return g
}

// reserved are the sandbox's own mount points (executors/sandbox keeps
// the same list; a daemon test holds them equal): a tool's mount may be
// neither at nor under one, nor their parent.
var reserved = []string{"/proc", "/dev", "/tmp", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/work"}

// Reserved lists the sandbox paths a mount's target may not overlap.
func Reserved() []string { return append([]string(nil), reserved...) }

// Resolve makes p absolute with every symlink resolved and checks that it
// exists. The result is what gets mounted.
func Resolve(p string) (string, error) {
	if p == "" {
		return "", errors.New("path is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path holds a NUL byte")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, unwrapPathErr(err))
	}
	return real, nil
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Check refuses the resolved host path src (from Resolve) when it is "/",
// is or lies under or above one of g.Forbidden (each resolved as far as
// it exists), or, when writable, is or lies above one of g.NoWrite, or is
// or lies under or above one of g.NoWriteIn.
func (g Guard) Check(src string, writable bool) error {
	if !filepath.IsAbs(src) || filepath.Clean(src) != src {
		return fmt.Errorf("%q is not an absolute, clean path", src)
	}
	if src == "/" {
		return errors.New(`"/" can never be mounted: it holds the daemon's own files`)
	}
	for _, f := range g.Forbidden {
		for _, form := range forms(f) {
			switch {
			case within(src, form):
				return fmt.Errorf("%s is the daemon's own %s or lies in it; it can never be mounted", src, form)
			case within(form, src):
				return fmt.Errorf("%s holds the daemon's own %s; it can never be mounted", src, form)
			}
		}
	}
	if writable {
		for _, f := range g.NoWrite {
			for _, form := range forms(f) {
				if within(form, src) {
					return fmt.Errorf("%s holds %s, the worker's own file: it can only be mounted read-only", src, form)
				}
			}
		}
		for _, d := range g.NoWriteIn {
			for _, form := range forms(d) {
				if within(form, src) || within(src, form) {
					return fmt.Errorf("%s overlaps %s, where a worker's tool files are read from: it can only be mounted read-only", src, form)
				}
			}
		}
	}
	return nil
}

// CheckTarget refuses a target inside the sandbox that overlaps the
// sandbox's own mount points or the workspace.
func CheckTarget(target string) error {
	if !filepath.IsAbs(target) || filepath.Clean(target) != target || target == "/" || strings.ContainsRune(target, 0) {
		return fmt.Errorf("%q: want an absolute, clean path other than /", target)
	}
	for _, r := range append(Reserved(), Workspace) {
		if within(target, r) || within(r, target) {
			return fmt.Errorf("%s overlaps the sandbox's own %s; mount a path elsewhere", target, r)
		}
	}
	return nil
}

// forms is p as written (cleaned) and with its symlinks resolved as far as
// it exists, so a forbidden path is caught whichever way it is reached.
func forms(p string) []string {
	if p == "" {
		return nil
	}
	p = filepath.Clean(p)
	out := []string{p}
	if r := resolveExisting(p); r != p {
		out = append(out, r)
	}
	return out
}

// resolveExisting resolves the symlinks of the longest existing prefix of
// p and appends the rest.
func resolveExisting(p string) string {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether p is dir or lies under it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}
