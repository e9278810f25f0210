package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/hashicorp/go-plugin"

	"github.com/toolcage/toolcage/errdefs"
)

// ExecutorBinary is the file name of the executor next to the daemon.
const ExecutorBinary = "toolcage-executor"

// LauncherBinary is the lean sandbox launcher, next to the executor.
const LauncherBinary = "toolcage-sandbox"

// ProcessRunner starts the executor as a plain child process with a clean
// environment. It is the base the sandboxed runner builds on.
type ProcessRunner struct {
	// Path is the executor binary.
	Path string
	// Env is the executor's whole environment; the daemon's is never inherited.
	Env []string
	// Dir is the working directory; empty means a fresh empty directory is
	// not created and the executor's cwd is "/".
	Dir string
}

// Name implements Runner.
func (r *ProcessRunner) Name() string { return "process" }

// ClientConfig implements Runner.
func (r *ProcessRunner) ClientConfig(_ context.Context, key Key) (*plugin.ClientConfig, error) {
	if key.Mounts != "" {
		// A plain process sees the whole host; there is nothing to mount
		// into, and /workspace would not exist.
		return nil, errdefs.Errorf(errdefs.Unavailable, "this tool sees a workspace or mounts, which need the process sandbox (sandbox.enabled: true)")
	}
	cmd := exec.Command(r.Path, "--kind", string(key.Kind))
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, r.Env...)
	cmd.Dir = r.Dir
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Its own process group, so a kill reaches everything it started,
		// and death with the daemon.
		Setpgid:   true,
		Pdeathsig: syscall.SIGKILL,
	}
	return &plugin.ClientConfig{Cmd: cmd, SkipHostEnv: true}, nil
}

// FindExecutor locates the executor binary: the configured path if given,
// else next to the running binary, else on PATH.
func FindExecutor(configured string) (string, error) {
	if configured != "" {
		if _, err := os.Stat(configured); err != nil {
			return "", fmt.Errorf("executor binary: %w", err)
		}
		return filepath.Abs(configured)
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), ExecutorBinary)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath(ExecutorBinary); err == nil {
		return filepath.Abs(p)
	}
	return "", errors.New("executor binary " + ExecutorBinary + " not found next to the daemon or on PATH; set executor.path in the config")
}

var _ Runner = (*ProcessRunner)(nil)
