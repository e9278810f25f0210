//go:build unix

package shell

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// killGroup sends sig to every process in the group pgid. A group that is
// already empty is not an error.
func killGroup(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
}

// exitSignal returns the name of the signal that killed the process, if
// one did.
func exitSignal(st *os.ProcessState) (string, bool) {
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", false
	}
	sig := ws.Signal()
	if name := unix.SignalName(sig); name != "" {
		return name, true
	}
	return sig.String(), true
}
