// Package sandbox runs one executor process in its own operating-system
// sandbox: the `isolation: process` of the architecture.
//
// A sandbox is two processes, both images of binaries that call Init first
// thing in main:
//
//	daemon ──clone(user, pid, mount, ipc, uts[, net]) [CLONE_INTO_CGROUP on v2]──▶
//	launcher, pid 1 of the new pid namespace (the executor binary itself, or
//	the lean cmd/toolcage-sandbox): joins its v1 cgroups, makes a cgroup
//	namespace, brings lo up, builds a read-only root on a tmpfs and
//	pivots into it, lets its user namespace hold none of the per-user
//	kernel objects charged to the host (inotify, fanotify, namespaces);
//	then, on its locked main thread only, sets the rlimits, locks root
//	out of capabilities, sets no_new_privs, applies Landlock, empties the
//	capability sets and installs the seccomp allowlist, and
//	└─fork/exec──▶ the executor, which inherits all of that; Init marks it
//	               undumpable and returns, and main serves go-plugin.
//
// The launcher stays: it reaps orphans, exits with the executor (ending
// every process in the namespace), and serves the daemon's two requests on
// a control socket: Seal (unbind the go-plugin socket dir once the daemon
// is about to connect) and Reset (between calls: kill every other process,
// empty /tmp, the work dir and /dev/shm, drop System V IPC objects). Its
// other threads keep their capabilities inside the user namespace; the Go
// runtime creates threads for a locked thread's process from its clean
// template thread, so confining the main thread confines only the executor.
//
// The daemon side is Command, a Cmd per executor, shaped like exec.Cmd.
// Root inside maps to one host uid: 65534 (configurable) for a root daemon,
// the daemon's own uid otherwise. Whatever the kernel cannot give (no
// cgroup delegation, no Landlock, no seccomp table for the architecture)
// degrades to what it can, is named in the Report, and can be made fatal
// through Config.Require; user namespaces are not optional.
package sandbox

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// Defaults for the zero fields of a Config.
const (
	DefaultMemoryBytes   = 256 << 20
	DefaultPids          = 64
	DefaultCPUSeconds    = 300
	DefaultCPUs          = 1.0
	DefaultFileSizeBytes = 64 << 20
	DefaultOpenFiles     = 256
	DefaultTmpBytes      = 64 << 20
	DefaultWorkDir       = "/work"
	// DefaultHostID is the host uid and gid that root inside the sandbox
	// maps to when the daemon runs as root (nobody/nogroup).
	DefaultHostID = 65534
)

// Bind exposes one host path inside the sandbox.
type Bind struct {
	// Source is the host path. When the daemon runs as root the sandbox
	// reaches it as the mapped host uid (Config.HostUID), so it must be
	// readable by that uid.
	Source string `json:"source"`
	// Target is the path inside the sandbox; empty means Source.
	Target string `json:"target,omitempty"`
	// Writable makes the bind read-write; binds are read-only by default.
	// A writable bind is also noexec.
	Writable bool `json:"writable,omitempty"`
	// NoSymlinks says Source was resolved when it was checked: the
	// launcher opens it refusing a symlink in any component and binds what
	// it opened, so a path swapped for a symlink since is refused, not
	// followed.
	NoSymlinks bool `json:"no_symlinks,omitempty"`
	// ID, when set (with NoSymlinks), is the file the runner pinned at
	// Source (Pin): the launcher binds what it opened only when that is
	// still this file, so a path swapped for another directory between
	// the runner's check and the bind is refused too.
	ID *FileID `json:"id,omitempty"`
}

// Requirements are protections a sandbox must have; a sandbox that cannot
// get one refuses to start instead of running with less. Namespaces (user,
// pid, mount, ipc, uts and, without the network permission, net),
// no_new_privs and dropped capabilities are always required.
type Requirements struct {
	// Cgroup requires memory and pids caps enforced by a cgroup; without
	// it a sandbox falls back to rlimits when no cgroup can be made.
	Cgroup bool `json:"cgroup,omitempty"`
	// LandlockABI is the lowest Landlock ABI accepted; 0 means best effort.
	LandlockABI int `json:"landlock_abi,omitempty"`
	// Seccomp requires the seccomp filter (always present on amd64 and
	// arm64; other architectures have no syscall table yet).
	Seccomp bool `json:"seccomp,omitempty"`
}

// Config describes one sandbox. Zero fields take the defaults above.
type Config struct {
	// MemoryBytes caps the memory of everything in the sandbox, tmpfs
	// pages included (cgroup memory.max / memory.limit_in_bytes).
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// Pids caps the tasks (processes and threads, the launcher's and the
	// executor's included) in the sandbox: the cgroup's pids.max, or without
	// a cgroup RLIMIT_NPROC, which counts per user namespace and so per
	// sandbox (with a cgroup it is a backstop 32 above).
	Pids int `json:"pids,omitempty"`
	// CPUSeconds is RLIMIT_CPU of every process in the sandbox, the
	// executor included: it counts over the executor's whole life, so
	// Reset asks for a fresh executor once half of it is spent.
	CPUSeconds int `json:"cpu_seconds,omitempty"`
	// CPUs is the CPU bandwidth of everything in the sandbox, in CPUs
	// (cgroup cpu.max, or cpu.cfs_quota_us on v1): 0.5 is half of one CPU,
	// 2 is two. Many spinning processes then slow only their own sandbox.
	// Without a cpu controller it is not enforced (Report notes say so).
	CPUs float64 `json:"cpus,omitempty"`
	// FileSizeBytes is RLIMIT_FSIZE.
	FileSizeBytes int64 `json:"file_size_bytes,omitempty"`
	// OpenFiles is RLIMIT_NOFILE.
	OpenFiles int `json:"open_files,omitempty"`
	// TmpBytes is the size of each private tmpfs, /tmp and WorkDir.
	TmpBytes int64 `json:"tmp_bytes,omitempty"`
	// Network keeps the host's network namespace. Without it the sandbox
	// has a network namespace of its own holding only a loopback device.
	Network bool `json:"network,omitempty"`
	// Binds are extra host paths made visible (the filesystem permission).
	Binds []Bind `json:"binds,omitempty"`
	// WorkDir is the private, empty working directory inside the sandbox
	// (a tmpfs, wiped by Reset), and the executor's cwd and HOME.
	WorkDir string `json:"work_dir,omitempty"`
	// SocketDir is a host directory bound read-write at the same path in
	// the sandbox, for go-plugin's Unix socket. Seal unbinds it once the
	// host has connected. It is chowned to the mapped uid at Start.
	SocketDir string `json:"socket_dir,omitempty"`
	// StateDir is the host directory in which Start makes the sandbox's
	// scratch directory (the mount point of its new root); it must be
	// searchable by the mapped uid. Default os.TempDir().
	StateDir string `json:"state_dir,omitempty"`
	// CgroupParent is where per-sandbox cgroups are made, as an absolute
	// path inside each cgroup hierarchy (e.g. "/toolcage.slice"; the
	// daemon's sandbox.cgroup_parent). Default: a "toolcage" group under
	// the daemon's own cgroup. On cgroup v2 it must not hold processes,
	// the daemon's included.
	CgroupParent string `json:"cgroup_parent,omitempty"`
	// HostUID and HostGID are what root inside the sandbox maps to when the
	// daemon runs as root (default 65534). An unprivileged daemon can map
	// only its own ids, so they are ignored then.
	HostUID int `json:"host_uid,omitempty"`
	HostGID int `json:"host_gid,omitempty"`
	// Require makes missing protections fatal.
	Require Requirements `json:"require"`
}

func (c Config) withDefaults() Config {
	if c.MemoryBytes <= 0 {
		c.MemoryBytes = DefaultMemoryBytes
	}
	if c.Pids <= 0 {
		c.Pids = DefaultPids
	}
	if c.CPUSeconds <= 0 {
		c.CPUSeconds = DefaultCPUSeconds
	}
	if c.CPUs <= 0 {
		c.CPUs = DefaultCPUs
	}
	if c.FileSizeBytes <= 0 {
		c.FileSizeBytes = DefaultFileSizeBytes
	}
	if c.OpenFiles <= 0 {
		c.OpenFiles = DefaultOpenFiles
	}
	if c.TmpBytes <= 0 {
		c.TmpBytes = DefaultTmpBytes
	}
	if c.WorkDir == "" {
		c.WorkDir = DefaultWorkDir
	}
	if c.HostUID <= 0 {
		c.HostUID = DefaultHostID
	}
	if c.HostGID <= 0 {
		c.HostGID = DefaultHostID
	}
	return c
}

// reserved are the sandbox paths that a bind or the work dir may be neither
// at nor under: the sandbox's own mounts.
var reserved = []string{"/proc", "/dev", "/tmp", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}

// within reports whether p is dir or lies under it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// Validate checks the paths of c: absolute and clean, and no bind on or
// under the sandbox's own mounts or the work dir (so that a Reset, which
// empties /tmp and the work dir, never reaches into a bind).
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	checkTarget := func(what, p string) bool {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
			errs = append(errs, fmt.Errorf("%s %q: must be an absolute, clean path other than /", what, p))
			return false
		}
		for _, r := range reserved {
			if within(p, r) || within(r, p) {
				errs = append(errs, fmt.Errorf("%s %q: overlaps the sandbox's own %s", what, p, r))
				return false
			}
		}
		return true
	}
	checkTarget("work dir", c.WorkDir)
	for _, b := range c.Binds {
		if !filepath.IsAbs(b.Source) {
			errs = append(errs, fmt.Errorf("bind source %q: must be absolute", b.Source))
		}
		t := b.Target
		if t == "" {
			t = b.Source
		}
		if checkTarget("bind target", t) && (within(t, c.WorkDir) || within(c.WorkDir, t)) {
			errs = append(errs, fmt.Errorf("bind target %q: overlaps the work dir %s", t, c.WorkDir))
		}
	}
	if !(c.CPUs > 0 && c.CPUs <= 1024) { // NaN too
		errs = append(errs, fmt.Errorf("cpus %v: want a number of CPUs above 0, at most 1024", c.CPUs))
	}
	if err := CheckCgroupParent(c.CgroupParent); err != nil {
		errs = append(errs, fmt.Errorf("cgroup parent: %w", err))
	}
	if c.SocketDir != "" && (!filepath.IsAbs(c.SocketDir) || within(c.SocketDir, c.WorkDir)) {
		errs = append(errs, fmt.Errorf("socket dir %q: must be absolute and outside the work dir", c.SocketDir))
	}
	return errors.Join(errs...)
}

// CheckCgroupParent checks a Config.CgroupParent: empty, or an absolute,
// clean path below the root of the hierarchy ("/toolcage.slice").
func CheckCgroupParent(p string) error {
	switch {
	case p == "":
		return nil
	case !strings.HasPrefix(p, "/") || path.Clean(p) != p:
		return fmt.Errorf("%q: want an absolute, clean cgroup path like /toolcage.slice", p)
	case p == "/":
		return errors.New(`"/": sandboxes need a group of their own, not the root`)
	case strings.ContainsAny(p, "\x00\n"):
		return fmt.Errorf("%q: control characters in a cgroup path", p)
	}
	return nil
}

// Report says which protections a sandbox has (from Probe, or from a
// running Cmd).
type Report struct {
	UserNS   bool `json:"user_ns"`
	PidNS    bool `json:"pid_ns"`
	MountNS  bool `json:"mount_ns"`
	NetNS    bool `json:"net_ns"`
	IPCNS    bool `json:"ipc_ns"`
	UTSNS    bool `json:"uts_ns"`
	CgroupNS bool `json:"cgroup_ns"`
	// Cgroup is "v2", "v1" or "none" (rlimits only).
	Cgroup string `json:"cgroup"`
	// CPUQuota: the cgroup caps the sandbox's CPU bandwidth (Config.CPUs).
	CPUQuota bool `json:"cpu_quota"`
	// LandlockABI is the Landlock ABI the ruleset was built for; 0 if none.
	LandlockABI int  `json:"landlock_abi"`
	Seccomp     bool `json:"seccomp"`
	NoNewPrivs  bool `json:"no_new_privs"`
	// CapsDropped: effective, permitted, inheritable, ambient and bounding
	// sets are all empty.
	CapsDropped bool `json:"caps_dropped"`
	// Unprivileged is set when the daemon is not root: sandbox root maps to
	// the daemon's own uid.
	Unprivileged bool     `json:"unprivileged"`
	Notes        []string `json:"notes,omitempty"`
}

// Meets reports whether r gives everything req asks for, plus what is
// always required.
func (r Report) Meets(req Requirements) error {
	var miss []string
	for _, ns := range []struct {
		ok   bool
		name string
	}{{r.UserNS, "user"}, {r.PidNS, "pid"}, {r.MountNS, "mount"}, {r.IPCNS, "ipc"}, {r.UTSNS, "uts"}} {
		if !ns.ok {
			miss = append(miss, ns.name+" namespace")
		}
	}
	if !r.NoNewPrivs {
		miss = append(miss, "no_new_privs")
	}
	if !r.CapsDropped {
		miss = append(miss, "dropped capabilities")
	}
	if req.Cgroup && (r.Cgroup == "" || r.Cgroup == "none") {
		miss = append(miss, "cgroup memory and pids limits")
	}
	if r.LandlockABI < req.LandlockABI {
		miss = append(miss, fmt.Sprintf("Landlock ABI %d (have %d)", req.LandlockABI, r.LandlockABI))
	}
	if req.Seccomp && !r.Seccomp {
		miss = append(miss, "seccomp")
	}
	if len(miss) == 0 {
		return nil
	}
	return fmt.Errorf("sandbox lacks %s", strings.Join(miss, ", "))
}

// ErrUnsupported is returned where the process sandbox is not available.
var ErrUnsupported = errors.New("the process sandbox needs Linux")

// LimitError says that a sandbox broke one of its limits since the last
// Reset; the executor must not be reused.
type LimitError struct {
	// Limit is "memory", "pids" or "cpu".
	Limit string
	Msg   string
}

func (e *LimitError) Error() string { return e.Msg }

// RetireError says that an executor is healthy but should be replaced, for
// example because most of its CPU-time budget is spent.
type RetireError struct{ Reason string }

func (e *RetireError) Error() string { return "retire executor: " + e.Reason }
