package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Cmd is one sandboxed process seen from the daemon, shaped like exec.Cmd.
// Start runs Path (the executor binary, which must call Init first thing)
// inside a new sandbox; Seal and Reset talk to its launcher.
type Cmd struct {
	// Path is the binary. The daemon opens it, so the sandbox's uid need not
	// be able to reach it.
	Path string
	// Launcher, if set, is a small binary that only calls Init (pid 1 of the
	// sandbox); by default Path is its own launcher. Both work; a lean
	// launcher saves one start of the (larger) executor binary, several
	// milliseconds per sandbox, and its memory.
	Launcher string
	// Args are the arguments after argv[0].
	Args []string
	// Env is the executor's whole environment; the daemon's is never passed.
	Env    []string
	Config Config
	// Stdout and Stderr are as in exec.Cmd; nil means /dev/null.
	Stdout, Stderr io.Writer
	// IDMaps, if set, keeps the user namespaces of idmapped binds for the
	// next sandboxes (a runner holds one); nil makes them per Start, with
	// the launcher (or Path) as the helper.
	IDMaps *IDMaps

	cmd     *exec.Cmd
	ctl     *net.UnixConn
	ctlMu   sync.Mutex
	cg      *cgroupSet
	scratch string
	report  Report
	probe   bool
	once    sync.Once
}

// Command returns a Cmd that runs path with args in a sandbox made by cfg.
func Command(cfg Config, path string, args ...string) *Cmd {
	return &Cmd{Path: path, Args: args, Config: cfg, cmd: &exec.Cmd{}}
}

// StdoutPipe is exec.Cmd.StdoutPipe.
func (c *Cmd) StdoutPipe() (io.ReadCloser, error) { return c.cmd.StdoutPipe() }

// StderrPipe is exec.Cmd.StderrPipe.
func (c *Cmd) StderrPipe() (io.ReadCloser, error) { return c.cmd.StderrPipe() }

// hostIDs returns the host uid and gid that root in the sandbox maps to,
// and whether the daemon is unprivileged.
func hostIDs(cfg Config) (uid, gid int, unprivileged bool) {
	if os.Geteuid() != 0 {
		return os.Geteuid(), os.Getegid(), true
	}
	return cfg.HostUID, cfg.HostGID, false
}

// Start starts the sandbox. The process it starts is the launcher, pid 1 of
// the sandbox's pid namespace; Pid, Wait and Kill refer to it, and it exits
// with the executor's status.
func (c *Cmd) Start() (err error) {
	cfg := c.Config.withDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	uid, gid, unpriv := hostIDs(cfg)
	c.report = Report{
		UserNS: true, PidNS: true, MountNS: true, IPCNS: true, UTSNS: true, CgroupNS: true,
		NetNS: !cfg.Network, Cgroup: "none", NoNewPrivs: true, CapsDropped: true,
		LandlockABI: landlockABI(), Seccomp: seccompSupported, Unprivileged: unpriv,
	}
	if c.report.LandlockABI < cfg.Require.LandlockABI {
		return fmt.Errorf("sandbox: Landlock ABI %d required, the kernel has %d", cfg.Require.LandlockABI, c.report.LandlockABI)
	}
	if c.report.LandlockABI == 0 {
		c.report.Notes = append(c.report.Notes, "Landlock is not available: file access is confined by the mount namespace only")
	}

	var closeAfter []io.Closer
	defer func() {
		for _, f := range closeAfter {
			f.Close()
		}
		if err != nil {
			c.cleanup()
		}
	}()

	bin, err := os.Open(c.Path)
	if err != nil {
		return fmt.Errorf("sandbox: executor binary: %w", err)
	}
	closeAfter = append(closeAfter, bin)

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: control socket: %w", err)
	}
	child := os.NewFile(uintptr(fds[1]), "sandbox-control")
	closeAfter = append(closeAfter, child)
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		return err
	}
	hf := os.NewFile(uintptr(fds[0]), "sandbox-control")
	conn, err := net.FileConn(hf)
	hf.Close()
	if err != nil {
		return fmt.Errorf("sandbox: control socket: %w", err)
	}
	c.ctl = conn.(*net.UnixConn)

	stateDir := cfg.StateDir
	if stateDir == "" {
		stateDir = os.TempDir()
	}
	if c.scratch, err = os.MkdirTemp(stateDir, "toolcage-sbx-"); err != nil {
		return fmt.Errorf("sandbox: scratch dir: %w", err)
	}
	// The launcher only passes through the scratch dir to mount its root
	// on scratch/root: search permission is all it gets.
	if err := os.Chmod(c.scratch, 0o711); err != nil {
		return err
	}
	root := filepath.Join(c.scratch, "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		return err
	}
	// The socket dir is the one host directory the sandbox writes, until
	// Seal takes it back.
	if !unpriv && cfg.SocketDir != "" {
		if err := os.Chown(cfg.SocketDir, uid, gid); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}

	extra := []*os.File{child, bin}
	var cgroupFD *os.File
	cgfs, err := readCgroupFS()
	if err == nil {
		c.cg, err = newCgroupSet(cgfs, cfg, filepath.Base(c.scratch))
	}
	if err != nil {
		if cfg.Require.Cgroup {
			return fmt.Errorf("sandbox: cgroup limits required: %w", err)
		}
		c.report.Notes = append(c.report.Notes, "no cgroup ("+err.Error()+"): memory is not capped; processes are capped by RLIMIT_NPROC only")
	} else {
		c.report.Cgroup = c.cg.version
		c.report.CPUQuota = c.cg.cpu != ""
		if c.cg.cpu == "" {
			c.report.Notes = append(c.report.Notes, "no CPU quota ("+c.cg.cpuNote+"): a busy sandbox can take every CPU")
		}
		// v2: the launcher is born in its cgroup (clone3 CLONE_INTO_CGROUP);
		// v1: it writes itself into cgroup.procs before anything else.
		cgroupFD = c.cg.dir
		extra = append(extra, c.cg.procs...)
	}

	lc := launchConfig{Config: cfg, Root: root, Args: append([]string{"toolcage-executor"}, c.Args...), Probe: c.probe}
	if !unpriv && len(cfg.Binds) > 0 {
		// A root daemon opens the bind sources itself (prepareBind).
		maps := c.IDMaps
		if maps == nil {
			maps = &IDMaps{Helper: c.Path}
			if c.Launcher != "" {
				maps.Helper = c.Launcher
			}
			defer maps.Close()
		}
		lc.BindFDs, lc.BindDirs = make([]int, len(cfg.Binds)), make([]bool, len(cfg.Binds))
		for i, b := range cfg.Binds {
			db, err := prepareBind(b, uid, gid, maps)
			var be *BindError
			if errors.Is(err, unix.ENOSYS) && !errors.As(err, &be) {
				continue // before Linux 5.12: the launcher binds it, unmapped
			}
			if err != nil {
				return fmt.Errorf("sandbox: %w", err)
			}
			closeAfter = append(closeAfter, db.tree)
			extra = append(extra, db.tree)
			lc.BindFDs[i], lc.BindDirs[i] = 3+len(extra)-1, db.dir
		}
	}
	if c.cg != nil {
		lc.CgroupFDs, lc.Cgroup = len(c.cg.procs), true
	}
	exe := fdBinary
	if c.Launcher != "" {
		l, err := os.Open(c.Launcher)
		if err != nil {
			return fmt.Errorf("sandbox: launcher binary: %w", err)
		}
		closeAfter = append(closeAfter, l)
		extra = append(extra, l)
		exe = 3 + len(extra) - 1
		lc.LauncherFD = exe
	}
	js, err := json.Marshal(lc)
	if err != nil {
		return err
	}
	env := stageEnv(c.Env, stageLaunch, envConfig+"="+string(js))
	if !hasEnv(env, "HOME") {
		env = append(env, "HOME="+cfg.WorkDir)
	}
	if !hasEnv(env, "TMPDIR") {
		env = append(env, "TMPDIR=/tmp")
	}
	if !hasEnv(env, "PATH") {
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
	}

	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNS | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if !cfg.Network {
		flags |= unix.CLONE_NEWNET
	}
	c.cmd.Path = "/proc/self/fd/" + strconv.Itoa(exe)
	c.cmd.Args = lc.Args
	c.cmd.Env = env
	c.cmd.Dir = "/"
	c.cmd.Stdout, c.cmd.Stderr = orNil(c.cmd.Stdout, c.Stdout), orNil(c.cmd.Stderr, c.Stderr)
	c.cmd.ExtraFiles = extra
	c.cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		// Its own session: no controlling terminal, and its own group.
		Setsid:    true,
		Pdeathsig: syscall.SIGKILL,
	}
	if cgroupFD != nil {
		c.cmd.SysProcAttr.UseCgroupFD = true
		c.cmd.SysProcAttr.CgroupFD = int(cgroupFD.Fd())
	}
	if !unpriv {
		// A root daemon drops its supplementary groups (root's among them)
		// for the sandbox; an unprivileged one cannot (setgroups is denied
		// in its user namespace), see the package notes.
		c.cmd.SysProcAttr.GidMappingsEnableSetgroups = true
		c.cmd.SysProcAttr.Credential = &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{}}
	} else {
		c.report.Notes = append(c.report.Notes, "unprivileged: sandbox root is the daemon's own uid, and keeps the daemon's supplementary groups")
	}
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("sandbox: start: %w", err)
	}
	if c.cg != nil {
		c.cg.closeFiles()
	}
	return nil
}

func orNil(have, want io.Writer) io.Writer {
	if have != nil {
		return have // a pipe made by StdoutPipe/StderrPipe
	}
	return want
}

func hasEnv(env []string, key string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, key+"=") {
			return true
		}
	}
	return false
}

// Pid is the launcher's pid (in the daemon's pid namespace).
func (c *Cmd) Pid() int {
	if c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// Report says what this sandbox got.
func (c *Cmd) Report() Report { return c.report }

// Wait waits for the sandbox to end, then removes its cgroups and scratch
// directory.
func (c *Cmd) Wait() error {
	err := c.cmd.Wait()
	c.cleanup()
	return err
}

// Kill ends the sandbox: SIGKILL to its pid 1 takes every process in it.
func (c *Cmd) Kill() error {
	if c.cmd.Process == nil {
		return nil
	}
	err := c.cmd.Process.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

func (c *Cmd) cleanup() {
	c.once.Do(func() {
		if c.ctl != nil {
			c.ctl.Close()
		}
		if c.cg != nil {
			c.cg.remove()
		}
		if c.scratch != "" {
			os.RemoveAll(c.scratch)
		}
	})
}

// request sends one control request to the launcher and reads its reply.
func (c *Cmd) request(ctx context.Context, req string) (reply, error) {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	if c.ctl == nil {
		return reply{}, errors.New("sandbox: not started")
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Second)
	}
	c.ctl.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { c.ctl.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := c.ctl.Write([]byte(req)); err != nil {
		return reply{}, fmt.Errorf("sandbox %s: %w", req, err)
	}
	buf := make([]byte, 4096)
	n, err := c.ctl.Read(buf)
	if err != nil {
		return reply{}, fmt.Errorf("sandbox %s: %w", req, err)
	}
	var r reply
	if err := json.Unmarshal(buf[:n], &r); err != nil {
		return reply{}, fmt.Errorf("sandbox %s: bad reply: %w", req, err)
	}
	if !r.OK {
		return r, fmt.Errorf("sandbox %s: %s", req, r.Err)
	}
	return r, nil
}

// Seal unbinds the socket dir inside the sandbox and, for a root daemon,
// gives it back to the daemon (0700). Call it once the executor listens
// and before the daemon connects: the listening socket lives on, no code
// the executor runs later can write to a host directory, and no other
// process of the sandbox's host uid (65534 is shared by every "nobody"
// process) can swap the socket for its own before the daemon dials.
func (c *Cmd) Seal(ctx context.Context) error {
	if _, err := c.request(ctx, "seal"); err != nil {
		return err
	}
	if d := c.Config.SocketDir; d != "" && os.Geteuid() == 0 {
		if err := os.Chown(d, os.Geteuid(), os.Getegid()); err != nil {
			return fmt.Errorf("sandbox seal: %w", err)
		}
		return os.Chmod(d, 0o700)
	}
	return nil
}

// VerifyListener checks that the Unix socket at path is served by a
// process inside this sandbox (its pid namespace), so that the daemon
// never hands a call to anyone else. Call it after Seal.
func (c *Cmd) VerifyListener(path string) error {
	conn, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return fmt.Errorf("sandbox: executor socket: %w", err)
	}
	defer conn.Close()
	raw, err := conn.(*net.UnixConn).SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("sandbox: executor socket: %w", cerr)
	}
	theirs, err1 := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", cred.Pid))
	ours, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", c.Pid()))
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("sandbox: executor socket: %w", err)
	}
	if theirs != ours {
		return fmt.Errorf("sandbox: the socket %s is served by pid %d, outside the sandbox", path, cred.Pid)
	}
	return nil
}

// Reset returns the sandbox to the state the executor started in, between
// calls: it kills every process but the launcher and the executor, empties
// /tmp, the work dir and /dev/shm, and removes System V IPC objects. It
// then reports a limit broken since the last Reset as a *LimitError, and
// an executor that has spent half its RLIMIT_CPU as a *RetireError; with
// either the executor must be replaced. Any other error means the same.
func (c *Cmd) Reset(ctx context.Context) error {
	r, err := c.request(ctx, "reset")
	if err != nil {
		return err
	}
	if c.cg != nil {
		if err := c.cg.check(); err != nil {
			return err
		}
	}
	if budget := int64(c.Config.withDefaults().CPUSeconds) * 1000; r.CPUMillis*2 > budget {
		return &RetireError{Reason: fmt.Sprintf("used %d ms of its %d ms CPU-time limit", r.CPUMillis, budget)}
	}
	return nil
}

// CgroupCurrent returns the number of tasks in the sandbox's pids cgroup,
// or -1 without one.
func (c *Cmd) CgroupCurrent() int64 {
	if c.cg == nil {
		return -1
	}
	return c.cg.current()
}
