//go:build linux

package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/sandbox"
	"github.com/toolcage/toolcage/internal/testutil"
)

// The test binary doubles as a sandboxed executor. sandbox.Init has to run
// before anything else (TestMain lives in pool_test.go), hence init.
const (
	sandboxExecutorEnv = "TOOLCAGE_TEST_SANDBOX_EXECUTOR"
	unprivDaemonEnv    = "TOOLCAGE_TEST_UNPRIV_DAEMON"
)

func init() {
	sandbox.Init()
	if os.Getenv(sandboxExecutorEnv) == "1" {
		executors.Serve(executors.ExecutorFunc(sandboxTestExecute))
		os.Exit(0)
	}
	if os.Getenv(unprivDaemonEnv) == "1" {
		os.Exit(unprivilegedDaemon())
	}
}

// sbxOp is one request to the sandboxed test executor.
type sbxOp struct {
	Op   string `json:"op"`
	Cmd  string `json:"cmd,omitempty"`  // sh: the script
	MS   int    `json:"ms,omitempty"`   // sh: timeout
	Addr string `json:"addr,omitempty"` // dial
	N    int    `json:"n,omitempty"`    // openfiles: how many; alloc: MiB
	Name string `json:"name,omitempty"` // syscall
}

// sbxResult is what the sandboxed test executor answers.
type sbxResult struct {
	Pid    int               `json:"pid"`
	Out    string            `json:"out,omitempty"`
	Code   int               `json:"code"`
	Signal string            `json:"signal,omitempty"`
	Err    string            `json:"err,omitempty"`
	N      int               `json:"n,omitempty"`
	Status map[string]string `json:"status,omitempty"`
	Procs  []string          `json:"procs,omitempty"`
}

func sandboxTestExecute(ctx context.Context, req *executors.Request) (*executors.Result, error) {
	var op sbxOp
	if err := json.Unmarshal(req.Args, &op); err != nil {
		return nil, err
	}
	r := sbxResult{Pid: os.Getpid()}
	switch op.Op {
	case "echo":
	case "sh":
		d := time.Duration(op.MS) * time.Millisecond
		if d == 0 {
			d = 10 * time.Second
		}
		cctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		cmd := exec.CommandContext(cctx, "/bin/sh", "-c", op.Cmd)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.WaitDelay = 200 * time.Millisecond
		err := cmd.Run()
		r.Out = out.String()
		if len(r.Out) > 8192 {
			r.Out = r.Out[:8192]
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.Code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				r.Signal = unix.SignalName(ws.Signal())
			}
		} else if err != nil {
			r.Err = err.Error()
		}
	case "dial":
		c, err := net.DialTimeout("tcp", op.Addr, 2*time.Second)
		if err != nil {
			r.Err = err.Error()
		} else {
			c.Close()
		}
	case "syscall":
		var err error
		switch op.Name {
		case "mount":
			err = unix.Mount("tmpfs", "/tmp", "tmpfs", 0, "")
		case "ptrace":
			cmd := exec.Command("/bin/sleep", "5")
			if err = cmd.Start(); err == nil {
				err = unix.PtraceAttach(cmd.Process.Pid)
				cmd.Process.Kill()
				cmd.Wait()
			}
		case "unshare":
			err = unix.Unshare(unix.CLONE_NEWUSER)
		case "clone-newuser":
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
			err = cmd.Run()
		case "bpf":
			_, _, e := unix.Syscall(unix.SYS_BPF, 0, 0, 0)
			err = e
		case "keyctl":
			_, err = unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_SESSION_KEYRING, 0, 0, 0)
		case "mknod":
			err = unix.Mknod("/tmp/null2", unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
		case "personality":
			_, _, e := unix.Syscall(unix.SYS_PERSONALITY, 0x0040000, 0, 0) // ADDR_NO_RANDOMIZE
			err = e
		case "chroot":
			err = unix.Chroot("/tmp")
		case "memfd-exec":
			// Fileless exec: a binary copied into a memfd.
			var fd int
			if fd, err = unix.MemfdCreate("x", 0); err == nil {
				var b []byte
				if b, err = os.ReadFile("/bin/true"); err == nil {
					f := os.NewFile(uintptr(fd), "memfd")
					f.Write(b)
					err = exec.Command(fmt.Sprintf("/proc/self/fd/%d", fd)).Run()
					f.Close()
				}
			}
		default:
			return nil, errors.New("unknown syscall " + op.Name)
		}
		if err != nil {
			r.Err = err.Error()
		}
	case "openfiles":
		var fs []*os.File
		for range op.N {
			f, err := os.Open("/dev/null")
			if err != nil {
				r.Err = err.Error()
				break
			}
			fs = append(fs, f)
		}
		r.N = len(fs)
		for _, f := range fs {
			f.Close()
		}
	case "alloc":
		b := make([][]byte, 0, op.N)
		for range op.N {
			m := make([]byte, 1<<20)
			for i := 0; i < len(m); i += 4096 {
				m[i] = 1
			}
			b = append(b, m)
		}
		r.N = len(b)
	case "status":
		r.Status = map[string]string{}
		s, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(s), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				r.Status[k] = strings.TrimSpace(v)
			}
		}
		h, _ := os.Hostname()
		r.Status["hostname"] = h
		m, _ := os.ReadFile("/proc/self/uid_map")
		r.Status["uid_map"] = strings.Join(strings.Fields(string(m)), " ")
		wd, _ := os.Getwd()
		r.Status["cwd"] = wd
		r.Status["dumpable"] = strconv.Itoa(func() int { d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); return d }())
		r.Status["env"] = strings.Join(os.Environ(), "\n")
	case "ps":
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
			r.Procs = append(r.Procs, e.Name()+":"+strings.TrimSpace(string(comm)))
		}
	default:
		return nil, errors.New("unknown op " + op.Op)
	}
	v, _ := json.Marshal(r)
	return &executors.Result{Value: v}, nil
}

// The sandbox tests' keys ask for the reset after every call, as the
// daemon's shell kind does.
var (
	sbxKey    = Key{Kind: executors.KindShell, Isolation: "process", Reset: true}
	sbxNetKey = Key{Kind: executors.KindShell, Isolation: "process", Permissions: "network", Reset: true}
)

// newSandboxPool returns a pool whose "process" runner is a SandboxRunner
// serving sandboxTestExecute.
func newSandboxPool(t testing.TB, cfg sandbox.Config) (*Pool, *SandboxRunner, *testutil.SyncBuffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: its parent is closed to the sandbox's uid.
	state, err := os.MkdirTemp("", "toolcage-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	if err := os.Chmod(state, 0o711); err != nil {
		t.Fatal(err)
	}
	r := &SandboxRunner{Path: exe, Env: []string{sandboxExecutorEnv + "=1"}, Config: cfg, StateDir: state}
	logs := &testutil.SyncBuffer{}
	p := NewPool(PoolConfig{
		Runners:      map[string]Runner{"process": r},
		Logger:       slog.New(slog.NewTextHandler(logs, nil)),
		TimeoutGrace: 500 * time.Millisecond,
	})
	t.Cleanup(func() {
		p.Close()
		if t.Failed() {
			t.Logf("daemon log:\n%s", logs.String())
		}
	})
	return p, r, logs
}

func sbxCall(t testing.TB, p *Pool, key Key, op sbxOp) (sbxResult, error) {
	t.Helper()
	args, _ := json.Marshal(op)
	res, err := p.Execute(context.Background(), key, &executors.Request{
		CallID: "c", Tool: "t", Kind: key.Kind, Args: args,
		Limits: executors.Limits{Timeout: 20 * time.Second},
	})
	var r sbxResult
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(res.Value, &r); err != nil {
		t.Fatal(err)
	}
	return r, nil
}

func mustCall(t testing.TB, p *Pool, key Key, op sbxOp) sbxResult {
	t.Helper()
	r, err := sbxCall(t, p, key, op)
	if err != nil {
		t.Fatalf("%s %s: %v", op.Op, op.Cmd+op.Name, err)
	}
	return r
}

func TestSandboxExecutorIsConfined(t *testing.T) {
	testutil.NeedSandbox(t)
	p, _, _ := newSandboxPool(t, sandbox.Config{})
	st := mustCall(t, p, sbxKey, sbxOp{Op: "status"}).Status
	want := map[string]string{
		"NoNewPrivs": "1", "Seccomp": "2", "hostname": "toolcage", "cwd": "/work", "dumpable": "0",
		"CapInh": "0000000000000000", "CapPrm": "0000000000000000", "CapEff": "0000000000000000",
		"CapBnd": "0000000000000000", "CapAmb": "0000000000000000",
	}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("%s = %q, want %q", k, st[k], v)
		}
	}
	hostUID := strconv.Itoa(os.Geteuid())
	if os.Geteuid() == 0 {
		hostUID = "65534"
	}
	if st["uid_map"] != "0 "+hostUID+" 1" {
		t.Errorf("uid_map = %q, want root mapped to %s only", st["uid_map"], hostUID)
	}
	if strings.Contains(st["env"], "TOOLCAGE_SANDBOX") {
		t.Errorf("sandbox variables leak into the executor:\n%s", st["env"])
	}
	if os.Geteuid() == 0 && st["Groups"] != "" {
		t.Errorf("supplementary groups %q, want none", st["Groups"])
	}
}

func TestSandboxDeniesPrivilegedOperations(t *testing.T) {
	testutil.NeedSandbox(t)
	p, _, _ := newSandboxPool(t, sandbox.Config{})
	for _, name := range []string{"mount", "ptrace", "unshare", "clone-newuser", "bpf", "keyctl", "mknod", "personality", "chroot"} {
		r := mustCall(t, p, sbxKey, sbxOp{Op: "syscall", Name: name})
		if !strings.HasSuffix(r.Err, "operation not permitted") {
			t.Errorf("%s: err %q, want EPERM", name, r.Err)
		}
	}
	// A known gap, logged so a change shows: a binary written to a memfd can
	// be executed (noexec and Landlock cover the writable directories only).
	r := mustCall(t, p, sbxKey, sbxOp{Op: "syscall", Name: "memfd-exec"})
	t.Logf("exec from a memfd: err %q", r.Err)
	for _, tc := range []struct{ cmd, want string }{
		{"mkdir -p /tmp/m && mount -t tmpfs none /tmp/m", "ermission denied"},
		{"strace -f /bin/true", "Operation not permitted"},
		{"cat /etc/shadow", "No such file"},
		{"touch /usr/x", "Read-only file system"},
		{"touch /x", "Read-only file system"},
		{"echo x > /proc/sys/kernel/hostname", ""},
		{"cat /proc/1/environ", "ermission denied"},
	} {
		r := mustCall(t, p, sbxKey, sbxOp{Op: "sh", Cmd: tc.cmd})
		if r.Code == 0 || !strings.Contains(r.Out, tc.want) {
			if strings.HasPrefix(tc.cmd, "strace") && strings.Contains(r.Out, "not found") {
				continue
			}
			t.Errorf("%q: exit %d, output %q; want failure with %q", tc.cmd, r.Code, r.Out, tc.want)
		}
	}
}

func TestSandboxHidesTheHost(t *testing.T) {
	testutil.NeedSandbox(t)
	p, r, _ := newSandboxPool(t, sandbox.Config{})
	data := t.TempDir()
	secret := filepath.Join(data, "secret.db")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(data, "toolcage.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	for _, path := range []string{data, secret, sock, wd, home, r.StateDir, "/root", "/home", "/var", "/run", "/etc/shadow", "/etc/passwd-", "/sys"} {
		if path == "" || path == "/" || path == "/tmp" {
			continue // the sandbox has its own
		}
		res := mustCall(t, p, sbxKey, sbxOp{Op: "sh", Cmd: "ls -d " + path})
		if res.Code == 0 {
			t.Errorf("the sandbox sees %s: %s", path, res.Out)
		}
	}
	res := mustCall(t, p, sbxKey, sbxOp{Op: "sh", Cmd: "ls /; ls /etc; ls /dev; ls /tmp"})
	t.Logf("sandbox view:\n%s", res.Out)
	// The socket dir is unbound once the daemon has connected: /tmp holds
	// only the empty mount point left behind.
	res = mustCall(t, p, sbxKey, sbxOp{Op: "sh", Cmd: "find /tmp -type s -o -type f | head"})
	if strings.TrimSpace(res.Out) != "" {
		t.Errorf("files under the sandbox's /tmp: %s", res.Out)
	}
}

func TestSandboxNetwork(t *testing.T) {
	testutil.NeedSandbox(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	p, _, _ := newSandboxPool(t, sandbox.Config{})
	r := mustCall(t, p, sbxKey, sbxOp{Op: "dial", Addr: l.Addr().String()})
	if r.Err == "" {
		t.Fatal("without the network permission the sandbox reached the host's 127.0.0.1")
	}
	t.Logf("without network: %s", r.Err)
	if r := mustCall(t, p, sbxKey, sbxOp{Op: "sh", Cmd: "cat /proc/net/dev | tail -n +3"}); strings.Count(strings.TrimSpace(r.Out), "\n") != 0 || !strings.Contains(r.Out, "lo:") {
		t.Errorf("interfaces without network:\n%s", r.Out)
	}
	r = mustCall(t, p, sbxNetKey, sbxOp{Op: "dial", Addr: l.Addr().String()})
	if r.Err != "" {
		t.Fatalf("with the network permission: %s", r.Err)
	}
}

func TestSandboxForkBomb(t *testing.T) {
	testutil.NeedRoot(t)
	p, _, _ := newSandboxPool(t, sandbox.Config{Pids: 64})
	mustCall(t, p, sbxKey, sbxOp{Op: "echo"})
	// The pool's after-call reset sees the broken pids cap and ends the call.
	_, err := sbxCall(t, p, sbxKey, sbxOp{Op: "sh", MS: 3000, Cmd: `b() { b | b & }; b; sleep 2; echo survived`})
	if errdefs.CodeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != errdefs.LimitPids {
		t.Fatalf("fork bomb = %v, want limit_exceeded/pids", err)
	}
	// The host still forks freely.
	if out, err := exec.Command("/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8; do /bin/true & done; wait; echo ok").CombinedOutput(); err != nil {
		t.Fatalf("host cannot fork after the bomb: %v %s", err, out)
	}
	if after := mustCall(t, p, sbxKey, sbxOp{Op: "echo"}).Pid; after == 0 {
		t.Fatal("no executor after the bomb")
	}
	_, _, retired := p.Stats()
	if retired < 1 {
		t.Fatal("the bombed executor was not retired")
	}
}

func TestSandboxMemoryLimit(t *testing.T) {
	testutil.NeedRoot(t)
	// The cap leaves the hog below the largest process in the sandbox
	// when it is reached: this executor is the race-built test binary,
	// tens of MiB itself, and at 64 MiB the OOM killer could pick it
	// over a hog that had grown to less.
	p, _, _ := newSandboxPool(t, sandbox.Config{MemoryBytes: 192 << 20})
	mustCall(t, p, sbxKey, sbxOp{Op: "echo"})
	// A tool process that grows past the cap is killed by the OOM killer…
	_, err := sbxCall(t, p, sbxKey, sbxOp{Op: "sh", Cmd: "head -c 300000000 /dev/zero | tail -c 299999999 >/dev/null; echo done"})
	if errdefs.CodeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != errdefs.LimitMemory {
		t.Fatalf("memory hog = %v, want limit_exceeded/memory", err)
	}
	// …and an executor that does is killed with it: the call fails and the
	// pool replaces the executor.
	if _, err := sbxCall(t, p, sbxKey, sbxOp{Op: "alloc", N: 400}); errdefs.CodeOf(err) != errdefs.ExecutorFailed {
		t.Fatalf("alloc 400 MiB: %v, want executor_failed", err)
	}
	if next := mustCall(t, p, sbxKey, sbxOp{Op: "echo"}); next.Pid == 0 {
		t.Fatal("no executor after the OOM kill")
	}
}

func TestSandboxCPULimit(t *testing.T) {
	testutil.NeedSandbox(t)
	p, _, _ := newSandboxPool(t, sandbox.Config{CPUSeconds: 1})
	start := time.Now()
	res := mustCall(t, p, sbxKey, sbxOp{Op: "sh", MS: 15000, Cmd: "while :; do :; done"})
	if res.Signal != "SIGKILL" || time.Since(start) > 8*time.Second {
		t.Fatalf("spin: signal %q after %v, want SIGKILL after about 1s of CPU", res.Signal, time.Since(start))
	}
}

func TestSandboxFileSizeLimit(t *testing.T) {
	testutil.NeedSandbox(t)
	p, _, _ := newSandboxPool(t, sandbox.Config{FileSizeBytes: 8 << 20})
	res := mustCall(t, p, sbxKey, sbxOp{Op: "sh", Cmd: "dd if=/dev/zero of=/tmp/big bs=1M count=10240; echo dd=$?; stat -c %s /tmp/big"})
	if !strings.Contains(res.Out, "dd=153") || !strings.Contains(res.Out, "\n8388608") {
		t.Fatalf("10 GiB write: %q; want dd killed by SIGXFSZ (153) at 8 MiB", res.Out)
	}
}

func TestSandboxOpenFilesLimit(t *testing.T) {
	testutil.NeedSandbox(t)
	p, _, _ := newSandboxPool(t, sandbox.Config{})
	r := mustCall(t, p, sbxKey, sbxOp{Op: "openfiles", N: 100000})
	if r.N >= sandbox.DefaultOpenFiles || !strings.Contains(r.Err, "too many open files") {
		t.Fatalf("opened %d files (%s), want fewer than %d", r.N, r.Err, sandbox.DefaultOpenFiles)
	}
	if r := mustCall(t, p, sbxKey, sbxOp{Op: "sh", Cmd: "ulimit -n; ulimit -Hn"}); r.Out != "256\n256\n" {
		t.Fatalf("ulimit -n in a tool: %q", r.Out)
	}
}

func TestSandboxKillAllKillsOnlyTheSandbox(t *testing.T) {
	testutil.NeedSandbox(t)
	p, _, _ := newSandboxPool(t, sandbox.Config{})
	host := exec.Command("/bin/sleep", "60")
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer host.Process.Kill()
	mustCall(t, p, sbxKey, sbxOp{Op: "echo"})
	_, err := sbxCall(t, p, sbxKey, sbxOp{Op: "sh", Cmd: "kill -9 -1; sleep 1"})
	if errdefs.CodeOf(err) != errdefs.ExecutorFailed {
		t.Fatalf("kill -9 -1: %v, want executor_failed", err)
	}
	if err := host.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("a host process died: %v", err)
	}
	if after := mustCall(t, p, sbxKey, sbxOp{Op: "echo"}); after.Pid == 0 {
		t.Fatal("no executor after kill -9 -1")
	}
}

func TestSandboxAfterCallCleansUp(t *testing.T) {
	testutil.NeedSandbox(t)
	p, r, _ := newSandboxPool(t, sandbox.Config{})
	// The pool resets the sandbox after every call: no process and no file a
	// call leaves behind reaches the next call, and the executor is kept.
	first := mustCall(t, p, sbxKey, sbxOp{Op: "sh", Cmd: "sleep 1000 >/dev/null 2>&1 & echo x >/tmp/f; echo y >$HOME/g; mkdir -p /tmp/d/e; chmod 000 /tmp/d; echo z >/dev/shm/s; cat /tmp/f $HOME/g /dev/shm/s"})
	if first.Out != "x\ny\nz\n" {
		t.Fatalf("files during the call: %q", first.Out)
	}
	ps := mustCall(t, p, sbxKey, sbxOp{Op: "ps"})
	if strings.Contains(strings.Join(ps.Procs, " "), ":sleep") {
		t.Fatalf("leftover sleep survives the call: %v", ps.Procs)
	}
	res := mustCall(t, p, sbxKey, sbxOp{Op: "sh", Cmd: "ls -A /tmp $HOME /dev/shm"})
	if res.Out != "/dev/shm:\n\n/tmp:\n\n/work:\n" {
		t.Fatalf("files survive the call: %q", res.Out)
	}
	if res.Pid != first.Pid {
		t.Fatalf("executor replaced (%d → %d); a clean call must keep it", first.Pid, res.Pid)
	}
	// One sandbox served all three calls.
	if n := r.Starts(); n != 1 {
		t.Fatalf("sandbox starts = %d, want 1", n)
	}
}

func TestSandboxRunnerCheck(t *testing.T) {
	testutil.NeedSandbox(t)
	exe, _ := os.Executable()
	rep := (&SandboxRunner{Path: exe}).Check()
	t.Logf("%+v", rep)
	req := sandbox.Requirements{Seccomp: true, Cgroup: os.Geteuid() == 0}
	if err := rep.Meets(req); err != nil {
		t.Fatal(err)
	}
}

// unprivilegedDaemon is the daemon side run as uid 65534 by
// TestSandboxUnprivileged: it sandboxes a few calls and prints what it saw.
func unprivilegedDaemon() int {
	out := map[string]any{"uid": os.Geteuid()}
	defer func() {
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
	}()
	r := &SandboxRunner{Path: "/proc/self/exe", Env: []string{sandboxExecutorEnv + "=1"}, StateDir: os.Getenv("TOOLCAGE_TEST_STATE")}
	out["report"] = r.Check()
	p := NewPool(PoolConfig{Runners: map[string]Runner{"process": r}})
	defer p.Close()
	call := func(op sbxOp) (sbxResult, error) {
		args, _ := json.Marshal(op)
		res, err := p.Execute(context.Background(), sbxKey, &executors.Request{Kind: executors.KindShell, Args: args, Limits: executors.Limits{Timeout: 20 * time.Second}})
		var sr sbxResult
		if err == nil {
			json.Unmarshal(res.Value, &sr)
		}
		return sr, err
	}
	for _, c := range []struct {
		name string
		op   sbxOp
	}{
		{"status", sbxOp{Op: "status"}},
		{"mount", sbxOp{Op: "syscall", Name: "mount"}},
		{"tmp", sbxOp{Op: "sh", Cmd: "ls /tmp | wc -l; ls -d " + os.Getenv("TOOLCAGE_TEST_SECRET")}},
		// The bomb runs in a subshell and is counted with builtins only (at
		// its peak forks fail, the counting shell's too).
		{"bomb", sbxOp{Op: "sh", MS: 5000, Cmd: `b() { b | b & }; ( b ) 2>/dev/null & m=0; j=0; while [ $j -lt 300 ]; do n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; [ $n -gt $m ] && m=$n; j=$((j+1)); done; echo $m`}},
	} {
		res, err := call(c.op)
		if err != nil {
			out[c.name] = "error: " + err.Error()
			continue
		}
		out[c.name] = res
	}
	return 0
}

func TestSandboxUnprivileged(t *testing.T) {
	testutil.NeedRoot(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(secret), 0o755)
	state, err := os.MkdirTemp("", "toolcage-sandbox-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(state)
	if err := os.Chown(state, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	// Run this test binary as nobody, through a descriptor: its directory
	// is root's and closed.
	bin, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	cmd := exec.Command("/proc/self/fd/3")
	cmd.Args = []string{"host.test"}
	cmd.ExtraFiles = []*os.File{bin}
	cmd.Env = []string{unprivDaemonEnv + "=1", "TOOLCAGE_TEST_SECRET=" + secret, "TOOLCAGE_TEST_STATE=" + state, "TMPDIR=/tmp", "PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("unprivileged daemon: %v\n%s", err, stderr.String())
	}
	var got struct {
		UID    int
		Report sandbox.Report
		Status sbxResult
		Mount  sbxResult
		Tmp    sbxResult
		Bomb   sbxResult
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s\n%s", err, out, stderr.String())
	}
	t.Logf("unprivileged report: %+v", got.Report)
	if got.UID != 65534 || !got.Report.Unprivileged || got.Report.Cgroup != "none" {
		t.Fatalf("uid %d, report %+v", got.UID, got.Report)
	}
	if err := got.Report.Meets(sandbox.Requirements{Seccomp: true}); err != nil {
		t.Fatal(err)
	}
	if got.Status.Status["uid_map"] != "0 65534 1" || got.Status.Status["NoNewPrivs"] != "1" || got.Status.Status["Seccomp"] != "2" {
		t.Fatalf("status %v", got.Status.Status)
	}
	if got.Mount.Err != "operation not permitted" {
		t.Fatalf("mount: %q", got.Mount.Err)
	}
	if got.Tmp.Code == 0 || !strings.HasPrefix(got.Tmp.Out, "0\n") {
		t.Fatalf("host /tmp visible: %q", got.Tmp.Out)
	}
	// RLIMIT_NPROC alone (it counts tasks, threads included) holds the
	// bomb. The peak is sampled from /proc, where tasks that are exiting
	// still show, so it may read a little over the cap; an unbounded bomb
	// reaches thousands.
	n, _ := strconv.Atoi(strings.TrimSpace(got.Bomb.Out[strings.LastIndex(strings.TrimSpace(got.Bomb.Out), "\n")+1:]))
	if n == 0 || n > 2*sandbox.DefaultPids {
		t.Fatalf("fork bomb without cgroups: %d processes at peak (%+v)", n, got.Bomb)
	}
	t.Logf("fork bomb under RLIMIT_NPROC alone: at most %d processes at once", n)
}

// procMemory is one process's memory, from smaps_rollup: resident,
// proportional (shared pages split among their users) and private (USS).
type procMemory struct{ rss, pss, private int64 }

func readProcMemory(t testing.TB, pid int) procMemory {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		t.Fatal(err)
	}
	var m procMemory
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Rss:":
			m.rss += v << 10
		case "Pss:":
			m.pss += v << 10
		case "Private_Clean:", "Private_Dirty:":
			m.private += v << 10
		}
	}
	return m
}

// sandboxMemory returns the memory of a sandbox's launcher and executor.
func sandboxMemory(t testing.TB, launcher int) (init, exec procMemory) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", launcher, launcher))
	if err != nil {
		t.Fatal(err)
	}
	kids := strings.Fields(string(b))
	if len(kids) != 1 {
		t.Fatalf("launcher children %v, want the executor alone", kids)
	}
	child, _ := strconv.Atoi(kids[0])
	return readProcMemory(t, launcher), readProcMemory(t, child)
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func raceEnabled() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return true
			}
		}
	}
	return false
}

// TestSandboxIdleMemory measures warm, idle sandboxed executors, launched
// by themselves and by the lean launcher. Set TOOLCAGE_TEST_EXECUTOR_BINARY
// to a built cmd/toolcage-executor to measure the real one (kind js)
// instead of this test binary.
func TestSandboxIdleMemory(t *testing.T) {
	testutil.NeedSandbox(t)
	for _, launcher := range []string{"self", "lean"} {
		t.Run("launcher="+launcher, func(t *testing.T) {
			p, r, _ := newSandboxPool(t, sandbox.Config{})
			key := sbxKey
			if bin := os.Getenv("TOOLCAGE_TEST_EXECUTOR_BINARY"); bin != "" {
				r.Path, r.Env, key = bin, nil, NewKey(executors.KindJS, "process", nil)
			}
			if launcher == "lean" {
				r.Launcher = leanLauncher(t)
			}
			if err := p.Warm(context.Background(), key, 3); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			r.mu.Lock()
			var pids []int
			for _, sp := range r.live {
				pids = append(pids, sp.cmd.Pid())
			}
			r.mu.Unlock()
			for _, pid := range pids {
				in, ex := sandboxMemory(t, pid)
				t.Logf("idle: launcher RSS %.1f PSS %.1f USS %.1f MiB; executor RSS %.1f PSS %.1f USS %.1f MiB; sandbox PSS %.1f MiB",
					mib(in.rss), mib(in.pss), mib(in.private), mib(ex.rss), mib(ex.pss), mib(ex.private), mib(in.pss+ex.pss))
				if !raceEnabled() && in.pss+ex.pss > 20<<20 {
					t.Errorf("idle sandbox PSS %.1f MiB above 20 MiB", mib(in.pss+ex.pss))
				}
			}
		})
	}
}

// leanLauncher returns the toolcage-sandbox launcher: from
// TOOLCAGE_TEST_SANDBOX_LAUNCHER, or built for t (the build cache makes
// that a link).
func leanLauncher(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TOOLCAGE_TEST_SANDBOX_LAUNCHER"); p != "" {
		return p
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "toolcage-sandbox")
	cmd := exec.Command("go", "build", "-o", path, "github.com/toolcage/toolcage/cmd/toolcage-sandbox")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cannot build the lean launcher: %v\n%s", err, out)
	}
	return path
}

func TestSandboxLeanLauncher(t *testing.T) {
	testutil.NeedSandbox(t)
	p, r, _ := newSandboxPool(t, sandbox.Config{})
	r.Launcher = leanLauncher(t)
	st := mustCall(t, p, sbxKey, sbxOp{Op: "status"}).Status
	if st["NoNewPrivs"] != "1" || st["Seccomp"] != "2" || st["CapEff"] != "0000000000000000" {
		t.Fatalf("status %v", st)
	}
	// The count is taken by sh itself (a glob, no pipeline): with ls | grep
	// the two children raced, and ls could list /proc before grep was forked.
	if r := mustCall(t, p, sbxKey, sbxOp{Op: "sh", Cmd: "cat /proc/1/comm; set -- /proc/[0-9]*; echo $#"}); r.Out != "toolcage-init\n3\n" {
		t.Fatalf("processes: %q; want the launcher, the executor and sh", r.Out)
	}
}

// BenchmarkSandboxColdStart times starting one sandboxed executor up to a
// dispensed gRPC client, and killing it. Set TOOLCAGE_TEST_EXECUTOR_BINARY
// to a built cmd/toolcage-executor to time the real one (kind js).
func BenchmarkSandboxColdStart(b *testing.B) {
	testutil.NeedSandbox(b)
	for _, launcher := range []string{"self", "lean"} {
		b.Run("launcher="+launcher, func(b *testing.B) {
			p, r, _ := newSandboxPool(b, sandbox.Config{})
			key := sbxKey
			if bin := os.Getenv("TOOLCAGE_TEST_EXECUTOR_BINARY"); bin != "" {
				r.Path, r.Env, key = bin, nil, NewKey(executors.KindJS, "process", nil)
			}
			if launcher == "lean" {
				r.Launcher = leanLauncher(b)
			}
			for b.Loop() {
				if err := p.StartOne(context.Background(), key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSandboxExecute: a shell call and the sandbox reset the pool
// runs after it.
func BenchmarkSandboxExecute(b *testing.B) {
	testutil.NeedSandbox(b)
	p, _, _ := newSandboxPool(b, sandbox.Config{})
	args, _ := json.Marshal(sbxOp{Op: "echo"})
	req := func() *executors.Request {
		return &executors.Request{Kind: executors.KindShell, Args: args, Limits: executors.Limits{Timeout: time.Second}}
	}
	if _, err := p.Execute(context.Background(), sbxKey, req()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := p.Execute(context.Background(), sbxKey, req()); err != nil {
			b.Fatal(err)
		}
	}
}
