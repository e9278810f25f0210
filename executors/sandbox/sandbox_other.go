//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Init does nothing where there is no sandbox.
func Init() {}

// Probe reports that there is no sandbox here.
func Probe() Report { return ProbeWith("", Config{}) }

// ProbeWith reports that there is no sandbox here.
func ProbeWith(string, Config) Report {
	return Report{Cgroup: "none", Notes: []string{ErrUnsupported.Error()}}
}

// Cmd is the sandboxed process; on this platform it cannot start.
type Cmd struct {
	Path           string
	Args           []string
	Env            []string
	Config         Config
	Stdout, Stderr io.Writer
}

// Command returns a Cmd whose Start fails with ErrUnsupported.
func Command(cfg Config, path string, args ...string) *Cmd {
	return &Cmd{Path: path, Args: args, Config: cfg}
}

func (c *Cmd) StdoutPipe() (io.ReadCloser, error) { return nil, ErrUnsupported }
func (c *Cmd) StderrPipe() (io.ReadCloser, error) { return nil, ErrUnsupported }
func (c *Cmd) Start() error                       { return ErrUnsupported }
func (c *Cmd) Wait() error                        { return ErrUnsupported }
func (c *Cmd) Kill() error                        { return nil }
func (c *Cmd) Pid() int                           { return 0 }
func (c *Cmd) Report() Report                     { return ProbeWith("", Config{}) }
func (c *Cmd) Seal(context.Context) error         { return ErrUnsupported }
func (c *Cmd) VerifyListener(string) error        { return ErrUnsupported }
func (c *Cmd) Reset(context.Context) error        { return ErrUnsupported }
func (c *Cmd) CgroupCurrent() int64               { return -1 }

// CheckNoSymlinks refuses p when any component of it is a symlink now,
// by lstat of each component from the root (no openat2 here).
func CheckNoSymlinks(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("bind %s: not an absolute path", p)
	}
	cur := string(filepath.Separator)
	for _, c := range strings.Split(strings.Trim(filepath.Clean(p), string(filepath.Separator)), string(filepath.Separator)) {
		if c == "" {
			continue
		}
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if err != nil {
			return fmt.Errorf("bind %s: %w", p, err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("bind %s: a component of the path has become a symlink since it was checked", p)
		}
	}
	return nil
}
