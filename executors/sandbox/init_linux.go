package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The environment that carries a sandbox from stage to stage. envStage
// names the stage the process is in; Init dispatches on it.
const (
	envStage   = "TOOLCAGE_SANDBOX"
	envConfig  = "TOOLCAGE_SANDBOX_CONFIG"
	envApplied = "TOOLCAGE_SANDBOX_APPLIED"

	stageLaunch = "launch" // pid 1: mounts, then reaper and control
	stageRun    = "run"    // the executor: Init returns
	stageProbe  = "probe"  // Probe's child: report and wait
)

// The descriptors the daemon hands the launcher.
const (
	fdControl = 3 // SOCK_SEQPACKET to the daemon: Seal and Reset, EOF = daemon gone
	fdBinary  = 4 // the executor binary, opened by the daemon
	fdCgroup  = 5 // cgroup.procs files, launchConfig.CgroupFDs of them
)

// launchConfig is what the daemon tells the launcher.
type launchConfig struct {
	Config
	// Root is the host directory the new root's tmpfs is mounted on.
	Root string `json:"root"`
	// Args is the executor's argv, argv[0] first.
	Args      []string `json:"args"`
	CgroupFDs int      `json:"cgroup_fds"`
	// LauncherFD is the launcher binary's descriptor when it is not the
	// executor binary; the launcher closes it.
	LauncherFD int `json:"launcher_fd,omitempty"`
	// Cgroup: memory and pids are capped by a cgroup, so RLIMIT_NPROC is
	// only a backstop above pids.max (a cgroup refusal is counted in
	// pids.events, where Reset finds it; an rlimit refusal is not).
	Cgroup bool `json:"cgroup,omitempty"`
	Probe  bool `json:"probe,omitempty"`
	// BindFDs, by index of Binds, are the detached mount trees a root
	// daemon prepared (prepareBind); 0 means the launcher binds the
	// source itself. BindDirs says which are directories.
	BindFDs  []int  `json:"bind_fds,omitempty"`
	BindDirs []bool `json:"bind_dirs,omitempty"`
}

// applied is what restrictThread put in place, for Probe.
type applied struct {
	LandlockABI int  `json:"landlock_abi"`
	Seccomp     bool `json:"seccomp"`
}

// Init must be the first call in the main of every binary a sandbox runs
// (cmd/toolcage-executor, and test binaries that serve executors). In a
// process the daemon started as a sandbox stage it does that stage's work
// and never returns, except in the executor itself, where it marks the
// process undumpable (so tool processes, same uid and no capabilities,
// cannot read or write its memory through /proc) and returns. Anywhere else
// it returns at once.
func Init() {
	switch os.Getenv(envStage) {
	case "":
		return
	case stageLaunch:
		os.Exit(launch())
	case stageRun:
		setName("toolcage-exec")
		unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
		os.Unsetenv(envStage)
		return
	case stageProbe:
		os.Exit(probeChild())
	case stageHold:
		os.Exit(holdMain())
	case stageContainer:
		os.Exit(containerMain())
	default:
		fmt.Fprintf(os.Stderr, "toolcage sandbox: unknown stage %q\n", os.Getenv(envStage))
		os.Exit(125)
	}
}

// trace writes a timestamped line to stderr (the daemon's log) when
// TOOLCAGE_SANDBOX_TRACE is set: where a slow sandbox start spends its time.
func trace(what string) {
	if os.Getenv("TOOLCAGE_SANDBOX_TRACE") != "" {
		fmt.Fprintf(os.Stderr, "toolcage sandbox: %s %s\n", time.Now().Format("15:04:05.000000"), what)
	}
}

// setName names the calling thread (the process, on the main thread):
// started through /proc/self/fd/N, it would be called "N".
func setName(name string) {
	b := append([]byte(name), 0)
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}

func fail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "toolcage sandbox: "+format+"\n", args...)
	return 125
}

func readLaunchConfig() (*launchConfig, error) {
	var lc launchConfig
	if err := json.Unmarshal([]byte(os.Getenv(envConfig)), &lc); err != nil {
		return nil, fmt.Errorf("sandbox config: %w", err)
	}
	if len(lc.Args) == 0 {
		return nil, errors.New("sandbox config: no executor argv")
	}
	return &lc, nil
}

// inInitialUserNS reports whether the process is in the host's user
// namespace, where the launcher must never touch mounts.
func inInitialUserNS() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295"
}

// stageEnv returns env without the sandbox's own variables, with the stage
// set to stage and extra added.
func stageEnv(env []string, stage string, extra ...string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == envStage || k == envApplied || k == envConfig {
			continue
		}
		out = append(out, kv)
	}
	if stage != "" {
		out = append(out, envStage+"="+stage)
	}
	return append(out, extra...)
}

// launch is pid 1 of the sandbox. It joins the cgroups, builds the root,
// confines its locked thread and forks the executor from it, then reaps
// orphans and serves the daemon's requests until the executor exits, and
// exits with its status. Its exit ends every process in the pid namespace.
func launch() int {
	// One thread for every step: the cgroup namespace made below belongs to
	// this thread, and the executor must be forked from it.
	runtime.LockOSThread()
	if os.Getpid() != 1 || inInitialUserNS() {
		return fail("launcher stage outside a sandbox; refusing")
	}
	lc, err := readLaunchConfig()
	if err != nil {
		return fail("%v", err)
	}
	trace("launcher running")
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	setName("toolcage-init")
	// Not dumpable: sandbox processes (same uid) cannot ptrace it or open
	// its /proc files.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)

	if lc.LauncherFD > 0 {
		unix.Close(lc.LauncherFD)
	}
	// On cgroup v1 the launcher moves itself into its groups. A migration
	// waits for an RCU grace period (milliseconds), so it runs beside the
	// mounts; the executor is forked only after it is done.
	joined := make(chan error, 1)
	go func() {
		for i := range lc.CgroupFDs {
			f := os.NewFile(uintptr(fdCgroup+i), "cgroup.procs")
			_, err := f.Write([]byte("0"))
			f.Close()
			if err != nil {
				joined <- fmt.Errorf("join cgroup: %w", err)
				return
			}
		}
		joined <- nil
	}()
	if err := unix.Sethostname([]byte(hostname)); err != nil {
		return fail("hostname: %v", err)
	}
	if !lc.Network {
		if err := loopbackUp(); err != nil {
			return fail("loopback: %v", err)
		}
	}
	if err := buildRoot(lc); err != nil {
		return fail("root file system: %v", err)
	}
	trace("root built")
	// The control socket stays with pid 1: a tool that held it could read
	// the daemon's requests or forge replies.
	unix.CloseOnExec(fdControl)
	if err := <-joined; err != nil {
		return fail("%v", err)
	}
	trace("cgroups joined")
	// A cgroup namespace rooted at the sandbox's own cgroup, made on the
	// thread that forks the executor.
	if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
		return fail("cgroup namespace: %v", err)
	}
	// After the last namespace the launcher makes: the sandbox's share of
	// the per-user kernel objects is none.
	if err := limitUserNS(); err != nil {
		return fail("%v", err)
	}

	devnull, err := os.Open("/dev/null")
	if err != nil {
		return fail("%v", err)
	}
	// From here on the main thread is the executor's, confined.
	a, err := restrictThread(lc)
	if err != nil {
		return fail("%v", err)
	}
	stage, extra := stageRun, []string(nil)
	if lc.Probe {
		stage = stageProbe
		b, _ := json.Marshal(a)
		extra = append(extra, envApplied+"="+string(b))
	}
	// The binary's descriptor does not outlive the exec (which opens it
	// through /proc/self/fd first).
	unix.CloseOnExec(fdBinary)
	pid, err := syscall.ForkExec(execPath, lc.Args, &syscall.ProcAttr{
		Dir:   lc.WorkDir,
		Env:   stageEnv(os.Environ(), stage, extra...),
		Files: []uintptr{devnull.Fd(), 1, 2},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	devnull.Close()
	if err != nil {
		return fail("start executor: %v", err)
	}
	l := &launcher{lc: lc, exec: pid}
	trace("executor started")
	// pid 1 reaps every orphan; the executor's exit ends the sandbox.
	// (Sandbox processes can signal pid 1 — unless Landlock scopes signals
	// — and so end their own sandbox, which they could anyway by killing
	// the executor; no other signal reaches it.)
	exited := make(chan int, 1)
	go func() {
		for {
			var ws unix.WaitStatus
			wpid, err := unix.Wait4(-1, &ws, 0, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil || wpid == pid {
				exited <- exitStatus(ws, err)
				return
			}
		}
	}()
	// Requests are served on the reading goroutine, never on this
	// (confined) thread.
	ctl := os.NewFile(fdControl, "control")
	hostGone := make(chan struct{})
	go func() {
		defer close(hostGone)
		buf := make([]byte, 512)
		for {
			n, err := ctl.Read(buf)
			if err != nil || n == 0 {
				return
			}
			b, _ := json.Marshal(l.handle(string(buf[:n])))
			if _, err := ctl.Write(b); err != nil {
				return
			}
		}
	}()
	select {
	case status := <-exited:
		return status
	case <-hostGone:
		return 137 // the daemon is gone: so is the sandbox
	}
}

func exitStatus(ws unix.WaitStatus, err error) int {
	switch {
	case err != nil:
		return 125
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		return 128 + int(ws.Signal())
	}
	return 1
}

// launcher is pid 1's state.
type launcher struct {
	lc   *launchConfig
	exec int // the executor's pid
}

// reply answers one control request.
type reply struct {
	OK  bool   `json:"ok"`
	Err string `json:"err,omitempty"`
	// CPUMillis is the executor's CPU time so far (user + system).
	CPUMillis int64 `json:"cpu_ms,omitempty"`
}

func (l *launcher) handle(cmd string) reply {
	var err error
	r := reply{}
	switch cmd {
	case "seal":
		if d := l.lc.SocketDir; d != "" {
			err = unix.Unmount(d, unix.MNT_DETACH)
			// Remove the mount point and its parents where they are on a
			// writable tmpfs (/tmp): nothing of the daemon's paths stays.
			for ; err == nil && d != "/" && d != "/tmp" && d != l.lc.WorkDir; d = filepath.Dir(d) {
				if unix.Rmdir(d) != nil {
					break
				}
			}
		}
	case "reset":
		err = errors.Join(l.killStrays(), wipe("/tmp"), wipe(l.lc.WorkDir), wipe("/dev/shm"), removeIPC())
		r.CPUMillis = cpuMillis(l.exec)
	default:
		err = fmt.Errorf("unknown request %q", cmd)
	}
	if err != nil {
		r.Err = err.Error()
	} else {
		r.OK = true
	}
	return r
}

// killStrays kills every process in the sandbox but pid 1 and the
// executor, and waits until they are gone. Anything a stray forks between
// two passes is found by the next one; a process killed cannot fork.
// Zombies whose parent is pid 1 are waited for too, for a moment: pid 1's
// reaper collects them, and until then they hold a pid of the next call's.
func (l *launcher) killStrays() error {
	start := time.Now()
	deadline := start.Add(3 * time.Second)
	zombieWait := start.Add(2 * time.Second)
	for {
		live, zombies := 0, 0
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return err
		}
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == 1 || pid == l.exec {
				continue
			}
			state, ppid := procState(pid)
			if state == 0 {
				continue // gone
			}
			if state == 'Z' {
				if ppid == 1 {
					zombies++
				}
				continue // dead; its parent (or pid 1) reaps it
			}
			unix.Kill(pid, unix.SIGKILL)
			live++
		}
		now := time.Now()
		if live == 0 && (zombies == 0 || now.After(zombieWait)) {
			return nil
		}
		if now.After(deadline) {
			return fmt.Errorf("%d stray processes survive SIGKILL", live)
		}
		time.Sleep(time.Millisecond)
	}
}

// procState returns the state letter and parent of pid (0 if gone).
func procState(pid int) (byte, int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 2 {
		return 0, 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return f[0][0], ppid
}

// cpuMillis is pid's user + system time.
func cpuMillis(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	// After the comm: state(0) … utime(11) stime(12), in clock ticks of 1/100 s.
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return (u + s) * 10
}

// wipe empties dir without crossing into other mounts (a bind, or the
// socket dir before Seal, stays untouched).
func wipe(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if err := emptyDir(fd, st.Dev); err != nil {
		return fmt.Errorf("wipe %s: %w", dir, err)
	}
	return nil
}

// emptyDir removes everything in the open directory dfd that lives on
// device dev. It works on descriptors, so depth and path length do not
// matter, and it never follows a symlink.
func emptyDir(dfd int, dev uint64) error {
	// The caller owns dfd; entries are read through a duplicate.
	nfd, err := unix.Dup(dfd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(nfd), "")
	defer f.Close()
	var errs []error
	for {
		names, err := f.Readdirnames(256)
		for _, name := range names {
			var st unix.Stat_t
			if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				continue
			}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				cfd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				var cst unix.Stat_t
				if unix.Fstat(cfd, &cst) != nil || cst.Dev != dev {
					unix.Close(cfd) // a mount point: leave it
					continue
				}
				err = emptyDir(cfd, dev)
				unix.Close(cfd)
				if err == nil {
					err = unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR)
				}
				if err != nil && !errors.Is(err, unix.EBUSY) {
					errs = append(errs, err)
				}
				continue
			}
			if st.Dev != dev {
				continue
			}
			if err := unix.Unlinkat(dfd, name, 0); err != nil && !errors.Is(err, unix.EBUSY) {
				errs = append(errs, err)
			}
		}
		if err != nil || len(names) == 0 {
			break
		}
	}
	return errors.Join(errs...)
}

// removeIPC deletes the System V IPC objects of the sandbox's own IPC
// namespace. (POSIX message queues are not reachable without mounting
// mqueue; RLIMIT_MSGQUEUE keeps them small.)
func removeIPC() error {
	var errs []error
	for _, k := range []struct {
		file string
		rm   func(id int) error
	}{
		{"/proc/sysvipc/shm", func(id int) error {
			_, err := unix.SysvShmCtl(id, unix.IPC_RMID, nil)
			return err
		}},
		{"/proc/sysvipc/sem", func(id int) error {
			_, _, e := unix.Syscall6(unix.SYS_SEMCTL, uintptr(id), 0, unix.IPC_RMID, 0, 0, 0)
			return errnoErr(e)
		}},
		{"/proc/sysvipc/msg", func(id int) error {
			_, _, e := unix.Syscall(unix.SYS_MSGCTL, uintptr(id), unix.IPC_RMID, 0)
			return errnoErr(e)
		}},
	} {
		f, err := os.Open(k.file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 2 {
				continue
			}
			if id, err := strconv.Atoi(fs[1]); err == nil {
				if err := k.rm(id); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EIDRM) {
					errs = append(errs, fmt.Errorf("remove %s %d: %w", k.file, id, err))
				}
			}
		}
		f.Close()
	}
	return errors.Join(errs...)
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// restrictThread confines the calling thread, the launcher's main thread,
// for the executor it then forks: rlimits (per process: they bind the
// launcher too, which needs none of what they deny), root locked out of
// capabilities, no_new_privs, Landlock, empty capability sets, seccomp.
// Credentials, no_new_privs, Landlock domains and seccomp filters belong
// to a thread; the launcher's main goroutine stays locked to this thread
// for good, and the Go runtime makes new threads from its clean template
// thread, so the launcher's other threads keep what Seal and Reset need.
func restrictThread(lc *launchConfig) (applied, error) {
	var a applied
	if err := setRlimits(lc.Config, lc.Cgroup); err != nil {
		return a, err
	}
	abi := landlockABI()
	if abi < lc.Require.LandlockABI {
		return a, fmt.Errorf("the kernel has Landlock ABI %d, %d is required", abi, lc.Require.LandlockABI)
	}
	if lc.Require.Seccomp && !seccompSupported {
		return a, fmt.Errorf("seccomp required, but there is no syscall table for %s", runtime.GOARCH)
	}
	if err := dropBoundingCaps(); err != nil {
		return a, err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return a, fmt.Errorf("no_new_privs: %w", err)
	}
	if abi > 0 {
		if err := landlockRestrict(landlockRules(lc.Config), abi); err != nil {
			return a, err
		}
		a.LandlockABI = abi
	}
	if err := clearCaps(); err != nil {
		return a, err
	}
	if seccompSupported {
		if err := installSeccomp(); err != nil {
			return a, err
		}
		a.Seccomp = true
	}
	return a, nil
}

// probeReport is what Probe's child sees from inside.
type probeReport struct {
	NS          map[string]string `json:"ns"`
	Applied     applied           `json:"applied"`
	NoNewPrivs  bool              `json:"no_new_privs"`
	SeccompMode int               `json:"seccomp_mode"`
	CapsZero    bool              `json:"caps_zero"`
	Dumpable    bool              `json:"dumpable"`
	Pid         int               `json:"pid"`
	Hostname    string            `json:"hostname"`
}

// probeChild reports what the sandbox looks like from inside, then waits
// for the daemon to kill it.
func probeChild() int {
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	r := probeReport{NS: nsInodes(), Pid: os.Getpid()}
	r.Hostname, _ = os.Hostname()
	json.Unmarshal([]byte(os.Getenv(envApplied)), &r.Applied)
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		caps := 0
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimSpace(v)
			switch k {
			case "NoNewPrivs":
				r.NoNewPrivs = v == "1"
			case "Seccomp":
				r.SeccompMode, _ = strconv.Atoi(v)
			case "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb":
				if strings.Trim(v, "0") == "" {
					caps++
				}
			}
		}
		r.CapsZero = caps == 5
	}
	d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	r.Dumpable = d != 0
	b, _ := json.Marshal(r)
	os.Stdout.Write(append(b, '\n'))
	time.Sleep(time.Minute)
	return 0
}

// nsInodes returns the namespace identities of the calling process.
func nsInodes() map[string]string {
	m := map[string]string{}
	for _, ns := range []string{"user", "pid", "mnt", "net", "ipc", "uts", "cgroup"} {
		if l, err := os.Readlink("/proc/self/ns/" + ns); err == nil {
			m[ns] = l
		}
	}
	return m
}
