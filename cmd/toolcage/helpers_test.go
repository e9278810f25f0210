package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// executorPath is a real toolcage-executor, built once for these tests (or
// the one `make build` left in TOOLCAGE_BIN_DIR).
var executorPath string

// asCLIEnv makes this test binary run as the toolcage CLI (see cliProcess).
const asCLIEnv = "TOOLCAGE_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLIEnv) == "1" {
		os.Unsetenv(asCLIEnv)
		main()
	}
	// The CLI and the daemon both read TOOLCAGE_* variables; the tests say
	// everything they mean with flags.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "TOOLCAGE_") && k != "TOOLCAGE_BIN_DIR" {
			os.Unsetenv(k)
		}
	}
	dir, err := os.MkdirTemp("", "tc-exe")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	executorPath, err = testutil.Executor(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// liveDaemon is a real daemon serving in this process.
type liveDaemon struct {
	socket  string
	dataDir string
}

// startDaemon runs a real daemon (SQLite store, executor processes) on a
// fresh socket and data dir, stopped when the test ends. It returns the
// socket path.
func startDaemon(t *testing.T) string {
	t.Helper()
	return launchDaemon(t, nil).socket
}

// launchDaemon is startDaemon with the configuration changed by mod.
func launchDaemon(t *testing.T, mod func(*daemon.Config)) *liveDaemon {
	t.Helper()
	// Unix socket paths are short; t.TempDir() can be too long.
	sockDir, err := os.MkdirTemp("", "tc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	ld := &liveDaemon{socket: filepath.Join(sockDir, "d.sock"), dataDir: t.TempDir()}
	cfg, err := daemon.LoadConfig("", map[string]any{
		"socket": ld.socket, "data_dir": ld.dataDir,
		"executor.path": executorPath, "shutdown_timeout": "10s",
	})
	if err != nil {
		t.Fatal(err)
	}
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	log := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	d, err := daemon.New(ctx, cfg, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("daemon Serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("daemon did not stop within 30s")
		}
		d.Close()
	})
	return ld
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// result is one run of the CLI.
type result struct {
	code     int
	out, err string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.out, r.err)
}

// cliMu serializes in-process runs of the CLI: urfave/cli v2 keeps state in
// package variables (its help flag and help command), so two runs at once in
// one process race. The real CLI runs once per process; a test that needs
// two at once runs one with cliProcess.
var cliMu sync.Mutex

// runCLI runs the CLI in-process with the given stdin.
func runCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	cliMu.Lock()
	defer cliMu.Unlock()
	code := runWithInput(context.Background(), append([]string{"toolcage"}, args...), strings.NewReader(stdin), &out, &errb)
	return result{code: code, out: out.String(), err: errb.String()}
}

// cliProcess returns the CLI as a process of its own: this test binary,
// which TestMain turns into toolcage. Its stdout and stderr go to out and
// errb.
func cliProcess(out, errb io.Writer, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), asCLIEnv+"=1")
	cmd.Stdout, cmd.Stderr = out, errb
	return cmd
}

// runProcess runs the CLI as a process of its own and waits for it. A
// process that could not run at all exits -1.
func runProcess(args ...string) result {
	var out, errb bytes.Buffer
	cmd := cliProcess(&out, &errb, args...)
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		return result{code: -1, err: err.Error()}
	}
	return result{code: cmd.ProcessState.ExitCode(), out: out.String(), err: errb.String()}
}

// tc runs the CLI against the daemon on sock.
func tc(t *testing.T, sock string, args ...string) result {
	t.Helper()
	return runCLI(t, "", append([]string{"--socket", sock}, args...)...)
}

// tcIn is tc with stdin.
func tcIn(t *testing.T, sock, stdin string, args ...string) result {
	t.Helper()
	return runCLI(t, stdin, append([]string{"--socket", sock}, args...)...)
}

// mustOK runs the CLI and stops the test unless it exits 0.
func mustOK(t *testing.T, sock string, args ...string) result {
	t.Helper()
	r := tc(t, sock, args...)
	if r.code != exitOK {
		t.Fatalf("toolcage %s: %v", strings.Join(args, " "), r)
	}
	return r
}

// wantExit checks the exit status and that stderr holds each of wantErr.
func wantExit(t *testing.T, r result, code int, wantErr ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d\n%v", r.code, code, r)
	}
	for _, w := range wantErr {
		if !strings.Contains(r.err, w) {
			t.Errorf("stderr lacks %q\n%v", w, r)
		}
	}
}

// createTool registers a definition through the CLI (stdin), as the user
// unless extra global flags say otherwise.
func createTool(t *testing.T, sock, def string, global ...string) api.Tool {
	t.Helper()
	args := append(append([]string{"--socket", sock}, global...), "tools", "create", "-f", "-", "--json")
	r := runCLI(t, def, args...)
	if r.code != exitOK {
		t.Fatalf("creating a tool: %v", r)
	}
	return decodeStrict[api.Tool](t, r.out)
}

// decodeStrict decodes CLI output that must be exactly one JSON value of
// type T: no unknown fields, nothing after it.
func decodeStrict[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("output is not a %T: %v\n%s", v, err, out)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("output has more after the %T: %q", v, out)
	}
	if !strings.HasSuffix(out, "\n") || strings.HasPrefix(out, "{") && !strings.HasPrefix(out, "{}") && !strings.HasPrefix(out, "{\n  \"") {
		t.Fatalf("output is not indented JSON ending in a newline: %q", out)
	}
	return v
}

// audit returns the audit records of tool, newest first, through the CLI.
func audit(t *testing.T, sock, tool string) []api.Execution {
	t.Helper()
	args := []string{"audit", "--json", "--limit", "1000"}
	if tool != "" {
		args = append(args, "--tool", tool)
	}
	return decodeStrict[api.ExecutionList](t, mustOK(t, sock, args...).out).Executions
}

// showTool returns a tool's state through the CLI.
func showTool(t *testing.T, sock, name string) api.Tool {
	t.Helper()
	return decodeStrict[api.Tool](t, mustOK(t, sock, "tools", "show", name, "--json").out)
}

// callLine matches the line naming a call on stderr and captures its id.
var callLine = regexp.MustCompile(`(?m)^call (c[0-9a-f]{16})( · v[0-9]+)? · [0-9]+(\.[0-9])? ms$`)

// callIDOf returns the call id named on stderr: the call line, or the
// "call id:" line of an error.
func callIDOf(t *testing.T, r result) string {
	t.Helper()
	if m := callLine.FindStringSubmatch(r.err); m != nil {
		return m[1]
	}
	if m := regexp.MustCompile(`(?m)^  call id: (c[0-9a-f]{16})$`).FindStringSubmatch(r.err); m != nil {
		return m[1]
	}
	t.Fatalf("no call id on stderr\n%v", r)
	return ""
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %v: %s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// writeFile writes content to a new file in a temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// golden compares got with testdata/name.golden, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (go test -update rewrites it)\n--- got:\n%s\n--- want:\n%s", name, path, got, want)
	}
}

// noSocket is a socket path where nothing listens.
func noSocket(t *testing.T) string {
	return filepath.Join(t.TempDir(), "none.sock")
}
