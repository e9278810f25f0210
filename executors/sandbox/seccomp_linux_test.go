//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/binary"
	"slices"
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
	enosys := unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	eafnosupport := unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT)
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
		{"socket unix", seccompData(auditArch, unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM), unix.SECCOMP_RET_ALLOW},
		{"socket inet", seccompData(auditArch, unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM), unix.SECCOMP_RET_ALLOW},
		{"socket inet6", seccompData(auditArch, unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC), unix.SECCOMP_RET_ALLOW},
		{"socket netlink route", seccompData(auditArch, unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE), unix.SECCOMP_RET_ALLOW},
		{"socket netlink audit", seccompData(auditArch, unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT), eafnosupport},
		{"socket netlink uevent", seccompData(auditArch, unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_KOBJECT_UEVENT), eafnosupport},
		{"socket vsock", seccompData(auditArch, unix.SYS_SOCKET, unix.AF_VSOCK, unix.SOCK_STREAM), eafnosupport},
		{"socket vsock dgram", seccompData(auditArch, unix.SYS_SOCKET, unix.AF_VSOCK, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK), eafnosupport},
		{"socket packet", seccompData(auditArch, unix.SYS_SOCKET, unix.AF_PACKET, unix.SOCK_RAW), eafnosupport},
		{"socket alg", seccompData(auditArch, unix.SYS_SOCKET, unix.AF_ALG, unix.SOCK_SEQPACKET), eafnosupport},
		{"socket key", seccompData(auditArch, unix.SYS_SOCKET, unix.AF_KEY, unix.SOCK_RAW), eafnosupport},
		{"socket bluetooth", seccompData(auditArch, unix.SYS_SOCKET, unix.AF_BLUETOOTH, unix.SOCK_STREAM), eafnosupport},
		{"socket family max", seccompData(auditArch, unix.SYS_SOCKET, 0xffffffff), eafnosupport},
		{"socketpair unix", seccompData(auditArch, unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_STREAM), unix.SECCOMP_RET_ALLOW},
		{"socketpair vsock", seccompData(auditArch, unix.SYS_SOCKETPAIR, unix.AF_VSOCK, unix.SOCK_STREAM), eafnosupport},
		{"socketpair inet", seccompData(auditArch, unix.SYS_SOCKETPAIR, unix.AF_INET, unix.SOCK_STREAM), eafnosupport},
		{"memfd_create", seccompData(auditArch, unix.SYS_MEMFD_CREATE, 0, 0), enosys},
		{"memfd_create exec", seccompData(auditArch, unix.SYS_MEMFD_CREATE, 0, unix.MFD_EXEC), enosys},
		{"memfd_secret", seccompData(auditArch, unix.SYS_MEMFD_SECRET), enosys},
		{"mq_open", seccompData(auditArch, unix.SYS_MQ_OPEN), enosys},
		{"io_setup", seccompData(auditArch, unix.SYS_IO_SETUP), enosys},
		{"kcmp", seccompData(auditArch, unix.SYS_KCMP), enosys},
		{"listmount", seccompData(auditArch, unix.SYS_LISTMOUNT), enosys},
		{"newest known", seccompData(auditArch, unix.SYS_RSEQ_SLICE_YIELD), enosys},
		{"unassigned 1000", seccompData(auditArch, 1000), enosys},
		{"unassigned 0xffff", seccompData(auditArch, 0xffff), enosys},
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

// TestSeccompAllowlist checks the default: over every number up to well
// past the newest syscall, only the listed calls (and the argument-checked
// ones with harmless arguments) are allowed, and nothing is both allowed
// and denied.
func TestSeccompAllowlist(t *testing.T) {
	prog, err := seccompFilter()
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[uint32]bool{}
	for _, nr := range append(append([]uint32(nil), allowedSyscalls...), archAllowedSyscalls...) {
		allowed[nr] = true
	}
	for _, nr := range append(append([]uint32(nil), deniedSyscalls...), archDeniedSyscalls...) {
		if allowed[nr] {
			t.Errorf("syscall %d is both allowed and denied", nr)
		}
	}
	checked := map[uint32]bool{unix.SYS_CLONE: true, unix.SYS_MKNODAT: true, unix.SYS_PERSONALITY: true,
		unix.SYS_IOCTL: true, unix.SYS_SOCKET: true, unix.SYS_SOCKETPAIR: true}
	if sysMknod >= 0 {
		checked[uint32(sysMknod)] = true
	}
	nAllowed := 0
	for nr := uint32(0); nr < 2048; nr++ {
		// Arguments that every check refuses: namespace flags, a block
		// device, a bad personality, TIOCSTI, AF_VSOCK.
		data := seccompData(auditArch, nr, unix.CLONE_NEWUSER|unix.AF_VSOCK, unix.TIOCSTI, unix.S_IFBLK)
		if int(nr) == sysMknod {
			data = seccompData(auditArch, nr, 0, unix.S_IFBLK)
		}
		got, err := vm.Run(data)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case allowed[nr]:
			if uint32(got) != unix.SECCOMP_RET_ALLOW {
				t.Errorf("allowed syscall %d: %#x", nr, got)
			}
			nAllowed++
		case checked[nr]:
			if uint32(got) == unix.SECCOMP_RET_ALLOW {
				t.Errorf("syscall %d allowed with refused arguments", nr)
			}
		case uint32(got)&unix.SECCOMP_RET_ACTION_FULL != unix.SECCOMP_RET_ERRNO:
			t.Errorf("unlisted syscall %d: %#x, want an errno", nr, got)
		}
	}
	t.Logf("%d syscalls allowed, %d instructions", nAllowed, len(prog))
}

// decide is the filter's policy written plainly, for the fuzz target.
func decide(arch, nr uint32, args [3]uint32) uint32 {
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }
	if arch != auditArch || (x32SyscallBit != 0 && nr >= x32SyscallBit) {
		return unix.SECCOMP_RET_KILL_PROCESS
	}
	if slices.Contains(allowedSyscalls, nr) || slices.Contains(archAllowedSyscalls, nr) {
		return unix.SECCOMP_RET_ALLOW
	}
	if slices.Contains(deniedSyscalls, nr) || slices.Contains(archDeniedSyscalls, nr) {
		return errno(unix.EPERM)
	}
	allowIf := func(ok bool, e unix.Errno) uint32 {
		if ok {
			return unix.SECCOMP_RET_ALLOW
		}
		return errno(e)
	}
	device := func(mode uint32) bool { return mode&unix.S_IFMT == unix.S_IFCHR || mode&unix.S_IFMT == unix.S_IFBLK }
	switch {
	case nr == unix.SYS_CLONE:
		return allowIf(args[0]&cloneNamespaces == 0, unix.EPERM)
	case nr == unix.SYS_MKNODAT:
		return allowIf(!device(args[2]), unix.EPERM)
	case sysMknod >= 0 && nr == uint32(sysMknod):
		return allowIf(!device(args[1]), unix.EPERM)
	case nr == unix.SYS_PERSONALITY:
		return allowIf(slices.Contains(allowedPersonalities, args[0]), unix.EPERM)
	case nr == unix.SYS_IOCTL:
		return allowIf(args[1] != unix.TIOCSTI && args[1] != unix.TIOCLINUX, unix.EPERM)
	case nr == unix.SYS_SOCKET:
		return allowIf(slices.Contains(socketFamilies, args[0]) || (args[0] == unix.AF_NETLINK && args[2] == unix.NETLINK_ROUTE), unix.EAFNOSUPPORT)
	case nr == unix.SYS_SOCKETPAIR:
		return allowIf(args[0] == unix.AF_UNIX, unix.EAFNOSUPPORT)
	}
	return errno(unix.ENOSYS)
}

// FuzzSeccompFilter checks the assembled program against decide.
func FuzzSeccompFilter(f *testing.F) {
	prog, err := seccompFilter()
	if err != nil {
		f.Fatal(err)
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint32(auditArch), uint32(unix.SYS_READ), uint32(0), uint32(0), uint32(0))
	f.Add(uint32(auditArch), uint32(unix.SYS_SOCKET), uint32(unix.AF_VSOCK), uint32(unix.SOCK_STREAM), uint32(0))
	f.Add(uint32(auditArch), uint32(unix.SYS_SOCKET), uint32(unix.AF_NETLINK), uint32(unix.SOCK_RAW), uint32(unix.NETLINK_ROUTE))
	f.Add(uint32(auditArch), uint32(unix.SYS_CLONE), uint32(unix.CLONE_NEWUSER), uint32(0), uint32(0))
	f.Add(uint32(auditArch), uint32(unix.SYS_MKNODAT), uint32(0), uint32(0), uint32(unix.S_IFCHR))
	f.Add(uint32(auditArch), uint32(unix.SYS_IOCTL), uint32(0), uint32(unix.TIOCSTI), uint32(0))
	f.Add(uint32(auditArch), uint32(unix.SYS_MEMFD_CREATE), uint32(0), uint32(0), uint32(0))
	f.Add(uint32(auditArch), uint32(1000), uint32(0), uint32(0), uint32(0))
	f.Add(uint32(unix.AUDIT_ARCH_I386), uint32(unix.SYS_READ), uint32(0), uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, arch, nr, a0, a1, a2 uint32) {
		got, err := vm.Run(seccompData(arch, nr, a0, a1, a2))
		if err != nil {
			t.Fatal(err)
		}
		if want := decide(arch, nr, [3]uint32{a0, a1, a2}); uint32(got) != want {
			t.Fatalf("arch %#x nr %d args %#x %#x %#x: %#x, want %#x", arch, nr, a0, a1, a2, uint32(got), want)
		}
	})
}
