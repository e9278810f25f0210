package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/sandbox"
)

// SandboxRunner starts every executor in its own OS sandbox (package
// executors/sandbox): new user, pid, mount, ipc, uts and cgroup namespaces,
// a network namespace unless the key holds the network permission, a
// minimal read-only root, cgroup memory and pids caps (rlimits where no
// cgroup can be made), no capabilities, no_new_privs, Landlock and seccomp.
// It provides isolation "process". The executor binary must call
// sandbox.Init first thing in main.
//
// go-plugin's socket lives in a per-executor directory under StateDir,
// bound into the sandbox at the same path until the daemon has connected
// (then it is unbound, see sandbox.Cmd.Seal).
type SandboxRunner struct {
	// Path is the executor binary.
	Path string
	// Launcher is the lean sandbox launcher (cmd toolcage-sandbox), pid 1 of
	// each sandbox; empty means the executor binary launches itself, which
	// costs one more start of the executor binary per sandbox.
	Launcher string
	// Env is added to the executor's environment; the daemon's own
	// environment is never passed.
	Env []string
	// Config holds the limits and binds of every sandbox. Network is set
	// per key (the network permission), whatever Config says.
	Config sandbox.Config
	// FilesystemBinds are bound, besides Config.Binds, into the sandboxes of
	// keys holding the filesystem permission. (A Key carries no tool, so the
	// paths are per daemon, not per tool.)
	FilesystemBinds []sandbox.Bind
	// StateDir holds the per-executor directories. It must not be writable
	// by anyone else. Default: os.TempDir()/toolcage-sandbox-<uid>.
	StateDir string

	// maps holds the user namespaces of idmapped binds (sandbox.IDMaps),
	// made once per workspace owner.
	maps     sandbox.IDMaps
	mapsOnce sync.Once

	mu   sync.Mutex
	live map[string]*sandboxProc
	// starts counts the sandboxes started for executors (not probes).
	starts atomic.Int64
}

// idmaps is r.maps with its helper set: the launcher, else the executor.
func (r *SandboxRunner) idmaps() *sandbox.IDMaps {
	r.mapsOnce.Do(func() {
		r.maps.Helper = r.Path
		if r.Launcher != "" {
			r.maps.Helper = r.Launcher
		}
	})
	return &r.maps
}

// hostIDs are the host ids a root daemon's sandbox runs as.
func hostIDs(cfg sandbox.Config) (int, int) {
	uid, gid := cfg.HostUID, cfg.HostGID
	if uid <= 0 {
		uid = sandbox.DefaultHostID
	}
	if gid <= 0 {
		gid = sandbox.DefaultHostID
	}
	return uid, gid
}

// CheckMount implements MountChecker: the sandbox can bind m as its own
// (a root daemon opens it with its own rights and idmaps it to the
// sandbox's user when someone else owns it), or the error says why not
// and what to do.
func (r *SandboxRunner) CheckMount(m Mount) error {
	uid, gid := hostIDs(r.Config)
	return sandbox.CheckBind(sandbox.Bind{Source: m.Source, Target: m.Target, Writable: m.Writable, NoSymlinks: true}, uid, gid, r.idmaps())
}

// Starts reports how many executor sandboxes this runner has started.
func (r *SandboxRunner) Starts() int64 { return r.starts.Load() }

// configFor is the sandbox configuration for key, and the files pinned
// at the key's mount sources: each bound only while it is still that file
// (sandbox.Bind.ID), and the executor retired once a source names another
// (CheckReuse).
func (r *SandboxRunner) configFor(key Key) (sandbox.Config, []sandbox.FileID, error) {
	cfg := r.Config
	perms := strings.Split(key.Permissions, ",")
	has := func(p string) bool {
		for _, x := range perms {
			if x == p {
				return true
			}
		}
		return false
	}
	cfg.Network = has("network")
	cfg.Binds = append([]sandbox.Bind(nil), r.Config.Binds...)
	if has("filesystem") {
		cfg.Binds = append(cfg.Binds, r.FilesystemBinds...)
	}
	var ids []sandbox.FileID
	for _, m := range key.MountList() {
		id, err := sandbox.PinID(m.Source)
		if err != nil {
			return cfg, nil, errdefs.Errorf(errdefs.PolicyDenied, "sandbox mount of %s: %v; nothing was mounted", m.Source, err)
		}
		ids = append(ids, id)
		cfg.Binds = append(cfg.Binds, sandbox.Bind{Source: m.Source, Target: m.Target, Writable: m.Writable, NoSymlinks: true, ID: &id})
	}
	return cfg, ids, nil
}

// stateDir returns the base state directory, made 0711 and checked to be
// the daemon's own (it may sit in a world-writable /tmp).
func (r *SandboxRunner) stateDir() (string, error) {
	dir := r.StateDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "toolcage-sandbox-"+strconv.Itoa(os.Geteuid()))
	}
	if err := os.Mkdir(dir, 0o711); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("sandbox state dir %s: not a directory owned by uid %d and writable only by it", dir, os.Geteuid())
	}
	return dir, nil
}

// ClientConfig implements Runner.
func (r *SandboxRunner) ClientConfig(_ context.Context, key Key) (*plugin.ClientConfig, error) {
	cfg, ids, err := r.configFor(key)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, err := r.stateDir()
	if err != nil {
		return nil, err
	}
	// One directory per executor: go-plugin makes its socket dir in it and
	// the sandbox its scratch dir; it goes when the executor does.
	dir, err := os.MkdirTemp(base, "exec-")
	if err != nil {
		return nil, err
	}
	// The sandbox only passes through (to its socket dir and scratch dir).
	if err := os.Chmod(dir, 0o711); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cfg.StateDir = dir
	return &plugin.ClientConfig{
		RunnerFunc: func(_ hclog.Logger, cmd *exec.Cmd, socketDir string) (runner.Runner, error) {
			cfg.SocketDir = socketDir
			sc := sandbox.Command(cfg, r.Path, "--kind", string(key.Kind))
			sc.Launcher = r.Launcher
			sc.IDMaps = r.idmaps()
			sc.Env = append(append([]string{"PATH=/usr/local/bin:/usr/bin:/bin"}, r.Env...), cmd.Env...)
			p := &sandboxProc{r: r, cmd: sc, dir: dir, binds: key.MountList(), ids: ids}
			var err error
			if p.stdout, err = sc.StdoutPipe(); err == nil {
				p.stderr, err = sc.StderrPipe()
			}
			if err != nil {
				os.RemoveAll(dir)
				return nil, err
			}
			return p, nil
		},
		UnixSocketConfig: &plugin.UnixSocketConfig{TempDir: dir},
		SkipHostEnv:      true,
	}, nil
}

// AfterCall kills every process the call left in the executor's sandbox,
// empties its /tmp, work dir and /dev/shm, and reports a memory or pids
// limit the call broke (errdefs.LimitExceeded) or an executor that
// should be replaced anyway (most of its CPU-time budget spent).
func (r *SandboxRunner) AfterCall(ctx context.Context, c *plugin.Client) error {
	r.mu.Lock()
	p := r.live[c.ID()]
	r.mu.Unlock()
	if p == nil {
		return errdefs.Errorf(errdefs.ExecutorFailed, "executor %q is not a running sandbox", c.ID())
	}
	err := p.cmd.Reset(ctx)
	var le *sandbox.LimitError
	if errors.As(err, &le) {
		limit := errdefs.LimitMemory
		if le.Limit == "pids" {
			limit = errdefs.LimitPids
		}
		return errdefs.LimitError(limit, "%s", le.Msg)
	}
	return err
}

// CheckReuse implements ReuseChecker: a warm sandbox serves again only
// while each of its mount sources still names the file it bound.
func (r *SandboxRunner) CheckReuse(_ context.Context, c *plugin.Client) error {
	r.mu.Lock()
	p := r.live[c.ID()]
	r.mu.Unlock()
	if p == nil {
		return errdefs.Errorf(errdefs.ExecutorFailed, "executor %q is not a running sandbox", c.ID())
	}
	return checkPins(p.binds, p.ids)
}

func (r *SandboxRunner) register(p *sandboxProc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = map[string]*sandboxProc{}
	}
	r.live[p.id] = p
}

func (r *SandboxRunner) unregister(p *sandboxProc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.live, p.id)
}

// sandboxProc is go-plugin's view of one sandboxed executor.
type sandboxProc struct {
	r              *SandboxRunner
	cmd            *sandbox.Cmd
	dir            string
	id             string
	stdout, stderr io.ReadCloser
	// binds are the key's mounts, ids the files the launcher bound for them.
	binds []Mount
	ids   []sandbox.FileID
}

func (p *sandboxProc) Start(context.Context) error {
	if err := p.cmd.Start(); err != nil {
		os.RemoveAll(p.dir)
		// Known before the executor runs: a coded refusal that says what
		// to do, never a failed handshake.
		var be *sandbox.BindError
		if errors.As(err, &be) {
			return errdefs.Errorf(errdefs.PolicyDenied, "sandbox mount of %v; nothing was mounted", be)
		}
		return err
	}
	p.id = "sandbox-" + strconv.Itoa(p.cmd.Pid())
	p.r.starts.Add(1)
	p.r.register(p)
	return nil
}

func (p *sandboxProc) Wait(context.Context) error {
	err := p.cmd.Wait()
	p.r.unregister(p)
	os.RemoveAll(p.dir)
	return err
}

func (p *sandboxProc) Kill(context.Context) error { return p.cmd.Kill() }
func (p *sandboxProc) ID() string                 { return p.id }
func (p *sandboxProc) Stdout() io.ReadCloser      { return p.stdout }
func (p *sandboxProc) Stderr() io.ReadCloser      { return p.stderr }
func (p *sandboxProc) Name() string               { return p.cmd.Path }

func (p *sandboxProc) Diagnose(context.Context) string {
	return "the sandboxed executor did not complete the go-plugin handshake; its stderr is in the daemon log"
}

// PluginToHost is called once the executor listens and before the daemon
// connects: the socket dir is no longer needed inside the sandbox, and the
// socket must be the executor's.
func (p *sandboxProc) PluginToHost(network, addr string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if network != "unix" {
		return "", "", fmt.Errorf("sandboxed executor announced a %s address; only unix sockets are accepted", network)
	}
	if err := p.cmd.Seal(ctx); err != nil {
		return "", "", err
	}
	if err := p.cmd.VerifyListener(addr); err != nil {
		return "", "", err
	}
	return network, addr, nil
}

// HostToPlugin: the socket dir has the same path on both sides.
func (p *sandboxProc) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// Interface guards.
var (
	_ Runner        = (*SandboxRunner)(nil)
	_ AfterCaller   = (*SandboxRunner)(nil)
	_ ReuseChecker  = (*SandboxRunner)(nil)
	_ runner.Runner = (*sandboxProc)(nil)
)
