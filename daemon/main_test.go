package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/apiserver"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/executors/image/imagetest"
	"github.com/toolcage/toolcage/internal/testutil"
)

// executorPath is a real toolcage-executor built for these tests (or the one
// `make build` left in TOOLCAGE_BIN_DIR).
var executorPath string

func TestMain(m *testing.M) {
	if os.Getenv(peerHelperEnv) != "" {
		os.Exit(peerHelper())
	}
	dir, err := os.MkdirTemp("", "tc-exe")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	executorPath, err = testutil.Executor(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	// No executor container of this test binary's daemons may be left.
	if err := imagetest.Cleanup(host.LabelOwner + "=" + host.OwnerLabel()); err != nil {
		fmt.Fprintln(os.Stderr, "docker cleanup:", err)
		if code == 0 {
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

type testDaemon struct {
	d      *Daemon
	cfg    Config
	client *api.Client
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	// serveErr is what Serve returned, once stop has run.
	serveErr error
}

// startDaemon runs a real daemon on a fresh socket and data dir.
func startDaemon(t testing.TB, dataDir string, mod func(*Config), opts ...Option) *testDaemon {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "tc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	cfg, err := LoadConfig("", map[string]any{
		"socket": filepath.Join(sockDir, "s.sock"), "data_dir": dataDir,
		"executor.path": executorPath, "shutdown_timeout": "10s",
	})
	if err != nil {
		t.Fatal(err)
	}
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d, err := New(ctx, cfg, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})), opts...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	td := &testDaemon{d: d, cfg: cfg, client: api.NewClient(cfg.Socket), cancel: cancel, done: make(chan error, 1)}
	go func() { td.done <- d.Serve(ctx) }()
	t.Cleanup(td.stop)
	return td
}

// stop stops the daemon as SIGTERM would; it may be called more than once.
func (td *testDaemon) stop() {
	td.once.Do(func() {
		td.cancel()
		select {
		case td.serveErr = <-td.done:
		case <-time.After(30 * time.Second):
			td.serveErr = errors.New("daemon did not stop within 30s")
		}
		td.d.Close()
	})
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// executorPIDs lists the processes running under this test, at any depth:
// executors and, when sandboxed, their launchers (the test starts nothing
// else).
func executorPIDs(t *testing.T) []int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	type proc struct {
		ppid int
		comm string
	}
	procs := map[int]proc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		open := strings.IndexByte(s, '(')
		if i < 0 || open < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		procs[pid] = proc{ppid: ppid, comm: s[open+1 : i]}
	}
	self := os.Getpid()
	var pids []int
	for pid, p := range procs {
		for up, n := p.ppid, 0; up > 0 && n < 16; up, n = procs[up].ppid, n+1 {
			if up == self {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// statusOf is the HTTP status the socket API answers code with.
func statusOf(code errdefs.Code) int { return apiserver.StatusOf(code) }

// The admin log's acts the tests look for (apiserver's).
const (
	actApprovalAllow = apiserver.ActApprovalAllow
	actToolApprove   = apiserver.ActToolApprove
	actToolReject    = apiserver.ActToolReject
	actUILogin       = apiserver.ActUILogin
)
