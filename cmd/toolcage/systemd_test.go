package main

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolcage/toolcage/internal/testutil"
)

// daemonBinary is the toolcage binary `make build` left in
// TOOLCAGE_BIN_DIR, or else this test binary, which TestMain turns into
// the CLI; env is what the latter needs in its environment.
func daemonBinary(t *testing.T) (exe string, env []string) {
	t.Helper()
	if bin := os.Getenv("TOOLCAGE_BIN_DIR"); bin != "" {
		p := filepath.Join(bin, "toolcage")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe, []string{asCLIEnv + "=1"}
}

// activatedDaemon is `toolcage daemon` started as systemd starts it: the
// listening sockets as fds 3, 4, … with LISTEN_FDS, and NOTIFY_SOCKET.
type activatedDaemon struct {
	cmd    *exec.Cmd
	notify *net.UnixConn
	stderr *testutil.SyncBuffer
	// configured is the --socket path given on the command line.
	configured string
}

// startActivated starts the daemon binary with files passed as fds from 3
// on. LISTEN_PID is the daemon's own pid when ownPID is set (a shell sets
// it and execs the daemon, which keeps the pid, as systemd does), else
// this test's pid, which the daemon must ignore.
func startActivated(t *testing.T, dir string, files []*os.File, ownPID bool) *activatedDaemon {
	t.Helper()
	notifyPath := filepath.Join(dir, "notify")
	nc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notifyPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	exe, env := daemonBinary(t)
	ad := &activatedDaemon{notify: nc, stderr: &testutil.SyncBuffer{}, configured: filepath.Join(dir, "configured", "d.sock")}
	args := []string{exe, "daemon", "--socket", ad.configured, "--data-dir", filepath.Join(dir, "data"),
		"--executor", executorPath, "--log-level", "info"}
	script := `exec "$@"`
	if ownPID {
		script = `LISTEN_PID=$$; export LISTEN_PID; exec "$@"`
	} else {
		env = append(env, "LISTEN_PID="+strconv.Itoa(os.Getpid()))
	}
	ad.cmd = exec.Command("/bin/sh", append([]string{"-c", script, "sh"}, args...)...)
	ad.cmd.Env = append(append(os.Environ(), env...), "LISTEN_FDS="+strconv.Itoa(len(files)), "NOTIFY_SOCKET="+notifyPath)
	ad.cmd.ExtraFiles = files
	ad.cmd.Stderr = ad.stderr
	if err := ad.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ad.cmd.ProcessState == nil {
			ad.cmd.Process.Kill()
			ad.cmd.Wait()
		}
	})
	return ad
}

// waitNotify reads sd_notify datagrams until one holds the line want.
func (ad *activatedDaemon) waitNotify(t *testing.T, want string, within time.Duration) {
	t.Helper()
	ad.notify.SetReadDeadline(time.Now().Add(within))
	buf := make([]byte, 4096)
	for {
		n, err := ad.notify.Read(buf)
		if err != nil {
			t.Fatalf("no %s from the daemon within %s: %v\ndaemon stderr:\n%s", want, within, err, ad.stderr.String())
		}
		for _, line := range strings.Split(string(buf[:n]), "\n") {
			if line == want {
				return
			}
		}
	}
}

// stop sends SIGTERM and waits for the daemon to exit 0 after STOPPING=1.
func (ad *activatedDaemon) stop(t *testing.T) {
	t.Helper()
	if err := ad.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ad.waitNotify(t, "STOPPING=1", 30*time.Second)
	if err := ad.cmd.Wait(); err != nil {
		t.Fatalf("daemon exit: %v\n%s", err, ad.stderr.String())
	}
}

func listenUnix(t *testing.T, path string) (*net.UnixListener, *os.File) {
	t.Helper()
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ul.Close() })
	f, err := ul.File() // a dup for the child; the listener stays ours, as systemd's does
	if err != nil {
		t.Fatal(err)
	}
	return ul, f
}

// TestSocketActivation starts the built daemon as systemd does with
// toolcage.socket: it serves the passed socket (not the configured one,
// which it never creates), makes it 0600, says READY=1 once it answers
// and STOPPING=1 on SIGTERM, and leaves the socket file, which is
// systemd's, in place when it stops.
func TestSocketActivation(t *testing.T) {
	dir, err := os.MkdirTemp("", "tcsd") // socket paths are short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	act := filepath.Join(dir, "act.sock")
	_, f := listenUnix(t, act)
	ad := startActivated(t, dir, []*os.File{f}, true)
	f.Close()
	ad.waitNotify(t, "READY=1", 60*time.Second)

	r := tc(t, act, "--json", "health")
	wantExit(t, r, exitOK)
	var h struct {
		Socket string `json:"socket"`
	}
	if err := json.Unmarshal([]byte(r.out), &h); err != nil || h.Socket != act {
		t.Errorf("health over the passed socket: %v %v", err, r)
	}
	if _, err := os.Stat(ad.configured); !os.IsNotExist(err) {
		t.Errorf("the configured socket %s was made too: %v", ad.configured, err)
	}
	if fi, err := os.Stat(act); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("passed socket mode: %v %v", fi.Mode(), err)
	}
	ad.stop(t)
	if fi, err := os.Lstat(act); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("the daemon removed systemd's socket: %v", err)
	}
	if !strings.Contains(ad.stderr.String(), "socket_activated=true") {
		t.Errorf("the log does not say the socket was passed:\n%s", ad.stderr.String())
	}
}

// TestSocketActivationRefused: sockets meant for another process
// (LISTEN_PID not ours) are ignored, and the daemon makes its configured
// socket; two passed sockets stop the start with a clear error.
func TestSocketActivationRefused(t *testing.T) {
	dir, err := os.MkdirTemp("", "tcsd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })

	_, f := listenUnix(t, filepath.Join(dir, "other.sock"))
	ad := startActivated(t, dir, []*os.File{f}, false)
	f.Close()
	ad.waitNotify(t, "READY=1", 60*time.Second)
	wantExit(t, tc(t, ad.configured, "health"), exitOK)
	ad.stop(t)
	if _, err := os.Stat(ad.configured); !os.IsNotExist(err) {
		t.Errorf("the daemon left its own socket behind: %v", err)
	}

	dir2 := filepath.Join(dir, "two")
	if err := os.Mkdir(dir2, 0o700); err != nil {
		t.Fatal(err)
	}
	_, f1 := listenUnix(t, filepath.Join(dir2, "a.sock"))
	_, f2 := listenUnix(t, filepath.Join(dir2, "b.sock"))
	ad = startActivated(t, dir2, []*os.File{f1, f2}, true)
	f1.Close()
	f2.Close()
	err = ad.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 ||
		!strings.Contains(ad.stderr.String(), "systemd passed 2 sockets; toolcage serves exactly one") {
		t.Errorf("two sockets: %v\n%s", err, ad.stderr.String())
	}
}
