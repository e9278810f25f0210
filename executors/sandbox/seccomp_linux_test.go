//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData lays out struct seccomp_data for the x/net/bpf VM, which
// loads words big-endian: each 32-bit field goes in big-endian at the
// offset the filter reads.
func seccompData(arch, nr uint32, args ...uint32) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], nr)
	binary.BigEndian.PutUint32(b[offArch:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[argLow(i):], a)
	}
	return b
}

func TestSeccompFilter(t *testing.T) {
	prog, err := seccompFilter()
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d instructions", len(prog))
	eperm := unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	tests := []struct {
		name string
		data []byte
		want uint32
	}{
		{"read", seccompData(auditArch, unix.SYS_READ), unix.SECCOMP_RET_ALLOW},
		{"execve", seccompData(auditArch, unix.SYS_EXECVE), unix.SECCOMP_RET_ALLOW},
		{"foreign arch", seccompData(unix.AUDIT_ARCH_I386, unix.SYS_READ), unix.SECCOMP_RET_KILL_PROCESS},
		{"mount", seccompData(auditArch, unix.SYS_MOUNT), eperm},
		{"ptrace", seccompData(auditArch, unix.SYS_PTRACE), eperm},
		{"bpf", seccompData(auditArch, unix.SYS_BPF), eperm},
		{"io_uring", seccompData(auditArch, unix.SYS_IO_URING_SETUP), eperm},
		{"thread clone", seccompData(auditArch, unix.SYS_CLONE, unix.CLONE_VM|unix.CLONE_FS|unix.CLONE_FILES|unix.CLONE_SIGHAND|unix.CLONE_THREAD), unix.SECCOMP_RET_ALLOW},
		{"fork clone", seccompData(auditArch, unix.SYS_CLONE, uint32(unix.SIGCHLD)), unix.SECCOMP_RET_ALLOW},
		{"clone newuser", seccompData(auditArch, unix.SYS_CLONE, unix.CLONE_NEWUSER|uint32(unix.SIGCHLD)), eperm},
		{"clone newnet", seccompData(auditArch, unix.SYS_CLONE, unix.CLONE_NEWNET), eperm},
		{"clone3", seccompData(auditArch, unix.SYS_CLONE3), unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		{"mknodat fifo", seccompData(auditArch, unix.SYS_MKNODAT, 0, 0, unix.S_IFIFO|0o644), unix.SECCOMP_RET_ALLOW},
		{"mknodat char", seccompData(auditArch, unix.SYS_MKNODAT, 0, 0, unix.S_IFCHR|0o644), eperm},
		{"mknodat block", seccompData(auditArch, unix.SYS_MKNODAT, 0, 0, unix.S_IFBLK|0o644), eperm},
		{"personality query", seccompData(auditArch, unix.SYS_PERSONALITY, 0xffffffff), unix.SECCOMP_RET_ALLOW},
		{"personality linux", seccompData(auditArch, unix.SYS_PERSONALITY, 0), unix.SECCOMP_RET_ALLOW},
		{"personality no-aslr", seccompData(auditArch, unix.SYS_PERSONALITY, 0x0040000), eperm},
		{"ioctl TCGETS", seccompData(auditArch, unix.SYS_IOCTL, 0, unix.TCGETS), unix.SECCOMP_RET_ALLOW},
		{"ioctl TIOCSTI", seccompData(auditArch, unix.SYS_IOCTL, 0, unix.TIOCSTI), eperm},
	}
	if x32SyscallBit != 0 {
		tests = append(tests, struct {
			name string
			data []byte
			want uint32
		}{"x32", seccompData(auditArch, x32SyscallBit|unix.SYS_READ), unix.SECCOMP_RET_KILL_PROCESS})
	}
	if sysMknod >= 0 {
		tests = append(tests, struct {
			name string
			data []byte
			want uint32
		}{"mknod char", seccompData(auditArch, uint32(sysMknod), 0, unix.S_IFCHR), eperm})
	}
	for _, nr := range append(append([]uint32(nil), deniedSyscalls...), archDeniedSyscalls...) {
		got, err := vm.Run(seccompData(auditArch, nr))
		if err != nil || uint32(got) != eperm {
			t.Errorf("syscall %d: %#x %v, want EPERM", nr, got, err)
		}
	}
	for _, tt := range tests {
		got, err := vm.Run(tt.data)
		if err != nil {
			t.Fatal(err)
		}
		if uint32(got) != tt.want {
			t.Errorf("%s: %#x, want %#x", tt.name, uint32(got), tt.want)
		}
	}
}
