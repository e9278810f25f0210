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

// archAllowedSyscalls are x86_64's older spellings of allowed calls (arm64
// has only the *at and *2 forms), and its thread-pointer calls.
var archAllowedSyscalls = []uint32{
	unix.SYS_OPEN, unix.SYS_CREAT, unix.SYS_STAT, unix.SYS_LSTAT, unix.SYS_ACCESS, unix.SYS_PIPE, unix.SYS_POLL,
	unix.SYS_SELECT, unix.SYS_DUP2, unix.SYS_FORK, unix.SYS_VFORK, unix.SYS_GETDENTS, unix.SYS_RENAME,
	unix.SYS_MKDIR, unix.SYS_RMDIR, unix.SYS_LINK, unix.SYS_UNLINK, unix.SYS_SYMLINK, unix.SYS_READLINK,
	unix.SYS_CHMOD, unix.SYS_CHOWN, unix.SYS_LCHOWN, unix.SYS_UTIME, unix.SYS_UTIMES, unix.SYS_FUTIMESAT,
	unix.SYS_TIME, unix.SYS_ALARM, unix.SYS_PAUSE, unix.SYS_GETPGRP, unix.SYS_INOTIFY_INIT,
	unix.SYS_EPOLL_CREATE, unix.SYS_EPOLL_WAIT, unix.SYS_SIGNALFD, unix.SYS_EVENTFD,
	unix.SYS_ARCH_PRCTL, unix.SYS_GET_THREAD_AREA, unix.SYS_SET_THREAD_AREA,
}
