package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/toolcage/toolcage/internal/testutil"
	"golang.org/x/sys/unix"
)

// envTry makes the test binary, as the sandboxed "executor", run the
// attempt of that name (from attempts) and print its outcome: "ok", or
// "errno N" for a refused system call, or an error. Attempts that exec
// replace the process with /bin/echo and print marker when they get
// through.
const envTry = "TOOLCAGE_SANDBOX_TEST_TRY"

// marker is what an executed copy prints: output holding it means the
// copy ran.
const marker = "COPY-EXECUTED"

// attempts are what a tool might try from inside its sandbox. Each
// returns nil when the kernel let it through.
var attempts = map[string]func() error{
	// socket families
	"socket unix":           func() error { return sock(unix.AF_UNIX, unix.SOCK_STREAM, 0) },
	"socket inet":           func() error { return sock(unix.AF_INET, unix.SOCK_DGRAM, 0) },
	"socket inet6":          func() error { return sock(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0) },
	"socket netlink route":  func() error { return sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE) },
	"socket vsock stream":   func() error { return sock(unix.AF_VSOCK, unix.SOCK_STREAM, 0) },
	"socket vsock dgram":    func() error { return sock(unix.AF_VSOCK, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK, 0) },
	"socket vsock seqpkt":   func() error { return sock(unix.AF_VSOCK, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0) },
	"socket vsock high":     func() error { return rawErr(unix.SYS_SOCKET, 1<<32|unix.AF_VSOCK, unix.SOCK_STREAM, 0) },
	"socketpair vsock":      func() error { _, err := unix.Socketpair(unix.AF_VSOCK, unix.SOCK_STREAM, 0); return err },
	"socket packet":         func() error { return sock(unix.AF_PACKET, unix.SOCK_DGRAM, 0) },
	"socket alg":            func() error { return sock(unix.AF_ALG, unix.SOCK_SEQPACKET, 0) },
	"socket netlink audit":  func() error { return sock(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT) },
	"socket netlink uevent": func() error { return sock(unix.AF_NETLINK, unix.SOCK_DGRAM, unix.NETLINK_KOBJECT_UEVENT) },
	// system calls off the list
	"raw syscall 1000": func() error { return rawErr(1000, 0, 0, 0) },
	"raw newest":       func() error { return rawErr(unix.SYS_RSEQ_SLICE_YIELD, 0, 0, 0) },
	"memfd_secret":     func() error { return rawErr(unix.SYS_MEMFD_SECRET, 0, 0, 0) },
	"io_setup": func() error {
		var ctx uintptr
		return rawErr(unix.SYS_IO_SETUP, 64, uintptr(unsafe.Pointer(&ctx)), 0)
	},
	"mq_open": func() error {
		name := []byte("q\x00")
		return rawErr(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(&name[0])), unix.O_CREAT|unix.O_RDWR, 0o600)
	},
	"request_key": func() error {
		typ, desc := []byte("user\x00"), []byte("k\x00")
		return rawErr(unix.SYS_REQUEST_KEY, uintptr(unsafe.Pointer(&typ[0])), uintptr(unsafe.Pointer(&desc[0])), 0)
	},
	"rlimit nproc": func() error { return rlimitAbove(unix.RLIMIT_NPROC, DefaultPids+32) },
	"keyctl":       func() error { return rawErr(unix.SYS_KEYCTL, 0, 0, 0) },
	"add_key":      func() error { return rawErr(unix.SYS_ADD_KEY, 0, 0, 0) },
	// per-user kernel objects
	"inotify_init1":         func() error { return inotify(0) },
	"inotify_init1 flags":   func() error { return inotify(unix.IN_CLOEXEC | unix.IN_NONBLOCK) },
	"raise inotify share":   func() error { return os.WriteFile("/proc/sys/user/max_inotify_instances", []byte("1024"), 0) },
	"raise userns share":    func() error { return os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("10"), 0) },
	"lower memfd_noexec":    func() error { return os.WriteFile("/proc/sys/vm/memfd_noexec", []byte("0"), 0) },
	"fanotify_init":         func() error { return rawErr(unix.SYS_FANOTIFY_INIT, 0, 0, 0) },
	"rlimit sigpending":     func() error { return rlimitAbove(unix.RLIMIT_SIGPENDING, sigPendingMax) },
	"rlimit msgqueue":       func() error { return rlimitAbove(unix.RLIMIT_MSGQUEUE, 0) },
	"raise rlimit msgqueue": func() error { return unix.Setrlimit(unix.RLIMIT_MSGQUEUE, &unix.Rlimit{Cur: 1 << 20, Max: 1 << 20}) },
	// running what a tool wrote
	"memfd exec":             func() error { return memfdExec(0, false) },
	"memfd MFD_EXEC":         func() error { return memfdExec(unix.MFD_EXEC, false) },
	"memfd execveat":         func() error { return memfdExec(unix.MFD_CLOEXEC, true) },
	"memfd allow sealing":    func() error { return memfdExec(unix.MFD_ALLOW_SEALING|unix.MFD_EXEC, true) },
	"exec /tmp copy":         func() error { return fileExec("/tmp", false) },
	"execveat /tmp copy":     func() error { return fileExec("/tmp", true) },
	"exec /dev/shm copy":     func() error { return fileExec("/dev/shm", false) },
	"exec work dir copy":     func() error { return fileExec(DefaultWorkDir, false) },
	"execveat work dir":      func() error { return fileExec(DefaultWorkDir, true) },
	"exec /proc/self/fd":     func() error { return fdPathExec("/tmp") },
	"execveat O_TMPFILE":     func() error { return tmpfileExec("/tmp") },
	"execveat O_TMPFILE shm": func() error { return tmpfileExec("/dev/shm") },
	"mmap exec /tmp copy":    func() error { return mmapExec("/tmp") },
	"mmap exec work copy":    func() error { return mmapExec(DefaultWorkDir) },
	"ld.so /tmp copy":        func() error { return ldsoExec("/tmp") },
}

// helpers are attempts that other tests start and watch.
var helpers = map[string]func() error{
	"inotify hold": func() error {
		n := 0
		for ; n < 32; n++ {
			if _, err := unix.InotifyInit1(0); err != nil {
				break
			}
		}
		fmt.Printf("holding %d\n", n)
		time.Sleep(time.Hour)
		return nil
	},
	// getppid times a cheap system call under the filter, in ns.
	"getppid": func() error {
		const n = 1000000
		start := time.Now()
		for range n {
			unix.Getppid()
		}
		fmt.Printf("%d\n", time.Since(start).Nanoseconds()/n)
		return nil
	},
	// spin keeps 4 threads busy for 1.5 s, then prints the CPU time the
	// process got, in ms.
	"spin": func() error {
		runtime.GOMAXPROCS(4)
		stop := time.Now().Add(1500 * time.Millisecond)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for time.Now().Before(stop) {
				}
			})
		}
		wg.Wait()
		var ru unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &ru)
		fmt.Printf("cpu %d\n", (ru.Utime.Nano()+ru.Stime.Nano())/1e6)
		return nil
	},
}

func sock(family, typ, proto int) error {
	fd, err := unix.Socket(family, typ, proto)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func rawErr(nr, a, b, c uintptr) error {
	_, _, e := unix.Syscall(nr, a, b, c)
	return errnoErr(e)
}

// inotify opens as many instances as it can, up to 32 (enough to show a
// share above zero without starving the host if the share were missing),
// and fails with the error that stopped it unless that was the cap.
func inotify(flags int) error {
	for n := 0; n < 32; n++ {
		if _, err := unix.InotifyInit1(flags); err != nil {
			if n > 0 {
				return fmt.Errorf("%d instances, then %w", n, err)
			}
			return err
		}
	}
	return nil
}

func rlimitAbove(res int, max uint64) error {
	var r unix.Rlimit
	if err := unix.Getrlimit(res, &r); err != nil {
		return err
	}
	if r.Cur > max || r.Max > max {
		return nil // the attempt to have more than the share "succeeds"
	}
	return fmt.Errorf("limited to %d", r.Max)
}

func echoBytes() []byte {
	b, err := os.ReadFile("/bin/echo")
	if err != nil {
		fmt.Println("read /bin/echo:", err)
		os.Exit(3)
	}
	return b
}

// execFD runs the file open at fd: through execveat(fd, "", AT_EMPTY_PATH)
// or through /proc/self/fd/N. It returns only on failure.
func execFD(fd int, at bool) error {
	argv := []string{"echo", marker}
	if at {
		return execveat(fd, argv, os.Environ())
	}
	return syscall.Exec(fmt.Sprintf("/proc/self/fd/%d", fd), argv, os.Environ())
}

// execveat is execveat(fd, "", argv, env, AT_EMPTY_PATH).
func execveat(fd int, argv, env []string) error {
	a, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	e, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return err
	}
	empty := []byte{0}
	_, _, errno := unix.Syscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])),
		uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&e[0])), unix.AT_EMPTY_PATH, 0)
	return errnoErr(errno)
}

func memfdExec(flags int, at bool) error {
	fd, err := unix.MemfdCreate("x", flags)
	if err != nil {
		return fmt.Errorf("memfd_create: %w", err)
	}
	if _, err := unix.Write(fd, echoBytes()); err != nil {
		return err
	}
	unix.Fchmod(fd, 0o755)
	return execFD(fd, at)
}

// writeCopy writes /bin/echo to a new executable file in dir.
func writeCopy(dir string) (string, error) {
	p := filepath.Join(dir, fmt.Sprintf("copy-%d", os.Getpid()))
	return p, os.WriteFile(p, echoBytes(), 0o755)
}

func fileExec(dir string, at bool) error {
	p, err := writeCopy(dir)
	if err != nil {
		return err
	}
	if !at {
		return syscall.Exec(p, []string{"echo", marker}, os.Environ())
	}
	fd, err := unix.Open(p, unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	return execFD(fd, true)
}

func fdPathExec(dir string) error {
	p, err := writeCopy(dir)
	if err != nil {
		return err
	}
	fd, err := unix.Open(p, unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	return execFD(fd, false)
}

func tmpfileExec(dir string) error {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR, 0o755)
	if err != nil {
		return fmt.Errorf("O_TMPFILE: %w", err)
	}
	if _, err := unix.Write(fd, echoBytes()); err != nil {
		return err
	}
	return execFD(fd, true)
}

func mmapExec(dir string) error {
	p, err := writeCopy(dir)
	if err != nil {
		return err
	}
	fd, err := unix.Open(p, unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	m, err := unix.Mmap(fd, 0, 4096, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE)
	if err == nil {
		unix.Munmap(m)
	}
	return err
}

// ldsoExec runs a copy through the dynamic loader, which maps it
// executable instead of exec'ing it.
func ldsoExec(dir string) error {
	loaders, _ := filepath.Glob("/lib*/ld-linux*.so.*")
	if len(loaders) == 0 {
		return errors.New("no dynamic loader here")
	}
	p, err := writeCopy(dir)
	if err != nil {
		return err
	}
	return syscall.Exec(loaders[0], []string{"ld.so", p, marker}, os.Environ())
}

// runTry runs one attempt in the sandbox and reports it on stdout.
func runTry(name string) int {
	f, ok := attempts[name]
	if !ok {
		f, ok = helpers[name]
	}
	if !ok {
		fmt.Println("no attempt", name)
		return 2
	}
	err := f()
	var errno unix.Errno
	switch {
	case err == nil:
		fmt.Println("ok")
		return 0
	case errors.As(err, &errno):
		fmt.Printf("errno %d: %v\n", int(errno), err)
	default:
		fmt.Println("error:", err)
	}
	return 1
}

// try runs attempt name in a sandbox made from cfg and returns its output.
func try(t *testing.T, cfg Config, name string) string {
	t.Helper()
	c := Command(cfg, "/proc/self/exe")
	c.Env = []string{envTry + "=" + name, "PATH=/usr/bin:/bin"}
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	err := c.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String())
}

func errnoOut(e unix.Errno) string { return fmt.Sprintf("errno %d:", int(e)) }

// TestConfinement runs every attempt in a real sandbox: socket families a
// network namespace does not separate, system calls off the allowlist,
// per-user kernel objects charged to the host, and executing what the
// tool wrote, each in several spellings.
func TestConfinement(t *testing.T) {
	testutil.NeedSandbox(t)
	if !seccompSupported {
		t.Skip("no seccomp table for this architecture")
	}
	refused := "refused" // any error
	tests := []struct {
		name string
		want string // "ok", refused, or a prefix of the output
	}{
		{"socket unix", "ok"},
		{"socket inet", "ok"},
		{"socket inet6", "ok"},
		{"socket netlink route", "ok"},
		{"socket vsock stream", errnoOut(unix.EAFNOSUPPORT)},
		{"socket vsock dgram", errnoOut(unix.EAFNOSUPPORT)},
		{"socket vsock seqpkt", errnoOut(unix.EAFNOSUPPORT)},
		{"socket vsock high", errnoOut(unix.EAFNOSUPPORT)},
		{"socketpair vsock", errnoOut(unix.EAFNOSUPPORT)},
		{"socket packet", errnoOut(unix.EAFNOSUPPORT)},
		{"socket alg", errnoOut(unix.EAFNOSUPPORT)},
		{"socket netlink audit", errnoOut(unix.EAFNOSUPPORT)},
		{"socket netlink uevent", errnoOut(unix.EAFNOSUPPORT)},
		{"raw syscall 1000", errnoOut(unix.ENOSYS)},
		{"raw newest", errnoOut(unix.ENOSYS)},
		{"memfd_secret", errnoOut(unix.ENOSYS)},
		{"io_setup", errnoOut(unix.ENOSYS)},
		{"mq_open", errnoOut(unix.ENOSYS)},
		{"keyctl", errnoOut(unix.EPERM)},
		{"request_key", errnoOut(unix.EPERM)},
		{"rlimit nproc", refused},
		{"add_key", errnoOut(unix.EPERM)},
		{"inotify_init1", errnoOut(unix.EMFILE)},
		{"inotify_init1 flags", errnoOut(unix.EMFILE)},
		{"raise inotify share", refused},
		{"raise userns share", refused},
		{"lower memfd_noexec", refused},
		{"fanotify_init", errnoOut(unix.EPERM)},
		{"rlimit sigpending", refused},
		{"rlimit msgqueue", refused},
		{"raise rlimit msgqueue", refused},
		{"memfd exec", refused},
		{"memfd MFD_EXEC", refused},
		{"memfd execveat", refused},
		{"memfd allow sealing", refused},
		{"exec /tmp copy", errnoOut(unix.EACCES)},
		{"execveat /tmp copy", errnoOut(unix.EACCES)},
		{"exec /dev/shm copy", errnoOut(unix.EACCES)},
		{"exec work dir copy", errnoOut(unix.EACCES)},
		{"execveat work dir", errnoOut(unix.EACCES)},
		{"exec /proc/self/fd", errnoOut(unix.EACCES)},
		{"execveat O_TMPFILE", errnoOut(unix.EACCES)},
		{"execveat O_TMPFILE shm", errnoOut(unix.EACCES)},
		{"mmap exec /tmp copy", errnoOut(unix.EPERM)},
		{"mmap exec work copy", errnoOut(unix.EPERM)},
		{"ld.so /tmp copy", refused},
	}
	if len(tests) != len(attempts) {
		t.Fatalf("%d cases for %d attempts", len(tests), len(attempts))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := try(t, Config{}, tt.name)
			t.Log(out)
			if strings.Contains(out, marker) {
				t.Fatalf("a copy the tool wrote ran: %q", out)
			}
			switch tt.want {
			case "ok":
				if out != "ok" {
					t.Fatalf("got %q, want it allowed", out)
				}
			case refused:
				if out == "ok" || out == "" {
					t.Fatalf("got %q, want it refused", out)
				}
			default:
				if !strings.HasPrefix(out, tt.want) {
					t.Fatalf("got %q, want %q…", out, tt.want)
				}
			}
		})
	}
}

// TestInotifyShare holds as many inotify instances as a sandbox can get
// and checks, while it holds them, that this (host) process still gets
// one: a sandbox's instances are charged to the host uid that owns its
// user namespace, root for a root daemon.
func TestInotifyShare(t *testing.T) {
	testutil.NeedSandbox(t)
	c := Command(Config{}, "/proc/self/exe")
	c.Env = []string{envTry + "=inotify hold"}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Kill(); c.Wait() })
	line := make([]byte, 128)
	n, _ := out.Read(line)
	held := strings.TrimSpace(string(line[:n]))
	if held != "holding 0" {
		t.Errorf("sandbox: %q, want it to hold no inotify instance", held)
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("host inotify_init1 while a sandbox holds what it could get: %v", err)
	}
	unix.Close(fd)
}

// favour gives the sandbox's cpu group the highest weight, so that on a
// busy machine the quota, not the competition, is what holds it back.
func favour(t *testing.T, c *Cmd) {
	t.Helper()
	err := os.WriteFile(filepath.Join(c.cg.cpu, "cpu.shares"), []byte("262144"), 0)
	if errors.Is(err, os.ErrNotExist) {
		err = os.WriteFile(filepath.Join(c.cg.cpu, "cpu.weight"), []byte("10000"), 0)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestCPUQuota spins more threads, and then more processes, than the
// sandbox has CPUs, and checks that the quota held them: the cgroup
// counted throttled periods, and the CPU time they got stays near the
// quota (bounds generous: the machine is shared).
func TestCPUQuota(t *testing.T) {
	testutil.NeedRoot(t) // cgroups
	cfg := Config{CPUs: 0.25}
	t.Run("threads", func(t *testing.T) {
		c := Command(cfg, "/proc/self/exe")
		c.Env = []string{envTry + "=spin"}
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if c.cg == nil || c.cg.cpu == "" {
			c.Kill()
			c.Wait()
			t.Fatalf("no CPU quota: %v", c.Report().Notes)
		}
		favour(t, c)
		var periods int64
		var throttled time.Duration
		done := make(chan error, 1)
		go func() { done <- c.cmd.Wait() }()
		// Read cpu.stat before Wait removes the group.
		for waiting := true; waiting; {
			select {
			case <-done:
				waiting = false
			case <-time.After(50 * time.Millisecond):
				if p, d := c.cg.throttled(); p >= 0 {
					periods, throttled = p, d
				}
			}
		}
		c.cleanup()
		var ms int64
		if _, err := fmt.Sscanf(out.String(), "cpu %d", &ms); err != nil {
			t.Fatalf("output %q: %v", out.String(), err)
		}
		t.Logf("4 threads for 1.5 s at 0.25 CPU: %d ms of CPU, throttled %d periods for %v", ms, periods, throttled)
		if periods == 0 {
			t.Error("the cgroup never throttled the sandbox")
		}
		if limit := int64(1500*0.25*1.6) + 150; ms > limit {
			t.Errorf("%d ms of CPU in 1.5 s, want at most %d", ms, limit)
		}
	})
	t.Run("processes", func(t *testing.T) {
		c := longRunning(t, cfg, `for i in 1 2 3 4 5 6; do (while :; do :; done) & done; exec sleep 100`)
		if c.cg == nil || c.cg.cpu == "" {
			t.Fatalf("no CPU quota: %v", c.Report().Notes)
		}
		favour(t, c)
		start := time.Now()
		time.Sleep(1500 * time.Millisecond)
		periods, throttled := c.cg.throttled()
		// CPU time of every process in the group, by its host pid.
		procs, err := os.ReadFile(filepath.Join(c.cg.cpu, "cgroup.procs"))
		if err != nil {
			t.Fatal(err)
		}
		var ms int64
		for _, f := range strings.Fields(string(procs)) {
			var pid int
			fmt.Sscan(f, &pid)
			ms += cpuMillis(pid)
		}
		wall := time.Since(start)
		t.Logf("6 shell loops for %v at 0.25 CPU: %d ms of CPU, throttled %d periods for %v", wall, ms, periods, throttled)
		if periods == 0 {
			t.Error("the cgroup never throttled the sandbox")
		}
		if limit := int64(float64(wall.Milliseconds())*0.25*1.6) + 150; ms > limit {
			t.Errorf("%d ms of CPU in %v, want at most %d", ms, wall, limit)
		}
	})
}

// BenchmarkSyscallCost reports what the seccomp program adds to a cheap
// system call: getppid in a sandbox against getppid here.
func BenchmarkSyscallCost(b *testing.B) {
	testutil.NeedSandbox(b)
	for range b.N {
		c := Command(Config{}, "/proc/self/exe")
		c.Env = []string{envTry + "=getppid"}
		var out bytes.Buffer
		c.Stdout = &out
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		if err := c.Wait(); err != nil {
			b.Fatal(err, out.String())
		}
		var in int64
		fmt.Sscan(out.String(), &in)
		start := time.Now()
		for range 1000000 {
			unix.Getppid()
		}
		b.ReportMetric(float64(in), "ns/sandboxed-getppid")
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/1e6, "ns/host-getppid")
	}
}
