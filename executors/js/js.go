// Package js is the JavaScript executor. It runs a tool's code with goja, a
// pure-Go ECMAScript engine, as the body of an async function that sees args,
// context, console and utils, and nothing of the host.
//
// Every call gets a fresh realm: nothing one call does to globals or
// prototypes is visible to the next. The realm has no eval, cannot generate
// code from strings by any route (the parser itself is switched off once the
// tool's code is compiled), and has no require, process, module loader,
// WebAssembly, SharedArrayBuffer or Atomics. Wall time, heap growth and
// output size are bounded per call; see limits.go for how and how precisely.
//
// A call whose request holds the network permission also gets a global
// fetch, confined to its JS.AllowedDomains by the network guard and
// bounded by Limits.Requests; see fetch.go.
package js

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/jscheck"
	"github.com/toolcage/toolcage/policy/netguard"
)

// Defaults used when Config and the request leave a limit at zero.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMemoryBytes = 64 << 20
	DefaultOutputBytes = 1 << 20
)

// Config holds the executor's default limits. A request's non-zero limits
// override them.
type Config struct {
	// Timeout bounds a call's wall time, including time spent waiting on
	// promises. Zero means DefaultTimeout.
	Timeout time.Duration
	// MemoryBytes bounds how much the process heap may grow during a call.
	// Zero means DefaultMemoryBytes.
	MemoryBytes int64
	// OutputBytes bounds the result JSON plus the captured console lines.
	// Zero means DefaultOutputBytes.
	OutputBytes int64
}

// Executor runs JavaScript tool calls. Calls run one at a time in the
// whole process, whichever Executor they come through: the memory limit is
// measured on the process heap, which only works for one call at a time.
type Executor struct {
	cfg   Config
	cache *programCache
	// guards keeps a network guard and connection pool per fetch
	// allowlist, shared by the calls this executor runs one after another.
	guards *netguard.Cache

	// skipCodeCheck turns off the static check so that tests can prove
	// the runtime guards on their own. Never set outside tests.
	skipCodeCheck bool
}

// New returns an executor with cfg's defaults filled in.
func New(cfg Config) *Executor {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MemoryBytes <= 0 {
		cfg.MemoryBytes = DefaultMemoryBytes
	}
	if cfg.OutputBytes <= 0 {
		cfg.OutputBytes = DefaultOutputBytes
	}
	return &Executor{cfg: cfg, cache: newProgramCache(programCacheBytes), guards: netguard.NewCache(fetchGuardCacheSize)}
}

// Execute runs req.JS.Code with req.Args.
//
// A tool that throws (or has a syntax error) gives a Result with IsError
// set and Error as "<Name>: <message> (line N)", N counted in the tool's
// code. Code the static check refuses gives a policy_denied error; a broken
// limit gives a timeout or limit_exceeded error naming the limit, and
// cancelling ctx stops the call the same way.
func (e *Executor) Execute(ctx context.Context, req *executors.Request) (*executors.Result, error) {
	if req == nil || req.JS == nil {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "js: request carries no JavaScript call")
	}
	code := req.JS.Code
	if len(code) > maxCodeBytes {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "js: code is %d bytes, over the %d-byte limit", len(code), maxCodeBytes)
	}
	if !e.skipCodeCheck {
		if err := jscheck.Check(code); err != nil {
			return nil, errdefs.Errorf(errdefs.PolicyDenied, "js: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, stopError(err)
	}

	serial.Lock()
	defer serial.Unlock()
	start := time.Now()
	lim := e.limits(req.Limits)
	if err := waitIdle(ctx, lim.Timeout); err != nil {
		return nil, err
	}
	c := newCall(req, lim)
	c.guards = e.guards
	running = make(chan struct{})
	res, err := c.supervise(ctx, e.cache, running)
	c.mem.done(c.stopReason() != nil)
	if err != nil {
		return nil, err
	}
	res.Duration = time.Since(start)
	return res, nil
}

// Calls are serialised process-wide.
var (
	// serial is held for the whole of a call.
	serial sync.Mutex
	// running is closed when the last call's VM goroutine has returned.
	// A call stopped inside a long native operation is abandoned and may
	// still be running; the next call waits for it, so that its heap
	// growth is not counted against the next call. Guarded by serial.
	running chan struct{}
)

// vmJobs feeds the goroutine that runs calls. One long-lived goroutine
// keeps the stack goja grew into, instead of growing a new one per call.
var (
	vmJobs     chan func()
	vmJobsOnce sync.Once
)

// runOnVMGoroutine hands f to the VM goroutine. Calls are serialised and
// the goroutine is idle before each (waitIdle), so this never blocks long.
func runOnVMGoroutine(f func()) {
	vmJobsOnce.Do(func() {
		vmJobs = make(chan func())
		go func() {
			for job := range vmJobs {
				job()
			}
		}()
	})
	vmJobs <- f
}

// waitIdle waits for an abandoned call to finish, for at most timeout.
func waitIdle(ctx context.Context, timeout time.Duration) error {
	if running == nil {
		return nil
	}
	select {
	case <-running:
		return nil
	default:
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-running:
		return nil
	case <-ctx.Done():
		return stopError(ctx.Err())
	case <-t.C:
		return errdefs.Errorf(errdefs.ExecutorFailed, "js: an earlier call that was stopped is still running")
	}
}

// limits resolves a request's limits against the executor's defaults.
func (e *Executor) limits(l executors.Limits) executors.Limits {
	if l.Timeout <= 0 {
		l.Timeout = e.cfg.Timeout
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = e.cfg.MemoryBytes
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = e.cfg.OutputBytes
	}
	return l
}

// outcome is what the goroutine running the VM hands back.
type outcome struct {
	res *executors.Result
	err error
	// pending is set when the tool's promise had not settled once the VM
	// ran out of work.
	pending bool
}

// supervise runs the call on the VM goroutine and watches it: the wall
// clock, ctx, and the heap. When a limit breaks it interrupts the VM; if the
// VM is stuck inside a single native operation (a huge join, a
// backtracking regular expression) and does not stop within abandonAfter,
// supervise returns anyway and leaves the goroutine to finish on its own;
// running is closed when it does. The host replaces an executor that broke
// a limit, so in production the leftover work dies with the process.
func (c *call) supervise(ctx context.Context, cache *programCache, running chan struct{}) (*executors.Result, error) {
	// fetchCtx bounds the call's fetches. It is cancelled only after the
	// call is stopped (or when supervise returns), so that a fetch never
	// fails on the stop before the stop is recorded.
	fetchCtx, cancelFetches := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelFetches()
	done := make(chan outcome, 1)
	runOnVMGoroutine(func() {
		defer close(running)
		defer func() {
			if x := recover(); x != nil {
				done <- outcome{err: errdefs.Errorf(errdefs.Internal, "js: engine panic: %v", x)}
			}
		}()
		done <- c.run(fetchCtx, cache)
	})

	timer := time.NewTimer(c.lim.Timeout)
	defer timer.Stop()
	ticker := time.NewTicker(memSampleEvery)
	defer ticker.Stop()
	timeout, cancelled, sample := timer.C, ctx.Done(), ticker.C
	var grace <-chan time.Time // set once the call was told to stop
	pending := false
	for {
		var reason *errdefs.Error
		select {
		case o := <-done:
			if err := c.stopReason(); err != nil {
				return nil, err
			}
			if o.pending {
				// Nothing in the realm can settle the promise; only a
				// limit or ctx ends the wait.
				pending, done = true, nil
				continue
			}
			if o.err != nil {
				return nil, o.err
			}
			return c.finish(o.res)
		case <-timeout:
			reason = errdefs.LimitError(errdefs.LimitTimeout, "js: call exceeded its %v time limit", c.lim.Timeout)
		case <-cancelled:
			reason = stopError(ctx.Err())
		case <-sample:
			if reason = c.mem.check(); reason == nil {
				continue
			}
		case <-grace:
			return nil, c.stopReason()
		}
		c.stop(reason)
		cancelFetches()
		if pending {
			return nil, c.stopReason()
		}
		timeout, cancelled, sample = nil, nil, nil
		grace = time.After(abandonAfter)
	}
}

// stopError maps a ctx error to the error a stopped call returns.
func stopError(err error) *errdefs.Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return errdefs.LimitError(errdefs.LimitTimeout, "js: call stopped: %w", err)
	}
	return errdefs.Errorf(errdefs.Unavailable, "js: call stopped: %w", err)
}

// run compiles and runs the call in a fresh realm. It runs on the VM
// goroutine; everything that touches the runtime happens here. ctx bounds
// the call's fetches.
func (c *call) run(ctx context.Context, cache *programCache) outcome {
	prog := cache.get(c.req.JS.Code)
	if prog.limitErr != nil {
		return outcome{err: prog.limitErr}
	}
	if prog.syntaxErr != "" {
		return outcome{res: &executors.Result{IsError: true, Error: prog.syntaxErr}}
	}
	r, err := newRealm(c)
	if err != nil {
		return outcome{err: errdefs.Errorf(errdefs.Internal, "js: set up realm: %w", err)}
	}
	r.ctx = ctx
	if err := r.installFetch(ctx); err != nil {
		return outcome{err: errdefs.Errorf(errdefs.Internal, "js: set up fetch: %w", err)}
	}
	o := c.exec(r, prog)
	if !o.pending && o.err == nil {
		// A call that ends between two samples is still held to its
		// limit, measured while its realm is reachable.
		if err := c.mem.check(); err != nil {
			o = outcome{err: err}
		}
	}
	runtime.KeepAlive(r)
	return o
}

// exec runs the tool function in r and settles its outcome.
func (c *call) exec(r *realm, prog *compiled) outcome {
	args, err := r.parseArgs(c.req.Args)
	var xe *errdefs.Error
	if errors.As(err, &xe) {
		return outcome{err: xe}
	}
	if err != nil {
		return c.vmError(r, err, func() error {
			return errdefs.Errorf(errdefs.InvalidArguments, "js: arguments are not valid JSON: %v", err)
		})
	}
	fnv, err := r.rt.RunProgram(prog.prog)
	if err != nil {
		return c.vmError(r, err, nil)
	}
	fn, ok := goja.AssertFunction(fnv)
	if !ok {
		return outcome{err: errdefs.Errorf(errdefs.Internal, "js: tool wrapper is not a function")}
	}
	ret, err := fn(goja.Undefined(), args, r.context(), r.console(), r.utils())
	if err != nil {
		return c.vmError(r, err, nil)
	}
	p, ok := ret.Export().(*goja.Promise)
	if !ok {
		return outcome{err: errdefs.Errorf(errdefs.Internal, "js: tool wrapper did not return a promise")}
	}
	if o, ended := r.awaitFetches(p); ended {
		return o
	}
	switch p.State() {
	case goja.PromiseStatePending:
		return outcome{pending: true}
	case goja.PromiseStateRejected:
		msg, err := r.describeError(p.Result())
		if err != nil {
			return c.vmError(r, err, nil)
		}
		return outcome{res: &executors.Result{IsError: true, Error: msg}}
	}
	value, err := r.serialise(p.Result())
	if err != nil {
		return c.vmError(r, err, nil)
	}
	return outcome{res: &executors.Result{Value: json.RawMessage(value)}}
}

// vmError turns an error from the VM into an outcome: an interrupt is the
// stop reason already recorded, an uncatchable stack overflow and any
// exception are the tool's own failure, unless orElse says otherwise for
// exceptions.
func (c *call) vmError(r *realm, err error, orElse func() error) outcome {
	var interrupted *goja.InterruptedError
	if errors.As(err, &interrupted) {
		return outcome{err: c.stopReason()}
	}
	var overflow *goja.StackOverflowError
	if errors.As(err, &overflow) {
		msg := "RangeError: Maximum call stack size exceeded" + lineSuffix(toolLine(overflow.Stack()))
		return outcome{res: &executors.Result{IsError: true, Error: msg}}
	}
	if orElse != nil {
		return outcome{err: orElse()}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		msg, derr := r.describeError(ex.Value())
		if derr != nil {
			msg = fmt.Sprintf("Uncaught %v", ex.Value())
		}
		if line := toolLine(ex.Stack()); line > 0 && !hasLineSuffix(msg) {
			msg += lineSuffix(line)
		}
		return outcome{res: &executors.Result{IsError: true, Error: msg}}
	}
	return outcome{err: errdefs.Errorf(errdefs.Internal, "js: %w", err)}
}

// finish applies the output limit to a finished call's result and logs.
// The result must fit on its own; console lines then fill what is left, in
// order, and the first line that does not fit and all after it are dropped.
func (c *call) finish(res *executors.Result) (*executors.Result, error) {
	limit := c.lim.OutputBytes
	if n := int64(len(res.Value)); n > limit {
		return nil, errdefs.LimitError(errdefs.LimitOutput, "js: result is %d bytes, over the %d-byte output limit", n, limit)
	}
	used := int64(len(res.Value))
	res.Truncated = c.out.truncated
	for i, l := range c.out.lines {
		if used+int64(len(l.Message)) > limit {
			c.out.lines, res.Truncated = c.out.lines[:i], true
			break
		}
		used += int64(len(l.Message))
	}
	res.Logs = c.out.lines
	res.OutputBytes = used
	if c.state != nil {
		res.StateChanges = c.state.changes
	}
	return res, nil
}

// Interface guards.
var _ executors.Executor = (*Executor)(nil)
