package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// envShell makes the test binary, as the sandboxed "executor", exec
// /bin/sh -c with its value: tests run shell scripts under every
// restriction without go-plugin.
const envShell = "TOOLCAGE_SANDBOX_TEST_SH"

// envDial makes it dial the Unix socket named by its value and print the
// error.
const envDial = "TOOLCAGE_SANDBOX_TEST_DIAL"

func TestMain(m *testing.M) {
	Init()
	if addr, ok := os.LookupEnv(envDial); ok {
		c, err := net.Dial("unix", addr)
		if err == nil {
			c.Close()
			fmt.Println("connected")
			os.Exit(0)
		}
		fmt.Println(err)
		os.Exit(1)
	}
	if name, ok := os.LookupEnv(envTry); ok {
		os.Exit(runTry(name))
	}
	if script, ok := os.LookupEnv(envShell); ok {
		os.Unsetenv(envShell)
		err := syscall.Exec("/bin/sh", []string{"sh", "-c", script}, os.Environ())
		fmt.Fprintln(os.Stderr, "exec sh:", err)
		os.Exit(126)
	}
	os.Exit(m.Run())
}

// sh runs script in a sandbox made from cfg and returns its output and exit code.
func sh(t testing.TB, cfg Config, script string) (string, int) {
	t.Helper()
	c := Command(cfg, "/proc/self/exe")
	c.Env = []string{envShell + "=" + script, "PATH=/usr/bin:/bin:/usr/sbin:/sbin"}
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	err := c.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code
}

func TestProbe(t *testing.T) {
	testutil.NeedSandbox(t)
	r := Probe()
	t.Logf("%+v", r)
	if err := r.Meets(Requirements{Seccomp: true}); err != nil {
		t.Fatal(err)
	}
	if !r.NetNS || !r.CgroupNS {
		t.Fatalf("net ns %v, cgroup ns %v", r.NetNS, r.CgroupNS)
	}
	if abi := landlockABI(); r.LandlockABI != abi {
		t.Fatalf("Landlock ABI %d applied, kernel has %d", r.LandlockABI, abi)
	}
	if os.Geteuid() == 0 && r.Cgroup == "none" {
		t.Fatalf("root, but no cgroup: %v", r.Notes)
	}
}

func TestCgroupV2Layout(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cgroup.controllers", "cpu memory pids\n")
	write("cgroup.subtree_control", "")
	fs := &cgroupFS{
		mounts: []cgroupMount{{dir: root, root: "/", v2: true}},
		own:    map[string]string{"": "/"},
	}
	// The kernel fills a new group's cgroup.controllers; a fake cannot, so
	// make the parent in advance as the kernel would.
	if err := os.Mkdir(filepath.Join(root, "toolcage"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("toolcage/cgroup.controllers", "memory pids\n")
	cs, err := newCgroupSet(fs, Config{MemoryBytes: 1 << 20, Pids: 7}, "sbx-1")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.closeFiles()
	read := func(p string) string {
		b, _ := os.ReadFile(filepath.Join(root, p))
		return string(b)
	}
	if cs.version != "v2" || cs.mem != filepath.Join(root, "toolcage/sbx-1") {
		t.Fatalf("set %+v", cs)
	}
	for p, want := range map[string]string{
		"toolcage/cgroup.subtree_control": "+memory +pids",
		"toolcage/sbx-1/memory.max":       "1048576",
		"toolcage/sbx-1/pids.max":         "7",
		"toolcage/sbx-1/memory.swap.max":  "0",
		"toolcage/sbx-1/memory.oom.group": "1",
		"cgroup.subtree_control":          "", // toolcage already had them
	} {
		if got := read(p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if cs.dir == nil || len(cs.procs) != 0 {
		t.Fatalf("v2 set: dir %v, procs %v; want the group's directory only", cs.dir, cs.procs)
	}
	if err := cs.check(); err != nil {
		t.Fatal(err)
	}
	write("toolcage/sbx-1/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
	var le *LimitError
	if err := cs.check(); !errors.As(err, &le) || le.Limit != "memory" {
		t.Fatalf("after an OOM kill: %v", err)
	}
	if err := cs.check(); err != nil {
		t.Fatalf("the same OOM kill reported twice: %v", err)
	}
	write("toolcage/sbx-1/pids.events", "max 4\n")
	if err := cs.check(); !errors.As(err, &le) || le.Limit != "pids" {
		t.Fatalf("after a refused fork: %v", err)
	}
}

func TestCgroupV2Unavailable(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("hugetlb\n"), 0o644)
	fs := &cgroupFS{mounts: []cgroupMount{{dir: root, root: "/", v2: true}}, own: map[string]string{"": "/"}}
	_, err := newCgroupSet(fs, Config{}, "x")
	if err == nil || !strings.Contains(err.Error(), "not available") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "toolcage")); err == nil {
		t.Fatal("made a group where no controller is available")
	}
}

func TestLauncherRefusesOutsideASandbox(t *testing.T) {
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = []string{envStage + "=" + stageLaunch, envConfig + `={"args":["x"]}`}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.Contains(string(out), "refusing") {
		t.Fatalf("launcher outside a sandbox: %v %s", err, out)
	}
}

func TestShellSandbox(t *testing.T) {
	testutil.NeedSandbox(t)
	tests := []struct {
		name   string
		cfg    Config
		script string
		code   int    // wanted exit code
		out    string // wanted substring of the output
	}{
		{"runs", Config{}, "echo hi; id -u; hostname", 0, "hi\n0\ntoolcage\n"},
		{"pid 1 is the launcher", Config{}, "cat /proc/1/comm", 0, "toolcage-init\n"},
		{"no exec from /tmp", Config{}, "cp /bin/true /tmp/t && chmod +x /tmp/t && /tmp/t", 126, "ermission denied"},
		{"read-only root", Config{}, "mkdir /x", 1, "Read-only"},
		{"no /etc/shadow", Config{}, "cat /etc/shadow", 1, "No such file"},
		{"work dir is home and cwd", Config{}, "pwd; echo $HOME; touch f && ls", 0, "/work\n/work\nf\n"},
		{"bind read-only", Config{Binds: []Bind{{Source: "/usr/share/doc", Target: "/doc"}}}, "ls /doc >/dev/null && touch /doc/x", 1, "Read-only"},
		{"loopback only", Config{}, "cat /proc/net/dev | tail -n +3 | cut -d: -f1", 0, "lo\n"},
		{"network kept", Config{Network: true}, "test -e /etc/resolv.conf || test ! -e /etc/resolv.conf && echo ok", 0, "ok"},
		{"limits", Config{CPUSeconds: 7, OpenFiles: 99, FileSizeBytes: 1 << 20}, "ulimit -t; ulimit -n; ulimit -f; ulimit -c", 0, "7\n99\n2048\n0\n"},
		{"no setuid", Config{}, "cat /proc/self/status | grep -E '^(NoNewPrivs|Seccomp|CapBnd|CapEff):'", 0,
			"CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := sh(t, tt.cfg, tt.script)
			t.Logf("exit %d: %s", code, out)
			if code != tt.code || !strings.Contains(out, tt.out) {
				t.Fatalf("exit %d, output %q; want exit %d with %q", code, out, tt.code, tt.out)
			}
		})
	}
}

// longRunning starts a sandbox whose "executor" is script, and returns it
// with its launcher's view of /tmp.
func longRunning(t *testing.T, cfg Config, script string) *Cmd {
	t.Helper()
	c := Command(cfg, "/proc/self/exe")
	c.Env = []string{envShell + "=" + script, "PATH=/usr/bin:/bin"}
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Kill()
		c.Wait()
		if t.Failed() {
			t.Logf("sandbox output: %s", out.String())
		}
	})
	return c
}

func TestReset(t *testing.T) {
	testutil.NeedRoot(t) // looks into the sandbox through /proc/<pid>/root
	c := longRunning(t, Config{}, `sleep 1000 & sleep 1000 & echo x >/tmp/x; mkdir -p /tmp/d/e/f; chmod 0 /tmp/d; echo y >/work/y; echo z >/dev/shm/z; exec sleep 1000`)
	root := fmt.Sprintf("/proc/%d/root", c.Pid())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(root + "/dev/shm/z"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the script did not run")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := c.CgroupCurrent(); n >= 0 && n < 3 {
		t.Fatalf("%d tasks before Reset", n)
	}
	if err := c.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/tmp", "/work", "/dev/shm"} {
		ents, err := os.ReadDir(root + d)
		if err != nil || len(ents) != 0 {
			t.Errorf("%s after Reset: %v %v", d, ents, err)
		}
	}
	procs, _ := os.ReadDir(root + "/proc")
	var pids []string
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err == nil {
			// The executor here is sleep, which never reaps: children it
			// had stay zombies, dead but listed.
			stat, _ := os.ReadFile(root + "/proc/" + p.Name() + "/stat")
			if !bytes.Contains(stat, []byte(") Z ")) {
				comm, _ := os.ReadFile(root + "/proc/" + p.Name() + "/comm")
				pids = append(pids, p.Name()+":"+strings.TrimSpace(string(comm)))
			}
		}
	}
	if len(pids) != 2 {
		t.Fatalf("processes after Reset: %v; want the launcher and the executor", pids)
	}
	// Only the launcher's locked thread, which forked the executor, is
	// confined; the threads that serve Seal and Reset are not.
	for i := 0; i < 20; i++ {
		if err := c.Reset(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", c.Pid()))
	confined := 0
	for _, task := range tasks {
		b, _ := os.ReadFile(task)
		if bytes.Contains(b, []byte("\nSeccomp:\t2\n")) {
			confined++
		}
	}
	if confined != 1 {
		t.Fatalf("%d of the launcher's %d threads are confined, want one", confined, len(tasks))
	}
}

func TestResetRetiresASpentExecutor(t *testing.T) {
	testutil.NeedSandbox(t)
	c := longRunning(t, Config{CPUSeconds: 2}, `i=0; while [ $i -lt 4000000 ]; do i=$((i+1)); done; exec sleep 100`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var err error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = c.Reset(ctx); err != nil {
			break
		}
	}
	var re *RetireError
	if !errors.As(err, &re) {
		t.Fatalf("Reset = %v, want a RetireError once over 1 s of CPU", err)
	}
	t.Log(err)
}

func TestAbstractSocketsScoped(t *testing.T) {
	testutil.NeedSandbox(t)
	if landlockABI() < 6 {
		t.Skip("Landlock ABI < 6: no scoping")
	}
	name := fmt.Sprintf("@toolcage-test-%d", os.Getpid())
	l, err := net.Listen("unix", name)
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
	// With the host network namespace, only Landlock stands between a
	// tool and the host's abstract sockets.
	c := Command(Config{Network: true}, "/proc/self/exe")
	c.Env = []string{envDial + "=" + name}
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	if !strings.Contains(out.String(), "operation not permitted") {
		t.Fatalf("dial %s from the sandbox: %q", name, out.String())
	}
}

func TestVerifyListenerRefusesAForeignSocket(t *testing.T) {
	testutil.NeedSandbox(t)
	c := longRunning(t, Config{}, "exec sleep 100")
	sock := filepath.Join(t.TempDir(), "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	if err := c.VerifyListener(sock); err == nil || !strings.Contains(err.Error(), "outside the sandbox") {
		t.Fatalf("VerifyListener on the daemon's own socket: %v", err)
	}
}

// TestBindNoSymlinks: a bind whose source was resolved when it was checked
// is bound as opened with no symlink followed; a source that has become a
// symlink since (or holds one on its path) is refused, not followed.
func TestBindNoSymlinks(t *testing.T) {
	testutil.NeedSandbox(t)
	base, err := os.MkdirTemp("/var/tmp", "tc-bind-")
	if err != nil {
		t.Skip("no /var/tmp:", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real")
	secret := filepath.Join(base, "secret")
	for _, d := range []string{real, secret} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(real, "f"), []byte("workspace file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secret, "f"), []byte("secret file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := sh(t, Config{Binds: []Bind{{Source: real, Target: "/workspace", NoSymlinks: true}}}, "cat /workspace/f; touch /workspace/g")
	if code != 1 || !strings.Contains(out, "workspace file") || !strings.Contains(out, "Read-only") {
		t.Fatalf("read-only bind: exit %d, %q", code, out)
	}
	out, code = sh(t, Config{Binds: []Bind{{Source: real, Target: "/workspace", Writable: true, NoSymlinks: true}}}, "touch /workspace/g && ls /workspace")
	if code != 0 || !strings.Contains(out, "g") {
		t.Fatalf("writable bind: exit %d, %q", code, out)
	}
	// The checked path swapped for a symlink to somewhere else.
	swapped := filepath.Join(base, "swapped")
	if err := os.Symlink(secret, swapped); err != nil {
		t.Fatal(err)
	}
	viaDir := filepath.Join(base, "via")
	if err := os.Symlink(base, viaDir); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{swapped, filepath.Join(viaDir, "secret")} {
		c := Command(Config{Binds: []Bind{{Source: src, Target: "/workspace", NoSymlinks: true}}}, "/proc/self/exe")
		c.Env = []string{envShell + "=cat /workspace/f", "PATH=/usr/bin:/bin"}
		var buf bytes.Buffer
		c.Stdout, c.Stderr = &buf, &buf
		err := c.Start()
		if err == nil {
			err = c.Wait()
		}
		if err == nil || strings.Contains(buf.String(), "secret file") {
			t.Fatalf("bind of %s through a symlink: err %v, output %q; want a refusal", src, err, buf.String())
		}
		t.Logf("%s refused: %v %s", src, err, buf.String())
	}
}

// TestBindID: a bind carrying the file its runner pinned (Bind.ID) is
// made only while its source is still that file; the same path naming
// another directory since (moved away, another made in its place) is
// refused before anything runs.
func TestBindID(t *testing.T) {
	testutil.NeedSandbox(t)
	base, err := os.MkdirTemp("/var/tmp", "tc-bindid-")
	if err != nil {
		t.Skip("no /var/tmp:", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	mkWS := func(content string) {
		if err := os.Mkdir(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "f"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkWS("pinned\n")
	id, err := PinID(ws)
	if err != nil {
		t.Fatal(err)
	}
	bind := []Bind{{Source: ws, Target: "/workspace", NoSymlinks: true, ID: &id}}
	if out, code := sh(t, Config{Binds: bind}, "cat /workspace/f"); code != 0 || out != "pinned\n" {
		t.Fatalf("the pinned directory: exit %d, %q", code, out)
	}
	if err := os.Rename(ws, ws+".moved"); err != nil {
		t.Fatal(err)
	}
	mkWS("REPLACED\n")
	c := Command(Config{Binds: bind}, "/proc/self/exe")
	c.Env = []string{envShell + "=cat /workspace/f", "PATH=/usr/bin:/bin"}
	var buf bytes.Buffer
	c.Stdout, c.Stderr = &buf, &buf
	err = c.Start()
	if err == nil {
		err = c.Wait()
	}
	if err == nil || strings.Contains(buf.String(), "REPLACED") || !strings.Contains(err.Error()+buf.String(), "another file") {
		t.Fatalf("a bind whose source names another directory now: err %v, output %q; want a refusal naming it", err, buf.String())
	}
}
