package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setRlimits applies the per-process limits; they pass to every process
// the executor starts, and without CAP_SYS_RESOURCE none can raise them.
func setRlimits(c Config, cgroup bool) error {
	nproc := uint64(c.Pids)
	if cgroup {
		nproc += 32
	}
	for _, l := range []struct {
		res  int
		name string
		v    uint64
	}{
		{unix.RLIMIT_CPU, "RLIMIT_CPU", uint64(c.CPUSeconds)},
		{unix.RLIMIT_NOFILE, "RLIMIT_NOFILE", uint64(c.OpenFiles)},
		{unix.RLIMIT_FSIZE, "RLIMIT_FSIZE", uint64(c.FileSizeBytes)},
		{unix.RLIMIT_CORE, "RLIMIT_CORE", 0},
		// Counted per user and user namespace: every sandbox has its own.
		{unix.RLIMIT_NPROC, "RLIMIT_NPROC", nproc},
		{unix.RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK", 64 << 10},
		// Queued signals and POSIX message queue bytes are charged up the
		// user namespaces to the host uid that owns the sandbox's (root,
		// for a root daemon): the sandbox's share is what it may hold.
		// POSIX message queues are refused by seccomp too.
		{unix.RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE", 0},
		{unix.RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING", sigPendingMax},
	} {
		// soft == hard: RLIMIT_CPU then ends in SIGKILL, not a catchable SIGXCPU.
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.v, Max: l.v}); err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
	}
	return nil
}

// sigPendingMax is the sandbox's RLIMIT_SIGPENDING: queued signals.
const sigPendingMax = 256

// userNSLimits are the per-user-namespace counts of the sandbox's own user
// namespace (/proc/sys/user). Each object a sandbox makes of these kinds
// is also charged to the host uid that owns its user namespace, up to that
// uid's limit: a sandbox that held them all would make every process of
// that uid (root, for a root daemon) fail inotify_init. Tools need none:
// inotify users such as tail -f fall back to polling, and namespaces are
// refused by seccomp as well.
var userNSLimits = []string{
	"max_inotify_instances", "max_inotify_watches", "max_fanotify_groups", "max_fanotify_marks",
	"max_user_namespaces", "max_mnt_namespaces", "max_pid_namespaces", "max_net_namespaces",
	"max_ipc_namespaces", "max_uts_namespaces", "max_cgroup_namespaces", "max_time_namespaces",
}

// limitUserNS sets every userNSLimits count of the calling process's user
// namespace to 0. It needs CAP_SYS_RESOURCE in the namespace, so it runs
// in the launcher before restrictThread; the executor, without
// capabilities, cannot raise them back. (vm.memfd_noexec, per pid
// namespace, cannot be set from inside: its file belongs to the host's
// root. memfd_create is refused by seccomp instead.)
func limitUserNS() error {
	for _, k := range userNSLimits {
		p := "/proc/sys/user/" + k
		if err := os.WriteFile(p, []byte("0"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("user namespace limit %s: %w", k, err)
		}
	}
	return nil
}

// Securebits (linux/securebits.h).
const (
	secbitNoroot                 = 1 << 0
	secbitNorootLocked           = 1 << 1
	secbitNoSetuidFixup          = 1 << 2
	secbitNoSetuidFixupLocked    = 1 << 3
	secbitKeepCapsLocked         = 1 << 5
	secbitNoCapAmbientRaise      = 1 << 6
	secbitNoCapAmbientRaiseLockd = 1 << 7
)

// dropBoundingCaps locks root out of capabilities for good: securebits so
// that uid 0 gains nothing at execve, an empty bounding set, no ambient
// capabilities. It needs CAP_SETPCAP, so it runs before clearCaps.
func dropBoundingCaps() error {
	bits := secbitNoroot | secbitNorootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
		secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLockd
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	return nil
}

// clearCaps empties the effective, permitted and inheritable sets.
func clearCaps() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// Landlock.

type landlockRulesetAttr struct {
	handledFS, handledNet, scoped uint64
}

// landlockABI returns the kernel's Landlock ABI version, 0 if none.
func landlockABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

const (
	llRead = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llExec = unix.LANDLOCK_ACCESS_FS_EXECUTE
	// llFile are the rights that apply to a file (not a directory).
	llFile = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	// llWrite is read-write without exec or device creation.
	llWrite = llRead | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_SYM |
		unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	llDev = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledFS is every file-system right the given ABI knows.
func handledFS(abi int) uint64 {
	r := uint64(unix.LANDLOCK_ACCESS_FS_MAKE_SYM<<1 - 1) // ABI 1: EXECUTE … MAKE_SYM
	if abi >= 2 {
		r |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		r |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		r |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return r
}

type landlockRule struct {
	path   string
	access uint64
}

// landlockRules lists what the executor may touch in its own root.
func landlockRules(c Config) []landlockRule {
	rules := []landlockRule{
		{"/", unix.LANDLOCK_ACCESS_FS_READ_DIR},
		{"/etc", llRead},
		{"/proc", llRead},
		{"/dev", llRead},
		{"/dev/shm", llWrite},
		{"/tmp", llWrite},
		{c.WorkDir, llWrite},
		{execPath, llRead | llExec},
	}
	for _, d := range systemDirs {
		rules = append(rules, landlockRule{d, llRead | llExec})
	}
	for _, d := range devices {
		rules = append(rules, landlockRule{"/dev/" + d, llDev})
	}
	if c.SocketDir != "" {
		rules = append(rules, landlockRule{c.SocketDir, llWrite})
	}
	for _, b := range c.Binds {
		t := b.Target
		if t == "" {
			t = b.Source
		}
		a := uint64(llRead | llExec)
		if b.Writable {
			a = llWrite
		}
		rules = append(rules, landlockRule{t, a})
	}
	return rules
}

// landlockRestrict confines the calling thread (and what it executes) to
// rules. From ABI 6 on it also scopes abstract Unix sockets and signals to
// the sandbox's own domain.
func landlockRestrict(rules []landlockRule, abi int) error {
	attr := landlockRulesetAttr{handledFS: handledFS(abi)}
	size := unsafe.Sizeof(attr.handledFS)
	if abi >= 6 {
		attr.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
		size = unsafe.Sizeof(attr)
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	for _, r := range rules {
		pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // not in this sandbox
		}
		var st unix.Stat_t
		access := r.access & attr.handledFS
		if unix.Fstat(pfd, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			access &= llFile
		}
		pb := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
		_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&pb)), 0, 0, 0)
		unix.Close(pfd)
		if e != 0 {
			return fmt.Errorf("landlock_add_rule %s: %w", r.path, e)
		}
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return nil
}
