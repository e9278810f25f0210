//go:build linux

package host

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/image"
	"github.com/toolcage/toolcage/executors/image/imagetest"
	"github.com/toolcage/toolcage/executors/sandbox"
	"github.com/toolcage/toolcage/internal/testutil"
)

// engineExecutor is the real toolcage-executor the engine tests' image
// is built from: TOOLCAGE_BIN_DIR's, or one built into the test's temp
// dir (the build cache makes the second build cheap).
func engineExecutor(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("TOOLCAGE_BIN_DIR"); bin != "" {
		if p := filepath.Join(bin, "toolcage-executor"); fileExists(p) {
			return p
		}
	}
	out := filepath.Join(t.TempDir(), "toolcage-executor")
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", "build", "-o", out, "./cmd/toolcage-executor")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building toolcage-executor: %v\n%s", err, b)
	}
	return out
}

func sleep(d time.Duration) error { time.Sleep(d); return nil }

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// newEngineRunner is a DockerRunner on the real engine with the executor
// image, as the daemon makes it.
func newEngineRunner(t testing.TB) *DockerRunner {
	t.Helper()
	_, cli := imagetest.Engine(t)
	// An image of its own per test (imagetest's is per test binary, and
	// this package's TestMain does not remove it).
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	id, err := image.Build(ctx, cli, image.Sources{Executor: engineExecutor(t)}, image.Repository+":test-"+strconv.Itoa(os.Getpid())+"-"+strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := imagetest.RemoveImage(cli, id); err != nil {
			t.Error(err)
		}
	})
	state, err := os.MkdirTemp("", "tc-docker-state-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	if err := os.Chmod(state, 0o700); err != nil {
		t.Fatal(err)
	}
	r := &DockerRunner{Client: cli, Image: id, StateDir: state, Limits: ContainerLimits{MemoryBytes: 128 << 20, Pids: 64}}
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

// mountTree makes dir/ws and dir/secret, each holding a file "marker"
// that names it, readable by the sandbox's ids, and returns dir.
func mountTree(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tc-mount-race-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "ws"), filepath.Join(dir, "secret")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"ws", "secret"} {
		if err := os.WriteFile(filepath.Join(dir, name, "marker"), []byte("MARK-"+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// catMarker runs `cat /workspace/marker` on an executor of key and
// returns its stdout.
func catMarker(p *Pool, key Key, argv []string, args string) (string, error) {
	res, err := p.Execute(context.Background(), key, &executors.Request{
		CallID: "c", Tool: "cat", Kind: key.Kind, Args: json.RawMessage(args), Permissions: []string{"filesystem"},
		Limits: executors.Limits{Timeout: 20 * time.Second},
		Shell:  &executors.ShellCall{Argv: argv},
	})
	if err != nil {
		return "", err
	}
	var out struct {
		Stdout string `json:"stdout"`
		Out    string `json:"out"` // the sandbox test executor's
	}
	if err := json.Unmarshal(res.Value, &out); err != nil {
		return "", err
	}
	return out.Stdout + out.Out, nil
}

// TestDockerMountSwapRace is the red team's race: a mount source inside a
// directory the agent can write is swapped for a symlink (to a directory
// it was never granted) over and over while containers start. The engine
// must never bind the symlink's target: each start either binds the
// workspace itself or is refused, whenever the swap lands.
func TestDockerMountSwapRace(t *testing.T) {
	r := newEngineRunner(t)
	for _, mode := range []struct {
		name string
		// handPaths: the engine gets the source path (a daemon that
		// cannot mount), and only the check of what the container got
		// stands between the swap and a call.
		handPaths bool
	}{{"private bind", false}, {"source path, container checked", true}} {
		t.Run(mode.name, func(t *testing.T) {
			r.handPaths = mode.handPaths
			defer func() { r.handPaths = false }()
			mountSwapRace(t, r)
		})
	}
}

func mountSwapRace(t *testing.T, r *DockerRunner) {
	dir := mountTree(t)
	ws, secret := filepath.Join(dir, "ws"), filepath.Join(dir, "secret")
	key := NewKey(executors.KindShell, "docker", []string{"filesystem"}).WithMounts([]Mount{{Source: ws, Target: "/workspace"}})
	key.Reset = true

	stop := make(chan struct{})
	var swaps atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// The agent's swap: the directory moves away, a symlink
			// takes its name for a while, and it comes back for a while.
			for _, err := range []error{os.Rename(ws, ws+".real"), os.Symlink(secret, ws), sleep(time.Millisecond), os.Remove(ws), os.Rename(ws+".real", ws)} {
				if err != nil {
					t.Errorf("swap: %v", err)
					return
				}
			}
			swaps.Add(1)
			time.Sleep(time.Millisecond)
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()

	var ok, refused, failed int
	// Starts go on until five have bound the workspace: a refusal costs
	// microseconds, so the count of tries means nothing, the time does.
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; ok < 5 && time.Now().Before(deadline); i++ {
		// A pool per start: every call is a cold start, as after a
		// retirement, so each is a fresh walk of the path by the engine.
		p := NewPool(PoolConfig{Runners: map[string]Runner{"docker": r}, Logger: slog.New(slog.DiscardHandler)})
		out, err := catMarker(p, key, []string{"cat", "/workspace/marker"}, `{}`)
		p.Close()
		switch {
		case strings.Contains(out, "MARK-secret"):
			t.Fatalf("start %d: a container bound the symlink's target (%q) after %d swaps", i, out, swaps.Load())
		case err == nil && out == "MARK-ws\n":
			ok++
		case errdefs.CodeOf(err) == errdefs.PolicyDenied:
			refused++
			if !strings.Contains(err.Error(), "symlink") {
				t.Logf("start %d: %v", i, err) // the container's view refused
			}
			time.Sleep(time.Duration(i%7) * 100 * time.Microsecond)
		case err != nil:
			// The swap can also leave no file at the path when the
			// engine looks (it fails the create or start).
			failed++
			t.Logf("start %d: %v", i, err)
		default:
			t.Fatalf("start %d: %q", i, out)
		}
	}
	t.Logf("%d swaps: %d starts bound the workspace, %d refused, %d failed", swaps.Load(), ok, refused, failed)
	if ok == 0 {
		t.Fatal("no start bound the workspace while the swaps ran")
	}
}

// TestWarmExecutorMountChanged: an idle executor whose mount source names
// another file now (the directory replaced; swapped for a symlink) is
// retired, not handed the next call; the call gets a fresh executor on
// what the path names now, or is refused. The same in both isolations.
func TestWarmExecutorMountChanged(t *testing.T) {
	type isolation struct {
		name string
		pool func(t *testing.T) (*Pool, func() int64)
		argv []string
		args string
	}
	isos := []isolation{
		{"docker", func(t *testing.T) (*Pool, func() int64) {
			r := newEngineRunner(t)
			p := NewPool(PoolConfig{Runners: map[string]Runner{"docker": r}, Logger: slog.New(slog.DiscardHandler)})
			t.Cleanup(func() { p.Close() })
			return p, r.Starts
		}, []string{"cat", "/workspace/marker"}, `{}`},
		{"process", func(t *testing.T) (*Pool, func() int64) {
			testutil.NeedSandbox(t)
			p, r, _ := newSandboxPool(t, sandbox.Config{})
			return p, r.Starts
		}, nil, `{"op":"sh","cmd":"cat /workspace/marker"}`},
	}
	for _, iso := range isos {
		t.Run(iso.name, func(t *testing.T) {
			p, starts := iso.pool(t)
			dir := mountTree(t)
			ws, secret := filepath.Join(dir, "ws"), filepath.Join(dir, "secret")
			key := NewKey(executors.KindShell, iso.name, []string{"filesystem"}).WithMounts([]Mount{{Source: ws, Target: "/workspace"}})
			key.Reset = true
			call := func() (string, error) { return catMarker(p, key, iso.argv, iso.args) }
			want := func(step, marker string, started int64) {
				t.Helper()
				before := starts()
				out, err := call()
				if err != nil || out != marker+"\n" {
					t.Fatalf("%s: %q %v, want %s", step, out, err, marker)
				}
				if n := starts() - before; n != started {
					t.Fatalf("%s: %d executors started, want %d", step, n, started)
				}
			}
			want("first call", "MARK-ws", 1)
			want("warm call", "MARK-ws", 0)
			// The directory is replaced by another one of the same name.
			if err := os.Rename(ws, ws+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "marker"), []byte("MARK-new\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			want("after the directory was replaced", "MARK-new", 1)
			// Swapped for a symlink: the warm executor is retired and the
			// fresh start refused.
			if err := os.Rename(ws, ws+".new"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(secret, ws); err != nil {
				t.Fatal(err)
			}
			before := starts()
			if out, err := call(); errdefs.CodeOf(err) != errdefs.PolicyDenied || !strings.Contains(err.Error(), "symlink") {
				t.Fatalf("after the swap for a symlink: %q %v, want policy_denied naming the symlink", out, err)
			}
			if n := starts() - before; n != 0 {
				t.Fatalf("%d executors started on a symlinked source", n)
			}
			// Back as it was: a fresh executor on the directory again.
			if err := os.Remove(ws); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(ws+".new", ws); err != nil {
				t.Fatal(err)
			}
			want("swapped back", "MARK-new", 1)
			want("warm again", "MARK-new", 0)
		})
	}
}

// BenchmarkMountColdStart times a cold start of an executor with one
// workspace mount, in a container and in the process sandbox: what the
// pinning (and, for docker, the private bind and the check of the
// container's view) costs is the difference to the same benchmark on the
// runner without it.
func BenchmarkMountColdStart(b *testing.B) {
	for _, iso := range []string{"docker", "process"} {
		b.Run(iso, func(b *testing.B) {
			var p *Pool
			if iso == "docker" {
				r := newEngineRunner(b)
				p = NewPool(PoolConfig{Runners: map[string]Runner{"docker": r}, Logger: slog.New(slog.DiscardHandler)})
				b.Cleanup(func() { p.Close() })
			} else {
				testutil.NeedSandbox(b)
				p, _, _ = newSandboxPool(b, sandbox.Config{})
			}
			ws := filepath.Join(mountTree(b), "ws")
			key := NewKey(executors.KindShell, iso, []string{"filesystem"}).WithMounts([]Mount{{Source: ws, Target: "/workspace"}})
			key.Reset = true
			for b.Loop() {
				if err := p.StartOne(context.Background(), key); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPrivateBindsTakenDownAtClose: a private bind still up when the
// runner closes (a start under way) is unmounted, and the removal of the
// state dir after it never reaches through into the workspace; a read-only
// mount's bind is read-only; after Close no new bind is made.
func TestPrivateBindsTakenDownAtClose(t *testing.T) {
	dir := mountTree(t)
	ws := filepath.Join(dir, "ws")
	state, err := os.MkdirTemp("", "tc-docker-state-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(state)
	r := &DockerRunner{StateDir: state}
	f, _, err := sandbox.Pin(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ro, err := r.privateBind(f, true)
	if err != nil || ro == "" {
		t.Fatalf("privateBind as root: %q %v", ro, err)
	}
	if err := os.WriteFile(filepath.Join(ro, "x"), nil, 0o644); err == nil || !errors.Is(err, syscall.EROFS) {
		t.Fatalf("a write through a read-only private bind: %v, want EROFS", err)
	}
	rw, err := r.privateBind(f, false)
	if err != nil || rw == "" {
		t.Fatalf("privateBind: %q %v", rw, err)
	}
	if b, err := os.ReadFile(filepath.Join(rw, "marker")); err != nil || string(b) != "MARK-ws\n" {
		t.Fatalf("through the private bind: %q %v", b, err)
	}
	r.unbindAll()
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "marker")); err != nil || string(b) != "MARK-ws\n" {
		t.Fatalf("the workspace after the state dir was removed: %q %v", b, err)
	}
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if mp, err := r.privateBind(f, false); errdefs.CodeOf(err) != errdefs.Unavailable {
		t.Fatalf("privateBind after Close: %q %v, want unavailable", mp, err)
	}
}
