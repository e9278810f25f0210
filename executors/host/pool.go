package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// PoolConfig configures a Pool. Zero fields take the defaults noted.
type PoolConfig struct {
	// Runners start executors, by isolation name ("process", "docker").
	Runners map[string]Runner
	// MaxPerKey caps the executors of one key that run calls at once (8).
	MaxPerKey int
	// WorkerShare caps the executors of one key that the calls of one
	// worker (Request.Caller.Worker) hold at once, nested calls included;
	// at most MaxPerKey-PersonReserve, which it is when zero.
	WorkerShare int
	// PersonReserve of each key's MaxPerKey executors are kept for calls
	// that come through no worker (the person's): all workers together
	// hold at most MaxPerKey-PersonReserve (0; less than MaxPerKey).
	PersonReserve int
	// MinIdle executors of a key are kept warm once the key is used (1).
	MinIdle int
	// IdleTimeout retires idle executors beyond MinIdle (5m).
	IdleTimeout time.Duration
	// AcquireTimeout bounds the wait for a busy key before rate_limited (10s).
	AcquireTimeout time.Duration
	// DefaultTimeout applies to a call whose request has none (60s).
	DefaultTimeout time.Duration
	// TimeoutGrace is how long past its timeout an executor may take to
	// report it before the host kills it (2s).
	TimeoutGrace time.Duration
	Logger       *slog.Logger
}

func (c *PoolConfig) setDefaults() {
	if c.MaxPerKey <= 0 {
		c.MaxPerKey = 8
	}
	c.PersonReserve = min(max(c.PersonReserve, 0), c.MaxPerKey-1)
	if agents := c.MaxPerKey - c.PersonReserve; c.WorkerShare <= 0 || c.WorkerShare > agents {
		c.WorkerShare = agents
	}
	if c.MinIdle < 0 {
		c.MinIdle = 0
	} else if c.MinIdle == 0 {
		c.MinIdle = 1
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 5 * time.Minute
	}
	if c.AcquireTimeout <= 0 {
		c.AcquireTimeout = 10 * time.Second
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = 60 * time.Second
	}
	if c.TimeoutGrace <= 0 {
		c.TimeoutGrace = 2 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Pool keeps warm executor processes per Key and runs one call at a time on
// each. An executor that failed a call in any way the executor itself could
// not vouch for (crash, timeout, broken limit) is killed and replaced.
type Pool struct {
	cfg    PoolConfig
	hclogw *hclogAdapter

	mu     sync.Mutex
	groups map[Key]*group
	closed bool

	bg     sync.WaitGroup
	stopCh chan struct{}

	started  atomic.Int64
	retired  atomic.Int64
	replaced atomic.Int64
}

type group struct {
	key Key
	// The executors running a call or starting, guarded by Pool.mu: all
	// of them, those held by any worker's calls, and by each worker's.
	busy    int
	agents  int
	workers map[string]int
	// freed is closed (and replaced) each time a slot is given back, to
	// wake the calls waiting for one; guarded by Pool.mu.
	freed chan struct{}
	// idle executors, most recently used last; guarded by Pool.mu.
	idle []*instance
}

// take claims a slot for a call of worker ("" for none) if the key's
// cap, the workers' part of it and worker's share allow; under Pool.mu.
// It returns what stands in the way otherwise.
func (g *group) take(cfg *PoolConfig, worker string) (ok bool, why string) {
	switch {
	case g.busy >= cfg.MaxPerKey:
		return false, fmt.Sprintf("all %d %s executors are busy", cfg.MaxPerKey, g.key)
	case worker != "" && g.workers[worker] >= cfg.WorkerShare:
		return false, fmt.Sprintf("worker %q holds its share of %d %s executors", worker, cfg.WorkerShare, g.key)
	case worker != "" && g.agents >= cfg.MaxPerKey-cfg.PersonReserve:
		return false, fmt.Sprintf("workers hold all %d %s executors not kept for the person", cfg.MaxPerKey-cfg.PersonReserve, g.key)
	}
	g.busy++
	if worker != "" {
		g.agents++
		g.workers[worker]++
	}
	return true, ""
}

// give returns the slot take claimed; under Pool.mu.
func (g *group) give(worker string) {
	g.busy--
	if worker != "" {
		g.agents--
		if g.workers[worker]--; g.workers[worker] <= 0 {
			delete(g.workers, worker)
		}
	}
	close(g.freed)
	g.freed = make(chan struct{})
}

type instance struct {
	client   *plugin.Client
	exec     executors.Executor
	pid      int
	lastUsed time.Time
}

// ErrPoolClosed is returned by calls made after Close.
var ErrPoolClosed = &errdefs.Error{Code: errdefs.Unavailable, Err: errors.New("executor pool is shut down")}

// NewPool returns a pool; it starts no executor until asked.
func NewPool(cfg PoolConfig) *Pool {
	cfg.setDefaults()
	p := &Pool{
		cfg:    cfg,
		hclogw: &hclogAdapter{log: cfg.Logger.With("component", "executor")},
		groups: map[Key]*group{},
		stopCh: make(chan struct{}),
	}
	p.bg.Add(1)
	go p.reap()
	return p
}

// Execute runs req on an executor of key, starting one if none is idle.
// The slot counts against the share of the worker the request's caller
// came through (PoolConfig.WorkerShare).
func (p *Pool) Execute(ctx context.Context, key Key, req *executors.Request) (*executors.Result, error) {
	owner := req.Caller.Worker
	g, inst, err := p.acquire(ctx, key, owner)
	if err != nil {
		return nil, err
	}
	timeout := req.Limits.Timeout
	if timeout <= 0 {
		timeout = p.cfg.DefaultTimeout
		req.Limits.Timeout = timeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout+p.cfg.TimeoutGrace)
	res, err := inst.exec.Execute(cctx, req)
	cancel()
	healthy := keepAfter(err) && !inst.client.Exited()
	// Only keys that ask for it are reset: a kind whose calls cannot leave
	// processes or files behind (JS in goja, HTTP) skips the reset and its
	// half millisecond.
	if ac, ok := p.cfg.Runners[key.Isolation].(AfterCaller); ok && healthy && key.Reset {
		// Nothing a call leaves behind (processes, files) reaches the next.
		// A limit the call broke that the executor itself did not see (the
		// sandbox's memory or pids cap) ends the call here.
		actx, acancel := context.WithTimeout(context.Background(), 5*time.Second)
		aerr := ac.AfterCall(actx, inst.client)
		acancel()
		if aerr != nil {
			healthy = false
			if errdefs.CodeOf(aerr) == errdefs.LimitExceeded {
				res, err = nil, aerr
			}
		}
	}
	if err == nil && inst.client.Exited() {
		// It answered, then died: the answer stands, the process does not.
		healthy = false
	}
	p.release(g, inst, owner, healthy)
	if err != nil && errdefs.CodeOf(err) == errdefs.ExecutorFailed {
		p.cfg.Logger.Warn("executor failed", "key", key.String(), "pid", inst.pid, "call_id", req.CallID, "err", err)
	}
	return res, err
}

// keepAfter reports whether an executor may serve again after a call that
// ended with err. Only refusals the executor made before running anything
// leave it clean.
func keepAfter(err error) bool {
	switch errdefs.CodeOf(err) {
	case "", errdefs.PolicyDenied, errdefs.InvalidArguments:
		return true
	}
	return false
}

// Warm starts executors for key until n are idle. It is how the daemon
// pre-starts the kinds it expects and how benchmarks time a cold start.
func (p *Pool) Warm(ctx context.Context, key Key, n int) error {
	g, err := p.group(key)
	if err != nil {
		return err
	}
	for {
		p.mu.Lock()
		have := len(g.idle)
		p.mu.Unlock()
		if have >= n {
			return nil
		}
		inst, err := p.start(ctx, key)
		if err != nil {
			return err
		}
		if !p.putIdle(g, inst) {
			return ErrPoolClosed
		}
	}
}

// StartOne starts a single executor for key and kills it again; it exists
// to measure a cold start.
func (p *Pool) StartOne(ctx context.Context, key Key) error {
	inst, err := p.start(ctx, key)
	if err != nil {
		return err
	}
	p.kill(inst)
	return nil
}

// Stats describes one key's executors.
type Stats struct {
	Key  Key
	Idle int
	Busy int
}

// Stats reports per-key counts, plus the total executors started and retired.
func (p *Pool) Stats() (keys []Stats, started, retired int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, g := range p.groups {
		keys = append(keys, Stats{Key: k, Idle: len(g.idle), Busy: g.busy})
	}
	return keys, p.started.Load(), p.retired.Load()
}

// Counts are the pool's running totals, for metrics.
type Counts struct {
	// Started counts executor processes started.
	Started int64
	// Retired counts executor processes stopped: idle too long, dead,
	// unhealthy after a call, or the pool closing.
	Retired int64
	// Replaced counts the executors retired because a call left them
	// unfit (crash, timeout, broken limit, failed reset); each one is
	// replaced by a fresh start, in the background or on the next call.
	Replaced int64
}

// Counts reports the running totals; it takes no lock.
func (p *Pool) Counts() Counts {
	return Counts{Started: p.started.Load(), Retired: p.retired.Load(), Replaced: p.replaced.Load()}
}

// Close kills idle executors and refuses new calls. Calls already running
// finish; their executors are killed when they return.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var all []*instance
	for _, g := range p.groups {
		all = append(all, g.idle...)
		g.idle = nil
	}
	p.mu.Unlock()
	close(p.stopCh)
	var wg sync.WaitGroup
	for _, inst := range all {
		wg.Add(1)
		go func() { defer wg.Done(); p.kill(inst) }()
	}
	wg.Wait()
	p.bg.Wait()
	return nil
}

func (p *Pool) group(key Key) (*group, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrPoolClosed
	}
	g := p.groups[key]
	if g == nil {
		if _, ok := p.cfg.Runners[key.Isolation]; !ok {
			return nil, errdefs.Errorf(errdefs.Unavailable, "isolation %q is not available in this daemon", key.Isolation)
		}
		g = &group{key: key, workers: map[string]int{}, freed: make(chan struct{})}
		p.groups[key] = g
	}
	return g, nil
}

func (p *Pool) acquire(ctx context.Context, key Key, worker string) (*group, *instance, error) {
	g, err := p.group(key)
	if err != nil {
		return nil, nil, err
	}
	var t *time.Timer
	for {
		p.mu.Lock()
		ok, why := g.take(&p.cfg, worker)
		freed := g.freed
		p.mu.Unlock()
		if ok {
			break
		}
		if t == nil {
			t = time.NewTimer(p.cfg.AcquireTimeout)
			defer t.Stop()
		}
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-t.C:
			return nil, nil, &errdefs.Error{Code: errdefs.RateLimited, Op: "acquire executor",
				Err: fmt.Errorf("%s; retry in a moment", why)}
		}
	}
	for {
		p.mu.Lock()
		n := len(g.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		inst := g.idle[n-1]
		g.idle = g.idle[:n-1]
		p.mu.Unlock()
		if !inst.client.Exited() && p.reusable(ctx, key, inst) {
			return g, inst, nil
		}
		p.retired.Add(1)
		p.kill(inst)
	}
	inst, err := p.start(ctx, key)
	if err != nil {
		p.giveSlot(g, worker)
		return nil, nil, err
	}
	return g, inst, nil
}

// reusable asks the runner of a key with mounts whether an idle executor
// may serve again (ReuseChecker): one whose mount sources name other
// files now is retired, and the call starts a fresh one.
func (p *Pool) reusable(ctx context.Context, key Key, inst *instance) bool {
	rc, ok := p.cfg.Runners[key.Isolation].(ReuseChecker)
	if !ok || key.Mounts == "" {
		return true
	}
	if err := rc.CheckReuse(ctx, inst.client); err != nil {
		p.cfg.Logger.Info("idle executor retired", "key", key.String(), "pid", inst.pid, "reason", err)
		return false
	}
	return true
}

func (p *Pool) giveSlot(g *group, worker string) {
	p.mu.Lock()
	g.give(worker)
	p.mu.Unlock()
}

func (p *Pool) release(g *group, inst *instance, worker string, healthy bool) {
	defer p.giveSlot(g, worker)
	if healthy && p.putIdle(g, inst) {
		return
	}
	p.retired.Add(1)
	p.kill(inst)
	if !healthy {
		p.replaced.Add(1)
		p.replace(g)
	}
}

// putIdle parks inst as idle; false if the pool is closed.
func (p *Pool) putIdle(g *group, inst *instance) bool {
	inst.lastUsed = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	g.idle = append(g.idle, inst)
	return true
}

// replace starts a fresh executor in the background so the next call does
// not pay for the one just retired.
func (p *Pool) replace(g *group) {
	p.mu.Lock()
	need := !p.closed && len(g.idle) < p.cfg.MinIdle
	if need {
		p.bg.Add(1)
	}
	p.mu.Unlock()
	if !need {
		return
	}
	go func() {
		defer p.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		inst, err := p.start(ctx, g.key)
		if err != nil {
			p.cfg.Logger.Warn("replacing executor", "key", g.key.String(), "err", err)
			return
		}
		if !p.putIdle(g, inst) {
			p.kill(inst)
		}
	}()
}

func (p *Pool) start(ctx context.Context, key Key) (*instance, error) {
	runner := p.cfg.Runners[key.Isolation]
	cfg, err := runner.ClientConfig(ctx, key)
	if err != nil {
		return nil, startError(err)
	}
	cfg.HandshakeConfig = executors.Handshake
	cfg.Plugins = executors.HostPluginMap(key.Host)
	cfg.AllowedProtocols = []plugin.Protocol{plugin.ProtocolGRPC}
	cfg.GRPCDialOptions = append(cfg.GRPCDialOptions, executors.GRPCDialOptions()...)
	cfg.Logger = p.hclogw.logger()
	// Stderr carries the process's raw stderr; SyncStderr what the executor
	// writes to os.Stderr once go-plugin has taken it over.
	sw := &stderrWriter{log: p.hclogw.log.With("kind", string(key.Kind))}
	cfg.Stderr = sw
	cfg.SyncStderr = sw
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	client := plugin.NewClient(cfg)
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, startError(err)
	}
	raw, err := rpc.Dispense(executors.PluginName)
	if err != nil {
		client.Kill()
		return nil, &errdefs.Error{Code: errdefs.ExecutorFailed, Op: "start executor", Err: err}
	}
	ex, ok := raw.(executors.Executor)
	if !ok {
		client.Kill()
		return nil, errdefs.Errorf(errdefs.ExecutorFailed, "executor plugin has type %T", raw)
	}
	pid := 0
	if rc := client.ReattachConfig(); rc != nil {
		pid = rc.Pid
	}
	p.started.Add(1)
	return &instance{client: client, exec: ex, pid: pid, lastUsed: time.Now()}, nil
}

// startError is an executor start that failed: executor_failed, unless
// the runner refused the start on policy (a mount source that became a
// symlink), which keeps its code.
func startError(err error) error {
	if errdefs.CodeOf(err) == errdefs.PolicyDenied {
		return err
	}
	return &errdefs.Error{Code: errdefs.ExecutorFailed, Op: "start executor", Err: err}
}

func (p *Pool) kill(inst *instance) {
	inst.client.Kill()
}

// reap retires executors idle longer than IdleTimeout, keeping MinIdle.
func (p *Pool) reap() {
	defer p.bg.Done()
	t := time.NewTicker(max(p.cfg.IdleTimeout/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.stopCh:
			return
		case <-t.C:
		}
		var old []*instance
		cutoff := time.Now().Add(-p.cfg.IdleTimeout)
		p.mu.Lock()
		for _, g := range p.groups {
			keep := g.idle[:0]
			for i, inst := range g.idle {
				// idle is oldest first; keep the newest MinIdle.
				if inst.lastUsed.Before(cutoff) && len(g.idle)-i > p.cfg.MinIdle {
					old = append(old, inst)
					continue
				}
				keep = append(keep, inst)
			}
			g.idle = keep
		}
		p.mu.Unlock()
		for _, inst := range old {
			p.retired.Add(1)
			p.kill(inst)
		}
	}
}
