//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
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

// cloneNamespaces are the clone flags that make namespaces.
const cloneNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// allowedPersonalities are the personality(2) values Docker's default
// profile allows: PER_LINUX, UNAME26, PER_LINUX32, PER_LINUX32|UNAME26, and
// the query 0xffffffff. The rest (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC…)
// weaken the process.
var allowedPersonalities = []uint32{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}

// Offsets into struct seccomp_data (little-endian: the low half of an
// argument comes first).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

func argLow(i int) uint32 { return uint32(offArg0 + 8*i) }

// seccompFilter is the program: kill on a foreign architecture (and the x32
// ABI), EPERM for deniedSyscalls, namespaces through clone, device nodes
// through mknod, personality changes and terminal injection; ENOSYS for
// clone3, whose flags live in memory a filter cannot read, so libc falls
// back to clone; everything else allowed.
func seccompFilter() ([]bpf.Instruction, error) {
	var a asm
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e)&unix.SECCOMP_RET_DATA }
	a.op(bpf.LoadAbsolute{Off: offArch, Size: 4})
	a.jeq(auditArch, "", "kill")
	a.op(bpf.LoadAbsolute{Off: offNr, Size: 4})
	if x32SyscallBit != 0 {
		a.jump(bpf.JumpGreaterOrEqual, x32SyscallBit, "kill", "")
	}
	a.jeq(unix.SYS_CLONE, "clone", "")
	a.jeq(unix.SYS_CLONE3, "enosys", "")
	a.jeq(unix.SYS_MKNODAT, "mknodat", "")
	if sysMknod >= 0 {
		a.jeq(uint32(sysMknod), "mknod", "")
	}
	a.jeq(unix.SYS_PERSONALITY, "personality", "")
	a.jeq(unix.SYS_IOCTL, "ioctl", "")
	for _, nr := range append(append([]uint32(nil), deniedSyscalls...), archDeniedSyscalls...) {
		a.jeq(nr, "eperm", "")
	}
	a.jumpTo("allow")

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

	a.label("allow")
	a.op(bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	a.label("eperm")
	a.op(bpf.RetConstant{Val: errno(unix.EPERM)})
	a.label("enosys")
	a.op(bpf.RetConstant{Val: errno(unix.ENOSYS)})
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
