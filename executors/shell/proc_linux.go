package shell

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// procAttr starts the child as the leader of a new process group. Pdeathsig
// kills it if the executor dies first; the kernel sends it when the thread
// that started the child exits, which in Go only happens when a goroutine
// exits while locked to its thread (runtime.LockOSThread); neither this
// package nor go-plugin or gRPC does that.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitExited blocks until cmd's process has exited. It leaves the process
// unreaped (waitid with WNOWAIT), so its pid and with it the group id stay
// taken until cmd.Wait; reaped is false unless waitid failed and it had to
// fall back to cmd.Wait.
func waitExited(cmd *exec.Cmd) (reaped bool, err error) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, unix.EINTR) {
			return true, cmd.Wait()
		}
	}
}
