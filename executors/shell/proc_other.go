//go:build unix && !linux

package shell

import (
	"os/exec"
	"syscall"
)

// procAttr starts the child as the leader of a new process group.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitExited blocks until cmd's process has exited and reaps it; there is
// no portable way to wait without reaping here.
func waitExited(cmd *exec.Cmd) (reaped bool, err error) {
	return true, cmd.Wait()
}
