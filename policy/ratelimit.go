package policy

// Rate limiting and concurrency caps for tool calls.
//
// Every call is checked against up to three token buckets and one
// concurrency cap:
//
//   - caller+tool: one bucket per (caller, tool) pair      (PerCallerTool)
//   - tool:        one bucket per tool, shared by callers  (PerTool, or Tools[tool])
//   - caller:      one bucket per caller, shared by tools  (PerCaller)
//   - concurrency: calls of one tool running at once       (Concurrency, or ToolConcurrency[tool])
//
// A call is admitted only if every check passes, and only then is anything
// charged: a refusal by any bucket, or by the concurrency cap, leaves every
// bucket exactly as it was (so a caller hammering a busy tool cannot drain
// its own or other callers' budgets with refused calls).
//
// The token buckets are implemented here rather than with
// golang.org/x/time/rate: all checks and charges happen under one mutex, so
// all-or-nothing is a plain check-then-commit, with none of the
// reserve/cancel dance (rate.Reservation.Cancel restores tokens only
// approximately when other reservations happened in between), and the
// module needs no extra dependency. Time is always passed in (now), never
// read, so behaviour is deterministic under test.
//
// Buckets are created lazily, full, on first use. To bound memory, Allow
// sweeps (at most once per sweepInterval of the passed-in clock) and drops
// buckets that have been idle for longer than idleTTL *and* have refilled
// completely: a full bucket is indistinguishable from a freshly created one,
// so eviction never hands out tokens that a slow-refilling bucket had not
// yet earned back.

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// RateLimit is one token bucket's parameters.
type RateLimit struct {
	// Rate is the refill rate in tokens per second. 0 (or negative, NaN or
	// +Inf) means unlimited: no bucket is kept.
	Rate float64 `mapstructure:"rate" json:"rate"`
	// Burst is the bucket size: how many calls may be made back to back
	// after a quiet period. Values below 1 are treated as 1 when Rate is
	// limited (a bucket that can hold no token would refuse every call).
	Burst int `mapstructure:"burst" json:"burst"`
}

// limited reports whether r describes an actual bucket.
func (r RateLimit) limited() bool {
	return r.Rate > 0 && !math.IsInf(r.Rate, 1) // NaN > 0 is false
}

func (r RateLimit) burst() float64 {
	if r.Burst < 1 {
		return 1
	}
	return float64(r.Burst)
}

// RateLimitConfig configures a RateLimiter. The zero value limits nothing.
type RateLimitConfig struct {
	// PerCallerTool limits each (caller, tool) pair.
	PerCallerTool RateLimit `mapstructure:"per_caller_tool" json:"per_caller_tool"`
	// PerTool limits each tool across all callers.
	PerTool RateLimit `mapstructure:"per_tool" json:"per_tool"`
	// PerCaller limits each caller across all tools.
	PerCaller RateLimit `mapstructure:"per_caller" json:"per_caller"`
	// Tools overrides PerTool for the named tools. An entry with Rate 0
	// makes that tool's aggregate unlimited even if PerTool is set.
	Tools map[string]RateLimit `mapstructure:"tools" json:"tools"`
	// Concurrency is the maximum number of calls of one tool running at
	// once; 0 (or negative) means unlimited.
	Concurrency int `mapstructure:"concurrency" json:"concurrency"`
	// ToolConcurrency overrides Concurrency for the named tools. An entry
	// of 0 makes that tool unlimited even if Concurrency is set.
	ToolConcurrency map[string]int `mapstructure:"tool_concurrency" json:"tool_concurrency"`
}

// Scopes reported in RateLimitedError.Scope.
const (
	ScopeCallerTool  = "caller+tool"
	ScopeTool        = "tool"
	ScopeCaller      = "caller"
	ScopeConcurrency = "concurrency"
	ScopeWorker      = "worker"
)

// ConcurrencyRetryAfter is the RetryAfter hint given when a call is refused
// because the tool's concurrency cap is reached. How long a running call
// will take is unknown, so this is only a back-off suggestion.
const ConcurrencyRetryAfter = 250 * time.Millisecond

const (
	// idleTTL is how long a bucket must go unused before it may be evicted.
	idleTTL = 10 * time.Minute
	// sweepInterval is the minimum (passed-in) time between sweeps.
	sweepInterval = time.Minute
	// tokenEpsilon absorbs float rounding in refills, so that a call made
	// exactly RetryAfter after a refusal is admitted.
	tokenEpsilon = 1e-9
	// waitSlack is the float noise (in nanoseconds) forgiven when rounding
	// RetryAfter up.
	waitSlack = 1e-3
)

// RateLimitedError is returned by Allow when a call is refused.
type RateLimitedError struct {
	// Scope is which limit refused the call: "caller+tool", "tool",
	// "caller" or "concurrency". When several buckets refuse, it is the
	// one that will take longest to admit the call.
	Scope string
	// RetryAfter is how long until the call could be admitted, assuming
	// no other calls consume the same budget meanwhile. For a rate refusal
	// it is exact (rounded up to the nanosecond); for "concurrency" it is
	// ConcurrencyRetryAfter.
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	d := e.RetryAfter
	if d >= time.Millisecond {
		// Round up so "retry after" is never early: 1.2001s -> 1.201s.
		d = (d + time.Millisecond - 1).Truncate(time.Millisecond)
	}
	return fmt.Sprintf("rate limited (%s): retry after %s", e.Scope, d)
}

// bucket is a token bucket. Its fields are guarded by RateLimiter.mu.
type bucket struct {
	tokens float64   // tokens available at last
	last   time.Time // time tokens was computed at; also last use
	rate   float64   // tokens per second
	burst  float64   // capacity
	eps    float64   // shortfall from 1 token still admitted (float noise)
}

func newBucket(r RateLimit, now time.Time) *bucket {
	b := r.burst()
	// waitSlack ns of refill is waitSlack*1e-9*rate tokens; forgive twice
	// that on top of plain float noise.
	eps := tokenEpsilon + 2*waitSlack*1e-9*r.Rate
	return &bucket{tokens: b, last: now, rate: r.Rate, burst: b, eps: eps}
}

// available returns the tokens the bucket holds at now, without updating
// it. A clock going backwards refills nothing.
func (b *bucket) available(now time.Time) float64 {
	t := b.tokens
	if el := now.Sub(b.last); el > 0 {
		t += el.Seconds() * b.rate
		if t > b.burst {
			t = b.burst
		}
	}
	return t
}

// wait is how long until the bucket, holding t tokens, holds one. It is
// rounded up to the nanosecond, after forgiving waitSlack of float noise so
// that an exact 1ms does not come out as 1.000001ms; b.eps makes Allow
// forgive the matching shortfall, so a call at now+wait is admitted.
func (b *bucket) wait(t float64) time.Duration {
	ns := (1 - t) / b.rate * float64(time.Second)
	d := time.Duration(math.Ceil(ns - waitSlack))
	if d < 1 {
		d = 1
	}
	return d
}

type pairKey struct{ caller, tool string }

// RateLimiter admits or refuses tool calls. It is safe for concurrent use.
type RateLimiter struct {
	cfg RateLimitConfig // maps copied; never modified after construction

	mu        sync.Mutex
	pairs     map[pairKey]*bucket
	tools     map[string]*bucket
	callers   map[string]*bucket
	workers   map[string]*bucket // one bucket per worker, at the worker's own rate
	running   map[string]int     // in-flight calls per capped tool; no zero entries
	lastSweep time.Time
}

// NewRateLimiter returns a limiter for cfg. cfg's maps are copied, so later
// changes to them have no effect.
func NewRateLimiter(cfg RateLimitConfig) *RateLimiter {
	if cfg.Tools != nil {
		m := make(map[string]RateLimit, len(cfg.Tools))
		for k, v := range cfg.Tools {
			m[k] = v
		}
		cfg.Tools = m
	}
	if cfg.ToolConcurrency != nil {
		m := make(map[string]int, len(cfg.ToolConcurrency))
		for k, v := range cfg.ToolConcurrency {
			m[k] = v
		}
		cfg.ToolConcurrency = m
	}
	return &RateLimiter{
		cfg:     cfg,
		pairs:   make(map[pairKey]*bucket),
		tools:   make(map[string]*bucket),
		callers: make(map[string]*bucket),
		workers: make(map[string]*bucket),
		running: make(map[string]int),
	}
}

func (l *RateLimiter) toolLimit(tool string) RateLimit {
	if r, ok := l.cfg.Tools[tool]; ok {
		return r
	}
	return l.cfg.PerTool
}

func (l *RateLimiter) toolConcurrency(tool string) int {
	if n, ok := l.cfg.ToolConcurrency[tool]; ok {
		return n
	}
	return l.cfg.Concurrency
}

func noRelease() {}

// Allow decides whether caller may call tool at now. On success it has
// taken one token from every bucket that applies and, if the tool has a
// concurrency cap, a slot; the returned release frees the slot and must be
// called once the call finishes (calling it again is harmless). On refusal
// it returns a *RateLimitedError and charges nothing.
func (l *RateLimiter) Allow(caller, tool string, now time.Time) (release func(), err error) {
	return l.AllowWorker(caller, tool, "", RateLimit{}, now)
}

// AllowWorker is Allow for a call through worker, whose own rate limit
// workerLim is one more bucket shared by all of the worker's calls (a
// worker whose limit changed gets a fresh bucket at the new rate). An
// empty worker or an unlimited workerLim adds no bucket.
func (l *RateLimiter) AllowWorker(caller, tool, worker string, workerLim RateLimit, now time.Time) (release func(), err error) {
	pairLim := l.cfg.PerCallerTool
	toolLim := l.toolLimit(tool)
	callerLim := l.cfg.PerCaller
	maxRunning := l.toolConcurrency(tool)

	l.mu.Lock()
	defer l.mu.Unlock()

	l.maybeSweep(now)

	// Look up (creating if needed) every applicable bucket, then check them
	// all before charging any.
	var bs [4]*bucket
	var avail [4]float64
	scopes := [4]string{ScopeCallerTool, ScopeTool, ScopeCaller, ScopeWorker}
	if pairLim.limited() {
		bs[0] = bucketIn(l.pairs, pairKey{caller, tool}, pairLim, now)
	}
	if toolLim.limited() {
		bs[1] = bucketIn(l.tools, tool, toolLim, now)
	}
	if callerLim.limited() {
		bs[2] = bucketIn(l.callers, caller, callerLim, now)
	}
	if worker != "" && workerLim.limited() {
		if b := l.workers[worker]; b != nil && (b.rate != workerLim.Rate || b.burst != workerLim.burst()) {
			delete(l.workers, worker)
		}
		bs[3] = bucketIn(l.workers, worker, workerLim, now)
	}

	var refused *RateLimitedError
	for i, b := range bs {
		if b == nil {
			continue
		}
		avail[i] = b.available(now)
		if avail[i] < 1-b.eps {
			if w := b.wait(avail[i]); refused == nil || w > refused.RetryAfter {
				refused = &RateLimitedError{Scope: scopes[i], RetryAfter: w}
			}
		}
	}
	if refused != nil {
		return nil, refused
	}
	if maxRunning > 0 && l.running[tool] >= maxRunning {
		return nil, &RateLimitedError{Scope: ScopeConcurrency, RetryAfter: ConcurrencyRetryAfter}
	}

	// Commit.
	for i, b := range bs {
		if b == nil {
			continue
		}
		b.tokens = avail[i] - 1
		if now.After(b.last) {
			b.last = now
		}
	}
	if maxRunning <= 0 {
		return noRelease, nil
	}
	l.running[tool]++
	var done atomic.Bool
	return func() {
		if !done.CompareAndSwap(false, true) {
			return
		}
		l.mu.Lock()
		if n := l.running[tool]; n <= 1 {
			delete(l.running, tool)
		} else {
			l.running[tool] = n - 1
		}
		l.mu.Unlock()
	}, nil
}

// maybeSweep evicts idle, full buckets if a sweep is due. l.mu is held.
// The sweep is O(buckets) but runs at most once per sweepInterval of the
// passed-in clock, so its cost is amortised over the calls in between.
func (l *RateLimiter) maybeSweep(now time.Time) {
	if l.lastSweep.IsZero() {
		l.lastSweep = now
		return
	}
	if now.Sub(l.lastSweep) < sweepInterval {
		return
	}
	l.lastSweep = now
	sweepMap(l.pairs, now)
	sweepMap(l.tools, now)
	sweepMap(l.callers, now)
	sweepMap(l.workers, now)
}

func sweepMap[K comparable](m map[K]*bucket, now time.Time) {
	for k, b := range m {
		if now.Sub(b.last) > idleTTL && b.available(now) >= b.burst {
			delete(m, k)
		}
	}
}

// bucketCount reports how many buckets are held (for tests).
func (l *RateLimiter) bucketCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pairs) + len(l.tools) + len(l.callers) + len(l.workers)
}

// bucketIn returns m's bucket for k, made full on first use.
func bucketIn[K comparable](m map[K]*bucket, k K, lim RateLimit, now time.Time) *bucket {
	b := m[k]
	if b == nil {
		b = newBucket(lim, now)
		m[k] = b
	}
	return b
}
