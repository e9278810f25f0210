package apiserver

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peerUID returns the uid of the process at the other end of a Unix socket,
// as the kernel recorded it at connect time (SO_PEERCRED).
func peerUID(c net.Conn) (uint32, error) {
	// *net.UnixConn, or the connection limit's wrapper around one.
	uc, ok := c.(syscall.Conn)
	if !ok {
		return 0, errors.New("not a unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if serr != nil {
		return 0, serr
	}
	return cred.Uid, nil
}
