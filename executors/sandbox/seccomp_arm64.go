//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const (
	auditArch     = unix.AUDIT_ARCH_AARCH64
	x32SyscallBit = 0
)

// sysMknod: arm64 has only mknodat.
var sysMknod = -1

var archDeniedSyscalls []uint32

// archAllowedSyscalls: arm64 has no older spellings.
var archAllowedSyscalls []uint32
