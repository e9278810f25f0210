//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"slices"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompSupported: this architecture has a syscall table.
const seccompSupported = true

// deniedSyscalls fail with EPERM on every architecture: mounts and root
// changes, namespaces, kernel modules and kexec, tracing and cross-process
// memory access, BPF, the kernel keyring, clocks, swap, reboot, accounting,
// quotas, the kernel log, file handles, userfaultfd, io_uring (whose work
// seccomp cannot see), fanotify and perf.
var deniedSyscalls = []uint32{
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK,
	unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_OPEN_TREE_ATTR, unix.SYS_MOUNT_SETATTR,
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_PIDFD_GETFD, unix.SYS_PROCESS_MADVISE,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_FANOTIFY_INIT,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT,
	unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD,
	unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME, unix.SYS_SETTIMEOFDAY,
	unix.SYS_SYSLOG, unix.SYS_SETHOSTNAME, unix.SYS_SETDOMAINNAME, unix.SYS_VHANGUP,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	unix.SYS_USERFAULTFD, unix.SYS_LOOKUP_DCOOKIE, unix.SYS_NFSSERVCTL,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
}

// allowedSyscalls are allowed on every architecture, unconditionally: what
// the executors (the Go runtime, goja), the shell and coreutils/busybox
// style commands, git and interpreters need, after Docker's default
// profile. Not here, and so refused: System V and POSIX message queues'
// POSIX half (mq_*, charged to the host uid that owns the sandbox's user
// namespace), Linux AIO (io_setup: a host-wide aio-max-nr), memfd_create
// (see below), NUMA policy, kcmp, statmount/listmount, LSM attributes,
// and every call added after this list was written.
var allowedSyscalls = []uint32{
	// files and directories
	unix.SYS_READ, unix.SYS_WRITE, unix.SYS_READV, unix.SYS_WRITEV, unix.SYS_PREAD64, unix.SYS_PWRITE64,
	unix.SYS_PREADV, unix.SYS_PWRITEV, unix.SYS_PREADV2, unix.SYS_PWRITEV2, unix.SYS_LSEEK,
	unix.SYS_OPENAT, unix.SYS_OPENAT2, unix.SYS_CLOSE, unix.SYS_CLOSE_RANGE,
	unix.SYS_DUP, unix.SYS_DUP3, unix.SYS_FCNTL, unix.SYS_FLOCK, unix.SYS_PIPE2,
	unix.SYS_FSTAT, unix.SYS_NEWFSTATAT, unix.SYS_STATX, unix.SYS_STATFS, unix.SYS_FSTATFS,
	unix.SYS_FACCESSAT, unix.SYS_FACCESSAT2, unix.SYS_GETDENTS64, unix.SYS_GETCWD, unix.SYS_CHDIR, unix.SYS_FCHDIR,
	unix.SYS_MKDIRAT, unix.SYS_UNLINKAT, unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2, unix.SYS_LINKAT, unix.SYS_SYMLINKAT,
	unix.SYS_READLINKAT, unix.SYS_FCHMOD, unix.SYS_FCHMODAT, unix.SYS_FCHMODAT2, unix.SYS_FCHOWN, unix.SYS_FCHOWNAT,
	unix.SYS_UMASK, unix.SYS_UTIMENSAT, unix.SYS_TRUNCATE, unix.SYS_FTRUNCATE, unix.SYS_FALLOCATE,
	unix.SYS_FADVISE64, unix.SYS_READAHEAD, unix.SYS_FSYNC, unix.SYS_FDATASYNC, unix.SYS_SYNC_FILE_RANGE,
	unix.SYS_SYNC, unix.SYS_SYNCFS, unix.SYS_COPY_FILE_RANGE, unix.SYS_SENDFILE, unix.SYS_SPLICE, unix.SYS_TEE,
	unix.SYS_VMSPLICE, unix.SYS_CACHESTAT,
	unix.SYS_GETXATTR, unix.SYS_LGETXATTR, unix.SYS_FGETXATTR, unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR,
	unix.SYS_LISTXATTR, unix.SYS_LLISTXATTR, unix.SYS_FLISTXATTR, unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR,
	unix.SYS_FREMOVEXATTR, unix.SYS_GETXATTRAT, unix.SYS_SETXATTRAT, unix.SYS_LISTXATTRAT, unix.SYS_REMOVEXATTRAT,
	// inotify is allowed, but each sandbox's user namespace may hold no
	// instance (limitUserNS): the count is charged to the host uid that
	// owns the namespace. tail -f and the like fall back to polling.
	unix.SYS_INOTIFY_INIT1, unix.SYS_INOTIFY_ADD_WATCH, unix.SYS_INOTIFY_RM_WATCH,
	// waiting and events
	unix.SYS_PPOLL, unix.SYS_PSELECT6, unix.SYS_EPOLL_CREATE1, unix.SYS_EPOLL_CTL, unix.SYS_EPOLL_PWAIT,
	unix.SYS_EPOLL_PWAIT2, unix.SYS_EVENTFD2, unix.SYS_SIGNALFD4, unix.SYS_TIMERFD_CREATE,
	unix.SYS_TIMERFD_SETTIME, unix.SYS_TIMERFD_GETTIME,
	unix.SYS_FUTEX, unix.SYS_FUTEX_WAITV, unix.SYS_FUTEX_WAKE, unix.SYS_FUTEX_WAIT, unix.SYS_FUTEX_REQUEUE,
	unix.SYS_SET_ROBUST_LIST, unix.SYS_GET_ROBUST_LIST,
	// memory
	unix.SYS_BRK, unix.SYS_MMAP, unix.SYS_MUNMAP, unix.SYS_MPROTECT, unix.SYS_MREMAP, unix.SYS_MADVISE,
	unix.SYS_MSYNC, unix.SYS_MINCORE, unix.SYS_MLOCK, unix.SYS_MLOCK2, unix.SYS_MUNLOCK, unix.SYS_MLOCKALL,
	unix.SYS_MUNLOCKALL, unix.SYS_MEMBARRIER, unix.SYS_PKEY_ALLOC, unix.SYS_PKEY_FREE, unix.SYS_PKEY_MPROTECT,
	unix.SYS_MSEAL, unix.SYS_MAP_SHADOW_STACK, unix.SYS_GET_MEMPOLICY,
	// processes, threads, signals
	unix.SYS_EXECVE, unix.SYS_EXECVEAT, unix.SYS_EXIT, unix.SYS_EXIT_GROUP, unix.SYS_WAIT4, unix.SYS_WAITID,
	unix.SYS_KILL, unix.SYS_TKILL, unix.SYS_TGKILL, unix.SYS_PIDFD_OPEN, unix.SYS_PIDFD_SEND_SIGNAL,
	unix.SYS_RT_SIGACTION, unix.SYS_RT_SIGPROCMASK, unix.SYS_RT_SIGRETURN, unix.SYS_RT_SIGPENDING,
	unix.SYS_RT_SIGTIMEDWAIT, unix.SYS_RT_SIGQUEUEINFO, unix.SYS_RT_TGSIGQUEUEINFO, unix.SYS_RT_SIGSUSPEND,
	unix.SYS_SIGALTSTACK, unix.SYS_RESTART_SYSCALL, unix.SYS_SET_TID_ADDRESS, unix.SYS_RSEQ,
	unix.SYS_GETPID, unix.SYS_GETPPID, unix.SYS_GETTID, unix.SYS_GETPGID, unix.SYS_SETPGID, unix.SYS_GETSID,
	unix.SYS_SETSID, unix.SYS_GETUID, unix.SYS_GETEUID, unix.SYS_GETGID, unix.SYS_GETEGID, unix.SYS_GETRESUID,
	unix.SYS_GETRESGID, unix.SYS_GETGROUPS, unix.SYS_SETUID, unix.SYS_SETGID, unix.SYS_SETREUID,
	unix.SYS_SETREGID, unix.SYS_SETRESUID, unix.SYS_SETRESGID, unix.SYS_SETFSUID, unix.SYS_SETFSGID,
	unix.SYS_SETGROUPS, unix.SYS_CAPGET, unix.SYS_CAPSET, unix.SYS_PRCTL, unix.SYS_SECCOMP,
	unix.SYS_LANDLOCK_CREATE_RULESET, unix.SYS_LANDLOCK_ADD_RULE, unix.SYS_LANDLOCK_RESTRICT_SELF,
	unix.SYS_GETRLIMIT, unix.SYS_SETRLIMIT, unix.SYS_PRLIMIT64, unix.SYS_GETRUSAGE, unix.SYS_TIMES,
	unix.SYS_GETPRIORITY, unix.SYS_SETPRIORITY, unix.SYS_IOPRIO_GET, unix.SYS_IOPRIO_SET,
	unix.SYS_SCHED_YIELD, unix.SYS_SCHED_GETAFFINITY, unix.SYS_SCHED_SETAFFINITY, unix.SYS_SCHED_GETPARAM,
	unix.SYS_SCHED_SETPARAM, unix.SYS_SCHED_GETSCHEDULER, unix.SYS_SCHED_SETSCHEDULER, unix.SYS_SCHED_GETATTR,
	unix.SYS_SCHED_SETATTR, unix.SYS_SCHED_GET_PRIORITY_MAX, unix.SYS_SCHED_GET_PRIORITY_MIN,
	unix.SYS_SCHED_RR_GET_INTERVAL, unix.SYS_GETCPU,
	// time
	unix.SYS_CLOCK_GETTIME, unix.SYS_CLOCK_GETRES, unix.SYS_CLOCK_NANOSLEEP, unix.SYS_NANOSLEEP,
	unix.SYS_GETTIMEOFDAY, unix.SYS_GETITIMER, unix.SYS_SETITIMER, unix.SYS_TIMER_CREATE, unix.SYS_TIMER_SETTIME,
	unix.SYS_TIMER_GETTIME, unix.SYS_TIMER_GETOVERRUN, unix.SYS_TIMER_DELETE,
	// system
	unix.SYS_UNAME, unix.SYS_SYSINFO, unix.SYS_GETRANDOM,
	// sockets; socket and socketpair are checked by family
	unix.SYS_BIND, unix.SYS_CONNECT, unix.SYS_LISTEN, unix.SYS_ACCEPT, unix.SYS_ACCEPT4, unix.SYS_SHUTDOWN,
	unix.SYS_GETSOCKNAME, unix.SYS_GETPEERNAME, unix.SYS_GETSOCKOPT, unix.SYS_SETSOCKOPT,
	unix.SYS_SENDTO, unix.SYS_RECVFROM, unix.SYS_SENDMSG, unix.SYS_RECVMSG, unix.SYS_SENDMMSG, unix.SYS_RECVMMSG,
	// System V IPC: per IPC namespace, removed by Reset
	unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMDT, unix.SYS_SHMCTL, unix.SYS_SEMGET, unix.SYS_SEMOP,
	unix.SYS_SEMTIMEDOP, unix.SYS_SEMCTL, unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
}

// cloneNamespaces are the clone flags that make namespaces.
const cloneNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// allowedPersonalities are the personality(2) values Docker's default
// profile allows: PER_LINUX, UNAME26, PER_LINUX32, PER_LINUX32|UNAME26, and
// the query 0xffffffff. The rest (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC…)
// weaken the process.
var allowedPersonalities = []uint32{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}

// socketFamilies are the address families socket(2) may make. AF_NETLINK
// is allowed for NETLINK_ROUTE only (glibc's getaddrinfo with AI_ADDRCONFIG
// and Go's net.Interfaces read addresses through it, from the sandbox's
// own network namespace); audit, uevent, netfilter, xfrm and the other
// netlink protocols, and every other family (AF_VSOCK, which network
// namespaces do not separate, AF_PACKET, AF_ALG, AF_KEY, Bluetooth…) fail
// with EAFNOSUPPORT, as on a kernel built without them.
var socketFamilies = []uint32{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6}

// Offsets into struct seccomp_data (little-endian: the low half of an
// argument comes first).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

func argLow(i int) uint32 { return uint32(offArg0 + 8*i) }

// syscallActions maps every syscall number the filter names to the label
// of its action: "allow", "eperm", "enosys" or an argument check.
func syscallActions() map[uint32]string {
	m := map[uint32]string{}
	for _, nr := range append(append([]uint32(nil), allowedSyscalls...), archAllowedSyscalls...) {
		m[nr] = "allow"
	}
	for _, nr := range append(append([]uint32(nil), deniedSyscalls...), archDeniedSyscalls...) {
		m[nr] = "eperm"
	}
	for nr, l := range map[uint32]string{
		unix.SYS_CLONE: "clone", unix.SYS_CLONE3: "enosys", unix.SYS_MKNODAT: "mknodat",
		unix.SYS_PERSONALITY: "personality", unix.SYS_IOCTL: "ioctl",
		unix.SYS_SOCKET: "socket", unix.SYS_SOCKETPAIR: "socketpair",
	} {
		m[nr] = l
	}
	if sysMknod >= 0 {
		m[uint32(sysMknod)] = "mknod"
	}
	return m
}

// span is a run of syscall numbers from lo up to the next span's lo that
// share one action label.
type span struct {
	lo    uint32
	label string
}

// spans turns actions into sorted runs covering every number; numbers not
// in actions get "enosys".
func spans(actions map[uint32]string) []span {
	nrs := make([]uint32, 0, len(actions))
	for nr := range actions {
		nrs = append(nrs, nr)
	}
	slices.Sort(nrs)
	out := []span{{0, "enosys"}}
	add := func(lo uint32, label string) {
		if out[len(out)-1].label == label {
			return
		}
		if out[len(out)-1].lo == lo {
			out[len(out)-1].label = label
			if n := len(out); n > 1 && out[n-2].label == label {
				out = out[:n-1]
			}
			return
		}
		out = append(out, span{lo, label})
	}
	for _, nr := range nrs {
		add(nr, actions[nr])
		add(nr+1, "enosys")
	}
	return out
}

// tree emits a binary search over ss (which must start at 0) that jumps to
// each span's label: about 2·log2(len(ss)) instructions per syscall.
// Conditional jumps skip at most one instruction, and every far jump is an
// unconditional one, so no offset outgrows the 8 bits of a conditional.
func (a *asm) tree(ss []span, n *int) {
	if len(ss) == 1 {
		a.jumpTo(ss[0].label)
		return
	}
	mid := len(ss) / 2
	*n++
	right := fmt.Sprintf("tree%d", *n)
	a.op(bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: ss[mid].lo, SkipTrue: 0, SkipFalse: 1})
	a.jumpTo(right)
	a.tree(ss[:mid], n)
	a.label(right)
	a.tree(ss[mid:], n)
}

// seccompFilter is the program, an allowlist: kill on a foreign
// architecture (and the x32 ABI); allow allowedSyscalls; EPERM for
// deniedSyscalls, namespaces through clone, device nodes through mknod,
// personality changes and terminal injection; EAFNOSUPPORT for socket
// families other than socketFamilies; ENOSYS for clone3, whose flags live
// in memory a filter cannot read, so libc falls back to clone, and for
// every other call. ENOSYS, not EPERM, is the default: to a program it
// looks like a kernel without the call, which every program already
// handles (and falls back from), as runc answers calls newer than its
// profile; the calls refused as dangerous keep a plain EPERM.
func seccompFilter() ([]bpf.Instruction, error) {
	var a asm
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e)&unix.SECCOMP_RET_DATA }
	// "kill" lies past the tree, beyond a conditional jump's reach.
	a.op(bpf.LoadAbsolute{Off: offArch, Size: 4})
	a.op(bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1})
	a.jumpTo("kill")
	a.op(bpf.LoadAbsolute{Off: offNr, Size: 4})
	if x32SyscallBit != 0 {
		a.op(bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32SyscallBit, SkipFalse: 1})
		a.jumpTo("kill")
	}
	var n int
	a.tree(spans(syscallActions()), &n)

	// Argument checks; jumps only go forward, so the returns come last.
	a.label("clone")
	a.op(bpf.LoadAbsolute{Off: argLow(0), Size: 4})
	a.jump(bpf.JumpBitsSet, cloneNamespaces, "eperm", "allow")

	for _, m := range []struct {
		label string
		arg   int
	}{{"mknod", 1}, {"mknodat", 2}} {
		a.label(m.label)
		a.op(bpf.LoadAbsolute{Off: argLow(m.arg), Size: 4})
		a.op(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: unix.S_IFMT})
		a.jeq(unix.S_IFCHR, "eperm", "")
		a.jeq(unix.S_IFBLK, "eperm", "allow")
	}

	a.label("personality")
	a.op(bpf.LoadAbsolute{Off: argLow(0), Size: 4})
	for _, p := range allowedPersonalities {
		a.jeq(p, "allow", "")
	}
	a.jumpTo("eperm")

	a.label("ioctl")
	a.op(bpf.LoadAbsolute{Off: argLow(1), Size: 4})
	a.jeq(unix.TIOCSTI, "eperm", "")
	a.jeq(unix.TIOCLINUX, "eperm", "allow")

	a.label("socket")
	a.op(bpf.LoadAbsolute{Off: argLow(0), Size: 4})
	for _, f := range socketFamilies {
		a.jeq(f, "allow", "")
	}
	a.jeq(unix.AF_NETLINK, "", "eafnosupport")
	a.op(bpf.LoadAbsolute{Off: argLow(2), Size: 4})
	a.jeq(unix.NETLINK_ROUTE, "allow", "eafnosupport")

	// socketpair makes nothing but Unix sockets on Linux; the check keeps
	// it so if a kernel learns more.
	a.label("socketpair")
	a.op(bpf.LoadAbsolute{Off: argLow(0), Size: 4})
	a.jeq(unix.AF_UNIX, "allow", "eafnosupport")

	a.label("allow")
	a.op(bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	a.label("eperm")
	a.op(bpf.RetConstant{Val: errno(unix.EPERM)})
	a.label("enosys")
	a.op(bpf.RetConstant{Val: errno(unix.ENOSYS)})
	a.label("eafnosupport")
	a.op(bpf.RetConstant{Val: errno(unix.EAFNOSUPPORT)})
	a.label("kill")
	a.op(bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS})
	return a.assemble()
}

// installSeccomp loads the filter for the calling thread; no_new_privs
// must be set already. Execve keeps it.
func installSeccomp() error {
	prog, err := seccompFilter()
	if err != nil {
		return err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	return nil
}

// asm is a tiny two-pass assembler for classic BPF with named jump targets.
type asm struct {
	ins    []bpf.Instruction
	labels map[string]int
	fix    []fixup
}

type fixup struct {
	at          int
	true, false string
}

func (a *asm) op(i bpf.Instruction) { a.ins = append(a.ins, i) }

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.ins)
}

func (a *asm) jeq(v uint32, t, f string) { a.jump(bpf.JumpEqual, v, t, f) }

// jump adds a conditional jump; an empty target means the next instruction.
func (a *asm) jump(cond bpf.JumpTest, v uint32, t, f string) {
	a.fix = append(a.fix, fixup{at: len(a.ins), true: t, false: f})
	a.op(bpf.JumpIf{Cond: cond, Val: v})
}

// jumpTo adds an unconditional jump to label.
func (a *asm) jumpTo(label string) {
	a.fix = append(a.fix, fixup{at: len(a.ins), true: label})
	a.op(bpf.Jump{})
}

func (a *asm) assemble() ([]bpf.Instruction, error) {
	skip := func(at int, label string) (int, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := a.labels[label]
		if !ok {
			return 0, fmt.Errorf("seccomp: no label %q", label)
		}
		return to - at - 1, nil
	}
	for _, f := range a.fix {
		t, err := skip(f.at, f.true)
		if err != nil {
			return nil, err
		}
		fl, err := skip(f.at, f.false)
		if err != nil {
			return nil, err
		}
		switch j := a.ins[f.at].(type) {
		case bpf.Jump:
			if t < 0 {
				return nil, fmt.Errorf("seccomp: backward jump at %d", f.at)
			}
			j.Skip = uint32(t)
			a.ins[f.at] = j
		case bpf.JumpIf:
			if t < 0 || t > 255 || fl < 0 || fl > 255 {
				return nil, fmt.Errorf("seccomp: jump at %d out of range", f.at)
			}
			j.SkipTrue, j.SkipFalse = uint8(t), uint8(fl)
			a.ins[f.at] = j
		}
	}
	return a.ins, nil
}
