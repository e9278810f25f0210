//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch = unix.AUDIT_ARCH_X86_64
	// x32SyscallBit marks the x32 ABI's syscalls, which share the x86_64
	// audit arch: they are killed like a foreign architecture.
	x32SyscallBit = 0x40000000
)

// sysMknod is mknod's number; a variable so arm64 can say -1.
var sysMknod = unix.SYS_MKNOD

// archDeniedSyscalls exist on x86_64 only: port I/O, the a.out loader and
// obsolete or never-implemented calls.
var archDeniedSyscalls = []uint32{
	unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_USELIB, unix.SYS_CREATE_MODULE, unix.SYS_GET_KERNEL_SYMS,
	unix.SYS_QUERY_MODULE, unix.SYS__SYSCTL, unix.SYS_USTAT, unix.SYS_SYSFS, unix.SYS_AFS_SYSCALL,
	unix.SYS_TUXCALL, unix.SYS_SECURITY, unix.SYS_GETPMSG, unix.SYS_PUTPMSG,
}
