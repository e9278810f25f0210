// Package daemon is the toolcage server's wiring and lifecycle: New builds
// the store, catalog, dispatcher, executor pool, listeners and servers from
// a config (daemon/config), Serve runs them and Close stops them. The
// socket API, MCP, the review page and the call pipeline live in packages
// of their own (see the README's package table).
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolcage/toolcage/daemon/apiserver"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/changes"
	"github.com/toolcage/toolcage/daemon/config"
	"github.com/toolcage/toolcage/daemon/dispatch"
	"github.com/toolcage/toolcage/daemon/egress"
	"github.com/toolcage/toolcage/daemon/mcp"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/netguard"
	"github.com/toolcage/toolcage/policy/scrub"
	"github.com/toolcage/toolcage/store"
	"github.com/toolcage/toolcage/store/workerdb"
)

// Version is set at build time.
var Version = "dev"

// Daemon is one running toolcage server.
type Daemon struct {
	cfg Config
	// workerRetry is how often a refused worker file edit is tried again.
	workerRetry time.Duration
	log         *slog.Logger
	store       *store.Store
	catalog     *catalog.Catalog
	pool        *host.Pool
	disp        *dispatch.Dispatcher
	// api serves the socket API (daemon/apiserver).
	api     *apiserver.Server
	workers *worker.Registry
	metrics *metrics
	// egress is the proxy that puts HTTP tools' secrets into their requests.
	egress *egress.Proxy
	// events passes approvals and recorded calls on to the event streams
	// and the webhook (announce.go).
	events *announcer
	// stopping is closed when shutdown begins: event streams end then.
	stopping     chan struct{}
	stoppingOnce sync.Once
	// workerDBs are the workers' own SQLite databases (the sql toolset).
	workerDBs *workerdb.Set
	// secretsKey decrypts stored secrets; a rotation swaps it (rotate.go).
	// Never logged.
	secretsKey *secretsKey

	ln  net.Listener
	srv *http.Server
	// activated: ln is the socket systemd passed (systemd.go); its file
	// is systemd's to remove.
	activated bool
	// metricsLn and metricsSrv serve metrics.listen; nil when it is off.
	metricsLn  net.Listener
	metricsSrv *http.Server
	// ui is the review page (ui.go); nil when ui.listen is off.
	ui *uiServer
	// changes announces that tools changed (to MCP sessions).
	changes *changes.Broadcaster
	// mcp serves workers' tools over MCP; mcpLn and mcpSrv serve
	// mcp.listen (nil when it is off).
	mcp    *mcp.Server
	mcpLn  net.Listener
	mcpSrv *http.Server
	// sandbox is the runner of sandboxed executors; nil when disabled.
	sandbox *host.SandboxRunner
	// docker is the runner of isolation: docker; nil when unavailable.
	docker  *host.DockerRunner
	started time.Time
	// allowUID decides which peers may talk to the socket.
	allowUID func(uid uint32) bool

	// sandboxState is this daemon's scratch dir for sandbox roots.
	sandboxState string

	closeOnce sync.Once
	closeErr  error
}

// Option changes how New builds a daemon.
type Option func(*Daemon)

// WithPeerCheck replaces the peer check (tests use it to prove it runs).
func WithPeerCheck(allow func(uid uint32) bool) Option {
	return func(d *Daemon) { d.allowUID = allow }
}

// withWorkerRetry sets how often a worker file edit the daemon refused is
// tried again (worker.DefaultRetryRefused otherwise); for tests.
func withWorkerRetry(every time.Duration) Option {
	return func(d *Daemon) { d.workerRetry = every }
}

// New opens the store, prepares the executor pool and binds the socket. It
// does not serve until Serve is called.
func New(ctx context.Context, cfg Config, log *slog.Logger, opts ...Option) (_ *Daemon, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Version == "" {
		cfg.Version = Version
	}
	self := uint32(os.Getuid())
	d := &Daemon{cfg: cfg, log: log, started: time.Now(), metrics: newMetrics(), stopping: make(chan struct{}), changes: &changes.Broadcaster{},
		allowUID: func(uid uint32) bool { return uid == self || uid == 0 }}
	for _, o := range opts {
		o(d)
	}
	exe, err := host.FindExecutor(cfg.Executor.Path)
	if err != nil {
		return nil, err
	}
	rules, err := LoadShellRules(cfg.Shell.Rules)
	if err != nil {
		return nil, err
	}
	// Worker tokens are ours to recognise: one that reaches a tool's
	// output (an agent pasting its own) is redacted like any credential.
	scrubber, err := scrub.New(nil, append(cfg.ScrubRules(), apiserver.WorkerTokenRule))
	if err != nil {
		return nil, fmt.Errorf("credential scrubber: %w", err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	// The key is kept in memory only, never logged; a key file that may
	// have leaked (loose mode) stops the start.
	secretsKey, err := store.LoadOrCreateKey(cfg.Secrets.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	st, err := store.Open(ctx, filepath.Join(cfg.DataDir, "toolcage.db"))
	if err != nil {
		return nil, err
	}
	// undo holds what New has opened so far; a later step's failure closes
	// it all, newest first.
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()
	undo = append(undo, func() { st.Close() })
	d.store = st
	d.catalog = catalog.New(st, d.catalogOptions()...)
	if d.workers, err = worker.NewRegistry(ctx, st, log, d.changes, d.workerRetry); err != nil {
		return nil, err
	}
	runner, err := d.processRunner(exe)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() {
		if d.sandboxState != "" {
			os.RemoveAll(d.sandboxState)
		}
	})
	runners := map[string]host.Runner{catalog.IsolationProcess: runner}
	// The egress proxy comes before the docker runner, which serves it on a
	// socket its containers reach.
	guards := netguard.NewCache(64)
	if d.egress, err = egress.Listen(guards, log); err != nil {
		return nil, err
	}
	undo = append(undo, func() { d.egress.Close() })
	if d.docker, err = d.dockerRunner(ctx); err != nil {
		return nil, err
	}
	if d.docker != nil {
		runners[catalog.IsolationDocker] = d.docker
		undo = append(undo, d.closeDocker)
	}
	d.pool = host.NewPool(host.PoolConfig{
		Runners:        runners,
		MaxPerKey:      cfg.Executor.MaxPerKey,
		WorkerShare:    cfg.WorkerLimits.ExecutorShare,
		PersonReserve:  cfg.WorkerLimits.PersonExecutors,
		MinIdle:        cfg.Executor.MinIdle,
		IdleTimeout:    cfg.Executor.IdleTimeout,
		AcquireTimeout: cfg.Executor.AcquireTimeout,
		Logger:         log,
	})
	undo = append(undo, func() { d.pool.Close() })
	d.secretsKey = newSecretsKey(secretsKey)
	// Each worker's own SQLite database (the sql toolset), beside the
	// daemon's: data_dir/workers/<name>/db.sqlite.
	d.workerDBs = workerdb.NewWithDefaults(filepath.Join(cfg.DataDir, "workers"),
		workerdb.Limits{MaxResultBytes: cfg.WorkerLimits.SQLResultByteCount()})
	undo = append(undo, func() { d.workerDBs.Close() })
	if d.events, err = newAnnouncer(cfg.Approvals, log); err != nil {
		return nil, err
	}
	undo = append(undo, d.events.close)
	// The person's TCP listeners open before the dispatcher: their
	// addresses are denied to every tool's network guard (ownListeners).
	if d.metricsLn, err = config.ListenLoopback("metrics.listen", cfg.Metrics.Listen); err != nil {
		return nil, err
	}
	if d.metricsLn != nil {
		undo = append(undo, func() { d.metricsLn.Close() })
	}
	if d.ui, err = d.listenUI(); err != nil {
		return nil, err
	}
	if d.ui != nil {
		undo = append(undo, func() { d.ui.ln.Close() })
	}
	if d.mcpLn, err = config.ListenLoopback("mcp.listen", cfg.MCP.Listen); err != nil {
		return nil, err
	}
	d.disp = dispatch.New(dispatch.Config{
		Catalog: d.catalog, Store: st, Pool: d.pool, Scrubber: scrubber,
		Secrets: storedSecrets{key: d.secretsKey, st: st}, Egress: d.egress,
		Limiter:  policy.NewRateLimiter(cfg.RateLimitConfig()),
		Profiles: cfg.Profiles.ToolProfiles(), ProfileCallers: cfg.Profiles.CallerProfiles(),
		ApprovalTimeout: cfg.Approvals.Timeout, ApprovalValidity: cfg.Approvals.Validity, Events: d.events, Changes: d.changes,
		MaxCallDepth:        cfg.JS.MaxCallDepth,
		MaxPendingApprovals: cfg.WorkerLimits.PendingApprovals,
		ArgumentBounds:      policy.ArgumentBounds{MaxBytes: cfg.WorkerLimits.ArgumentByteCount(), MaxDepth: cfg.WorkerLimits.ArgumentDepth},
		Limits: map[executors.Kind]executors.Limits{
			executors.KindJS: cfg.JSLimits(), executors.KindShell: cfg.ShellLimits(), executors.KindHTTP: cfg.HTTPLimits(),
		},
		Workers:    d.workers.Get,
		Mounts:     d.mountGuard,
		ShellRules: rules, Guards: guards, AllowPrivateHosts: d.privateHosts(),
		NetworkShellTools: cfg.Sandbox.NetworkShellTools, Isolation: cfg.Isolation, WorkerDBs: d.workerDBs,
		Metrics: d.metrics, Logger: log,
	})
	d.mcp = d.newMCP()
	undo = append(undo, d.mcp.Close)
	ln, err := d.listenAPI()
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { ln.Close() })
	// The API server is made once the socket is bound: socket activation
	// names the socket the handlers report (listenAPI).
	var loginURL func(string) (string, time.Time)
	if cfg.UI.Listen != "" {
		loginURL = func(id string) (string, time.Time) { return d.ui.pages.LoginURL(id) }
	}
	d.api = apiserver.New(apiserver.Config{Config: d.cfg, Version: Version, Started: d.started, Log: log,
		Store: st, Catalog: d.catalog, Dispatcher: d.disp, Workers: d.workers, Changes: d.changes, WorkerDBs: d.workerDBs,
		MCP: d.mcp, SecretsKey: keyOf{k: d.secretsKey, st: st, file: cfg.Secrets.KeyFile}, Metrics: d.metricsHTTP(),
		Mounts: d.mountGuard, LoginURL: loginURL, Approvals: d.events.approvals, Calls: d.events.calls,
		Stopping: d.stopping, AllowUID: d.allowUID, ClaimConn: claimConn,
		HostPaths: func(w *worker.Worker) error { return checkHostPaths(w, d.mountChecker()) }})
	d.workers.Check = d.api.CheckWorker
	if err := d.buildUI(); err != nil {
		return nil, err
	}
	if d.mcpLn != nil {
		d.mcpLn = limitListener(d.mcpLn, connLimits{Max: cfg.API.MaxConnections, PerWorker: cfg.API.WorkerConnections,
			MaxUnclaimed: cfg.MCP.MaxUnauthenticated})
		d.mcpSrv = d.mcpHTTPServer()
	}
	d.metrics.reg.MustRegister(newStateCollector(d))
	if d.metricsLn != nil {
		d.metricsSrv = d.metricsServer()
	}
	d.ln = limitListener(ln, connLimits{Max: cfg.API.MaxConnections, PersonReserve: cfg.API.PersonConnections,
		PerWorker: cfg.API.WorkerConnections})
	d.srv = &http.Server{
		Handler:           bodyDeadline(d.api.Handler(), cfg.API.BodyTimeout),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       cfg.API.IdleTimeout,
		ConnContext:       connContext,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return d, nil
}

// privateHosts is http.allow_private_hosts with a deny entry for each of
// the daemon's own TCP listeners (metrics, review page, MCP, egress
// proxy): no tool reaches them, whatever the person's entries allow
// (through "127.0.0.1", fetch_url read the person-only metrics).
func (d *Daemon) privateHosts() []string {
	out := append([]string(nil), d.cfg.HTTP.AllowPrivateHosts...)
	var addrs []net.Addr
	for _, ln := range []net.Listener{d.metricsLn, d.mcpLn} {
		if ln != nil {
			addrs = append(addrs, ln.Addr())
		}
	}
	if d.ui != nil {
		addrs = append(addrs, d.ui.ln.Addr())
	}
	if d.egress != nil {
		if ap, err := netip.ParseAddrPort(d.egress.Addr()); err == nil {
			addrs = append(addrs, net.TCPAddrFromAddrPort(ap))
		}
	}
	for _, a := range addrs {
		if ta, ok := a.(*net.TCPAddr); ok {
			out = append(out, netguard.DenyEntry(ta.AddrPort()))
		}
	}
	return out
}

// processRunner picks how `isolation: process` executors start: in the
// sandbox, checked against the configured minimum, or (by config only) as
// plain processes.
func (d *Daemon) processRunner(exe string) (host.Runner, error) {
	if !d.cfg.Sandbox.Enabled {
		d.log.Warn("sandbox disabled by config: executors run as plain child processes with no namespaces, cgroups, Landlock or seccomp")
		return &host.ProcessRunner{Path: exe}, nil
	}
	state, err := newSandboxStateDir(os.TempDir(), d.log)
	if err != nil {
		return nil, err
	}
	d.sandboxState = state
	r := &host.SandboxRunner{Path: exe, Config: d.cfg.SandboxConfig(), StateDir: state}
	d.sandbox = r
	// The lean launcher next to the executor starts a sandbox in about half
	// the time; without it the executor launches itself.
	if l := filepath.Join(filepath.Dir(exe), host.LauncherBinary); fileExists(l) {
		r.Launcher = l
	}
	rep := r.Check()
	if err := rep.Meets(r.Config.Require); err != nil {
		os.RemoveAll(state)
		return nil, fmt.Errorf("the process sandbox cannot run here (%w); run `toolcage sandbox check` for details, or set sandbox.enabled: false to run without it", err)
	}
	for _, n := range rep.Notes {
		d.log.Warn("sandbox degraded", "note", n)
	}
	d.log.Info("sandbox ready", "cgroup", rep.Cgroup, "landlock_abi", rep.LandlockABI, "seccomp", rep.Seccomp, "unprivileged", rep.Unprivileged)
	return r, nil
}

// newSandboxStateDir makes this daemon's own scratch dir for sandbox roots,
// named for the user and process, and removes the ones daemons that died
// without cleaning up left behind.
func newSandboxStateDir(root string, log *slog.Logger) (string, error) {
	prefix := fmt.Sprintf("toolcage-sandbox-%d-", os.Geteuid())
	old, _ := filepath.Glob(filepath.Join(root, prefix+"*"))
	for _, dir := range old {
		f := strings.Split(strings.TrimPrefix(filepath.Base(dir), prefix), "-")
		pid, err := strconv.Atoi(f[0])
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("removing a dead daemon's sandbox dir", "dir", dir, "err", err)
		}
	}
	dir, err := os.MkdirTemp(root, prefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("sandbox state dir: %w", err)
	}
	// The sandbox's mapped user passes through it to its own root.
	if err := os.Chmod(dir, 0o711); err != nil {
		return "", fmt.Errorf("sandbox state dir: %w", err)
	}
	return dir, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Prewarm starts the configured executor kinds so the first call is warm.
func (d *Daemon) Prewarm(ctx context.Context) {
	iso := d.cfg.Isolation
	if iso == "" || (iso == catalog.IsolationDocker && d.docker == nil) {
		iso = catalog.IsolationProcess
	}
	for _, k := range d.cfg.Executor.Prewarm {
		key, ok := d.disp.KindKey(executors.Kind(k), iso, nil)
		if !ok {
			d.log.Warn("prewarm: unknown kind", "kind", k)
			continue
		}
		if err := d.pool.Warm(ctx, key, max(1, d.cfg.Executor.MinIdle)); err != nil {
			d.log.Warn("prewarm failed", "kind", k, "err", err)
		}
	}
}

// Serve answers API requests until ctx ends, then shuts down gracefully:
// new connections are refused, calls in flight finish (up to the shutdown
// timeout), executors are stopped and the database is checkpointed.
func (d *Daemon) Serve(ctx context.Context) error {
	// Start-up parses configs and rule sets (gitleaks' among them) into
	// garbage the runtime would hand back to the OS only minutes later;
	// an idle daemon should not hold it.
	debug.FreeOSMemory()
	errc := make(chan error, 1)
	go func() { errc <- d.srv.Serve(d.ln) }()
	if d.metricsSrv != nil {
		go func() {
			if err := d.metricsSrv.Serve(d.metricsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Error("metrics server", "err", err)
			}
		}()
		d.log.Info("serving metrics", "addr", d.metricsLn.Addr().String())
	}
	d.serveUI()
	if d.mcpSrv != nil {
		go func() {
			if err := d.mcpSrv.Serve(d.mcpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Error("mcp server", "err", err)
			}
		}()
		d.log.Info("serving MCP over streamable HTTP", "addr", d.mcpLn.Addr().String(), "endpoint", "/mcp/{worker}")
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go d.workers.Run(wctx)
	go d.pruneAudit(wctx)
	d.log.Info("toolcage daemon listening", "socket", d.cfg.Socket, "data_dir", d.cfg.DataDir, "version", Version, "socket_activated", d.activated)
	// The socket was listening since New; from here it is answered.
	sdNotify(d.log, "READY=1\nSTATUS=serving on "+d.cfg.Socket)
	select {
	case err := <-errc:
		sdNotify(d.log, "STOPPING=1")
		d.Close()
		return err
	case <-ctx.Done():
	}
	sdNotify(d.log, "STOPPING=1\nSTATUS=draining calls in flight")
	d.log.Info("shutting down: draining calls in flight", "timeout", d.cfg.ShutdownTimeout)
	d.disp.StopWaiting() // calls waiting for approval return; approvals stay pending
	d.stopStreams()      // event streams end; Shutdown waits for no one following
	sctx, cancel := context.WithTimeout(context.Background(), d.cfg.ShutdownTimeout)
	defer cancel()
	if d.metricsSrv != nil {
		d.metricsSrv.Shutdown(sctx)
	}
	if d.ui != nil {
		d.ui.srv.Shutdown(sctx)
	}
	// MCP sessions over the socket are hijacked connections, which the
	// HTTP server no longer tracks: they end here. Streamable HTTP
	// sessions' streams end with their server (Close: they never idle).
	d.mcp.Close()
	if d.mcpSrv != nil {
		d.mcpSrv.Close()
	}
	err := d.srv.Shutdown(sctx)
	if err != nil {
		d.log.Warn("shutdown timeout reached; closing remaining connections", "err", err)
		d.srv.Close()
	}
	if cerr := d.Close(); cerr != nil {
		return cerr
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// MCPAddr is the address mcp.listen bound, or "" when it is off.
func (d *Daemon) MCPAddr() string {
	if d.mcpLn == nil {
		return ""
	}
	return d.mcpLn.Addr().String()
}

// MetricsAddr is the address metrics.listen bound, or "" when it is off.
func (d *Daemon) MetricsAddr() string {
	if d.metricsLn == nil {
		return ""
	}
	return d.metricsLn.Addr().String()
}

// stopStreams ends every event stream (approvals --watch, audit --follow).
func (d *Daemon) stopStreams() {
	d.stoppingOnce.Do(func() {
		close(d.stopping)
		d.events.close()
	})
}

// Close stops executors, closes the store and removes the socket.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() {
		d.stopStreams()
		d.ln.Close()
		if d.metricsSrv != nil {
			d.metricsSrv.Close()
		}
		if d.metricsLn != nil {
			d.metricsLn.Close()
		}
		if d.ui != nil {
			d.ui.srv.Close()
			d.ui.ln.Close()
		}
		d.mcp.Close()
		if d.mcpSrv != nil {
			d.mcpSrv.Close()
		}
		if d.mcpLn != nil {
			d.mcpLn.Close()
		}
		d.pool.Close()
		d.closeDocker()
		d.egress.Close()
		d.workerDBs.Close()
		d.closeErr = d.store.Close()
		if !d.activated {
			os.Remove(d.cfg.Socket)
		}
		if d.sandboxState != "" {
			os.RemoveAll(d.sandboxState)
		}
		d.log.Info("toolcage daemon stopped")
	})
	return d.closeErr
}

// connContext is what each socket connection's context holds: its peer
// (apiserver.ConnContext) and its share of the connection limits.
func connContext(ctx context.Context, c net.Conn) context.Context {
	return withConnState(apiserver.ConnContext(ctx, c), c)
}
