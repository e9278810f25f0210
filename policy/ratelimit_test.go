package policy

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var rlT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// rlAllow calls Allow and fails the test on a non-rate-limit error shape.
func rlAllow(t *testing.T, l *RateLimiter, caller, tool string, now time.Time) (func(), *RateLimitedError) {
	t.Helper()
	rel, err := l.Allow(caller, tool, now)
	if err == nil {
		if rel == nil {
			t.Fatalf("Allow(%q,%q) returned nil release with nil error", caller, tool)
		}
		return rel, nil
	}
	if rel != nil {
		t.Fatalf("Allow(%q,%q) returned release with error %v", caller, tool, err)
	}
	var rle *RateLimitedError
	if !errors.As(err, &rle) {
		t.Fatalf("Allow(%q,%q) error %T %v, want *RateLimitedError", caller, tool, err, err)
	}
	return nil, rle
}

func TestRateLimitScopes(t *testing.T) {
	lim := RateLimit{Rate: 2, Burst: 3} // 3 back to back, then one per 500ms
	tests := []struct {
		name  string
		cfg   RateLimitConfig
		scope string
		// calls after the burst that share the budget / do not.
		same, other [2]string
	}{
		{"caller+tool", RateLimitConfig{PerCallerTool: lim}, ScopeCallerTool,
			[2]string{"alice", "grep"}, [2]string{"bob", "grep"}},
		{"tool", RateLimitConfig{PerTool: lim}, ScopeTool,
			[2]string{"bob", "grep"}, [2]string{"alice", "sed"}},
		{"caller", RateLimitConfig{PerCaller: lim}, ScopeCaller,
			[2]string{"alice", "sed"}, [2]string{"bob", "grep"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := NewRateLimiter(tc.cfg)
			for i := 0; i < 3; i++ {
				if _, e := rlAllow(t, l, "alice", "grep", rlT0); e != nil {
					t.Fatalf("burst call %d refused: %v", i, e)
				}
			}
			_, e := rlAllow(t, l, "alice", "grep", rlT0)
			if e == nil {
				t.Fatal("call beyond burst admitted")
			}
			if e.Scope != tc.scope || e.RetryAfter != 500*time.Millisecond {
				t.Fatalf("refusal = %+v, want scope %s retry 500ms", e, tc.scope)
			}
			if _, e := rlAllow(t, l, tc.same[0], tc.same[1], rlT0); e == nil || e.Scope != tc.scope {
				t.Fatalf("%v sharing the budget: got %v, want refusal", tc.same, e)
			}
			if _, e := rlAllow(t, l, tc.other[0], tc.other[1], rlT0); e != nil {
				t.Fatalf("%v with its own budget refused: %v", tc.other, e)
			}
			// Partial refill: 499ms is not enough, 500ms is exactly one token.
			if _, e := rlAllow(t, l, "alice", "grep", rlT0.Add(499*time.Millisecond)); e == nil {
				t.Fatal("admitted before a token refilled")
			} else if e.RetryAfter != time.Millisecond {
				t.Fatalf("RetryAfter at 499ms = %v, want 1ms", e.RetryAfter)
			}
			if _, e := rlAllow(t, l, "alice", "grep", rlT0.Add(500*time.Millisecond)); e != nil {
				t.Fatalf("refused after refill: %v", e)
			}
			if _, e := rlAllow(t, l, "alice", "grep", rlT0.Add(500*time.Millisecond)); e == nil {
				t.Fatal("second call after one-token refill admitted")
			}
			// Long idle: refills to burst, not beyond.
			later := rlT0.Add(time.Hour)
			for i := 0; i < 3; i++ {
				if _, e := rlAllow(t, l, "alice", "grep", later); e != nil {
					t.Fatalf("after idle, call %d refused: %v", i, e)
				}
			}
			if _, e := rlAllow(t, l, "alice", "grep", later); e == nil {
				t.Fatal("refill exceeded burst")
			}
		})
	}
}

func TestRateLimitUnlimited(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{})
	for i := 0; i < 1000; i++ {
		rel, e := rlAllow(t, l, "a", "t", rlT0)
		if e != nil {
			t.Fatalf("zero config refused call %d: %v", i, e)
		}
		rel()
	}
	if n := l.bucketCount(); n != 0 {
		t.Fatalf("zero config created %d buckets", n)
	}
}

func TestRateLimitBurstBelowOne(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{PerTool: RateLimit{Rate: 1}})
	if _, e := rlAllow(t, l, "a", "t", rlT0); e != nil {
		t.Fatalf("Burst 0 refused the first call: %v", e)
	}
	if _, e := rlAllow(t, l, "a", "t", rlT0); e == nil || e.RetryAfter != time.Second {
		t.Fatalf("second call: %v, want refusal retry 1s", e)
	}
}

// A refusal by one bucket must not charge the others.
func TestRateLimitAllOrNothing(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{
		PerCallerTool: RateLimit{Rate: 1, Burst: 10},
		PerTool:       RateLimit{Rate: 1, Burst: 2},
		PerCaller:     RateLimit{Rate: 1, Burst: 10},
	})
	for i := 0; i < 2; i++ {
		if _, e := rlAllow(t, l, "alice", "grep", rlT0); e != nil {
			t.Fatal(e)
		}
	}
	// grep's tool bucket is empty; hammer it. None of these may touch
	// alice's caller+tool or caller buckets.
	for i := 0; i < 50; i++ {
		if _, e := rlAllow(t, l, "alice", "grep", rlT0); e == nil || e.Scope != ScopeTool {
			t.Fatalf("call %d: %v, want tool refusal", i, e)
		}
	}
	// alice still has 8 caller tokens to spend on other tools.
	for i := 0; i < 8; i++ {
		if _, e := rlAllow(t, l, "alice", fmt.Sprint("tool", i), rlT0); e != nil {
			t.Fatalf("alice's caller budget was charged by refused calls: call %d: %v", i, e)
		}
	}
	if _, e := rlAllow(t, l, "alice", "other", rlT0); e == nil || e.Scope != ScopeCaller {
		t.Fatalf("want caller refusal, got %v", e)
	}

	// A concurrency refusal charges no bucket either.
	l = NewRateLimiter(RateLimitConfig{PerCaller: RateLimit{Rate: 1, Burst: 2}, Concurrency: 1})
	rel, e := rlAllow(t, l, "alice", "grep", rlT0)
	if e != nil {
		t.Fatal(e)
	}
	for i := 0; i < 10; i++ {
		if _, e := rlAllow(t, l, "alice", "grep", rlT0); e == nil || e.Scope != ScopeConcurrency {
			t.Fatalf("want concurrency refusal, got %v", e)
		}
	}
	rel()
	if _, e := rlAllow(t, l, "alice", "grep", rlT0); e != nil {
		t.Fatalf("caller budget charged by concurrency refusals: %v", e)
	}
}

// When several buckets refuse, the reported one is the slowest to admit.
func TestRateLimitRetryAfterLongest(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{
		PerCallerTool: RateLimit{Rate: 10, Burst: 1},  // 100ms
		PerTool:       RateLimit{Rate: 0.5, Burst: 1}, // 2s
		PerCaller:     RateLimit{Rate: 4, Burst: 1},   // 250ms
	})
	if _, e := rlAllow(t, l, "a", "t", rlT0); e != nil {
		t.Fatal(e)
	}
	_, e := rlAllow(t, l, "a", "t", rlT0)
	if e == nil || e.Scope != ScopeTool || e.RetryAfter != 2*time.Second {
		t.Fatalf("got %+v, want tool / 2s", e)
	}
	// Retrying exactly after RetryAfter succeeds.
	if _, e := rlAllow(t, l, "a", "t", rlT0.Add(e.RetryAfter)); e != nil {
		t.Fatalf("refused at RetryAfter: %v", e)
	}
}

func TestRateLimitRetryAfterExact(t *testing.T) {
	// Awkward rates: a call at now+RetryAfter must always be admitted, and
	// one a little earlier refused.
	for _, r := range []float64{3, 7, 0.3, 1.0 / 3, 1000, 12345.678} {
		l := NewRateLimiter(RateLimitConfig{PerTool: RateLimit{Rate: r, Burst: 1}})
		now := rlT0
		for i := 0; i < 20; i++ {
			if _, e := rlAllow(t, l, "a", "t", now); e != nil {
				t.Fatalf("rate %v step %d: refused at RetryAfter: %v", r, i, e)
			}
			_, e := rlAllow(t, l, "a", "t", now)
			if e == nil || e.RetryAfter <= 0 {
				t.Fatalf("rate %v: got %v, want refusal with positive RetryAfter", r, e)
			}
			want := time.Duration(float64(time.Second) / r)
			if d := e.RetryAfter - want; d < -time.Microsecond || d > time.Microsecond {
				t.Fatalf("rate %v: RetryAfter %v, want ~%v", r, e.RetryAfter, want)
			}
			if e.RetryAfter > 10*time.Microsecond {
				if _, e2 := rlAllow(t, l, "a", "t", now.Add(e.RetryAfter-5*time.Microsecond)); e2 == nil {
					t.Fatalf("rate %v: admitted before RetryAfter", r)
				}
			}
			now = now.Add(e.RetryAfter)
		}
	}
}

func TestRateLimitToolOverrides(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{
		PerTool: RateLimit{Rate: 1, Burst: 1},
		Tools: map[string]RateLimit{
			"fast": {Rate: 100, Burst: 5},
			"free": {}, // unlimited despite PerTool
		},
	})
	count := func(tool string) int {
		n := 0
		for i := 0; i < 100; i++ {
			if _, e := rlAllow(t, l, "a", tool, rlT0); e == nil {
				n++
			} else if e.Scope != ScopeTool {
				t.Fatalf("%s: scope %q", tool, e.Scope)
			}
		}
		return n
	}
	if n := count("slow"); n != 1 {
		t.Errorf("default tool admitted %d, want 1", n)
	}
	if n := count("fast"); n != 5 {
		t.Errorf("override tool admitted %d, want 5", n)
	}
	if n := count("free"); n != 100 {
		t.Errorf("unlimited override admitted %d, want 100", n)
	}
	_, e := rlAllow(t, l, "a", "fast", rlT0)
	if e == nil || e.RetryAfter != 10*time.Millisecond {
		t.Errorf("fast RetryAfter: %v, want 10ms", e)
	}
}

func TestRateLimitConcurrency(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{
		Concurrency:     2,
		ToolConcurrency: map[string]int{"single": 1, "free": 0},
	})
	r1, e := rlAllow(t, l, "a", "t", rlT0)
	if e != nil {
		t.Fatal(e)
	}
	r2, e := rlAllow(t, l, "b", "t", rlT0)
	if e != nil {
		t.Fatal(e)
	}
	_, e = rlAllow(t, l, "c", "t", rlT0)
	if e == nil || e.Scope != ScopeConcurrency || e.RetryAfter != ConcurrencyRetryAfter {
		t.Fatalf("third concurrent call: %v, want concurrency refusal", e)
	}
	if _, e := rlAllow(t, l, "a", "other", rlT0); e != nil {
		t.Fatalf("cap is per tool, other tool refused: %v", e)
	}

	// Double release frees only one slot.
	r1()
	r1()
	r3, e := rlAllow(t, l, "c", "t", rlT0)
	if e != nil {
		t.Fatalf("after release: %v", e)
	}
	if _, e := rlAllow(t, l, "d", "t", rlT0); e == nil {
		t.Fatal("double release freed two slots")
	}
	r2()
	r3()
	r3()
	r2()
	l.mu.Lock()
	if n, ok := l.running["t"]; ok {
		t.Errorf("running[t] = %d after all released, want no entry", n)
	}
	l.mu.Unlock()

	// Overrides.
	rs, e := rlAllow(t, l, "a", "single", rlT0)
	if e != nil {
		t.Fatal(e)
	}
	if _, e := rlAllow(t, l, "b", "single", rlT0); e == nil || e.Scope != ScopeConcurrency {
		t.Fatalf("override cap 1: %v", e)
	}
	rs()
	for i := 0; i < 10; i++ {
		if _, e := rlAllow(t, l, "a", "free", rlT0); e != nil {
			t.Fatalf("override 0 = unlimited, call %d refused: %v", i, e)
		}
	}
}

func TestRateLimitErrorString(t *testing.T) {
	for _, tc := range []struct {
		e    RateLimitedError
		want string
	}{
		{RateLimitedError{ScopeTool, 1200 * time.Millisecond}, "rate limited (tool): retry after 1.2s"},
		{RateLimitedError{ScopeCaller, 1200*time.Millisecond + 1}, "rate limited (caller): retry after 1.201s"},
		{RateLimitedError{ScopeConcurrency, 250 * time.Millisecond}, "rate limited (concurrency): retry after 250ms"},
		{RateLimitedError{ScopeCallerTool, 10 * time.Microsecond}, "rate limited (caller+tool): retry after 10µs"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

// 32 goroutines × 200 calls at a fixed instant: exactly the budget is
// admitted, whatever the interleaving. Run under -race.
func TestRateLimitConcurrentLoad(t *testing.T) {
	const goroutines, calls = 32, 200
	l := NewRateLimiter(RateLimitConfig{
		PerCallerTool: RateLimit{Rate: 1, Burst: 1000}, // never the binding limit
		PerTool:       RateLimit{Rate: 1, Burst: 50},
		PerCaller:     RateLimit{Rate: 1, Burst: 30},
		Concurrency:   4,
	})
	tools := []string{"t0", "t1", "t2"}
	var admitted, byConc atomic.Int64
	var perTool [3]atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			caller := fmt.Sprint("c", g%8)
			for i := 0; i < calls; i++ {
				ti := (g + i) % len(tools)
				rel, err := l.Allow(caller, tools[ti], rlT0)
				if err != nil {
					var rle *RateLimitedError
					if !errors.As(err, &rle) {
						t.Errorf("unexpected error %v", err)
						return
					}
					if rle.Scope == ScopeConcurrency {
						byConc.Add(1)
					}
					continue
				}
				admitted.Add(1)
				perTool[ti].Add(1)
				rel()
				rel()
			}
		}()
	}
	wg.Wait()
	// Concurrency refusals are timing dependent, but charge nothing; they
	// can only be retried away here, so retry until the budget is spent.
	for {
		progress := false
		for c := 0; c < 8; c++ {
			for ti, tool := range tools {
				if rel, err := l.Allow(fmt.Sprint("c", c), tool, rlT0); err == nil {
					admitted.Add(1)
					perTool[ti].Add(1)
					rel()
					progress = true
				}
			}
		}
		if !progress {
			break
		}
	}
	// Budget: 3 tools × 50 = 150, 8 callers × 30 = 240; tool-bound.
	if got := admitted.Load(); got != 150 {
		t.Fatalf("admitted %d, want exactly 150 (concurrency refusals %d)", got, byConc.Load())
	}
	for i := range perTool {
		if n := perTool[i].Load(); n != 50 {
			t.Errorf("tool %d admitted %d, want 50", i, n)
		}
	}
	l.mu.Lock()
	if len(l.running) != 0 {
		t.Errorf("running not empty after all released: %v", l.running)
	}
	l.mu.Unlock()
}

// Same, with no concurrency cap: the in-flight count is exact without
// retries.
func TestRateLimitConcurrentLoadExact(t *testing.T) {
	const goroutines, calls = 32, 200
	l := NewRateLimiter(RateLimitConfig{
		PerTool:   RateLimit{Rate: 5, Burst: 100},
		PerCaller: RateLimit{Rate: 5, Burst: 1000},
	})
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < calls; i++ {
				if rel, err := l.Allow(fmt.Sprint("c", g), "tool", rlT0); err == nil {
					admitted.Add(1)
					rel()
				}
			}
		}()
	}
	wg.Wait()
	if got := admitted.Load(); got != 100 {
		t.Fatalf("admitted %d, want exactly 100", got)
	}
}

func TestRateLimitEviction(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{
		PerCallerTool: RateLimit{Rate: 1, Burst: 5},
		PerCaller:     RateLimit{Rate: 0.001, Burst: 2}, // takes 2000s to refill
	})
	for c := 0; c < 100; c++ {
		if _, e := rlAllow(t, l, fmt.Sprint("c", c), "t", rlT0); e != nil {
			t.Fatal(e)
		}
	}
	if n := l.bucketCount(); n != 200 {
		t.Fatalf("buckets = %d, want 200", n)
	}
	// 9 minutes on: nothing idle long enough.
	if _, e := rlAllow(t, l, "x", "t", rlT0.Add(9*time.Minute)); e != nil {
		t.Fatal(e)
	}
	if n := l.bucketCount(); n != 202 {
		t.Fatalf("buckets = %d, want 202", n)
	}
	// 11 minutes on: the 100 full caller+tool buckets go; the caller
	// buckets are still refilling (1 of 2 tokens after 660s) and must stay,
	// or eviction would hand out tokens they have not earned back.
	if _, e := rlAllow(t, l, "y", "t", rlT0.Add(11*time.Minute)); e != nil {
		t.Fatal(e)
	}
	if n := l.bucketCount(); n != 104 {
		t.Fatalf("buckets = %d, want 104 (100 refilling caller buckets + x + y)", n)
	}
	// c0 has spent its single refilled token... it has 1.66 now; two calls
	// must see one admitted and one refused, exactly as without eviction.
	at := rlT0.Add(11 * time.Minute)
	if _, e := rlAllow(t, l, "c0", "t", at); e != nil {
		t.Fatalf("c0 first call: %v", e)
	}
	if _, e := rlAllow(t, l, "c0", "t", at); e == nil || e.Scope != ScopeCaller {
		t.Fatalf("c0 second call: %v, want caller refusal (bucket must not have been reset)", e)
	}
	// Much later everything idle and full goes.
	if _, e := rlAllow(t, l, "z", "u", rlT0.Add(10*time.Hour)); e != nil {
		t.Fatal(e)
	}
	if n := l.bucketCount(); n != 2 {
		t.Fatalf("buckets = %d after long idle, want 2 (z's)", n)
	}
}

func TestRateLimitConfigCopied(t *testing.T) {
	cfg := RateLimitConfig{
		Tools:           map[string]RateLimit{"t": {Rate: 1, Burst: 1}},
		ToolConcurrency: map[string]int{"t": 1},
	}
	l := NewRateLimiter(cfg)
	cfg.Tools["t"] = RateLimit{}
	cfg.ToolConcurrency["t"] = 0
	if _, e := rlAllow(t, l, "a", "t", rlT0); e != nil {
		t.Fatal(e)
	}
	if _, e := rlAllow(t, l, "a", "t", rlT0); e == nil {
		t.Fatal("mutating cfg maps after construction changed the limiter")
	}
}

func BenchmarkAllow(b *testing.B) {
	l := NewRateLimiter(RateLimitConfig{
		PerCallerTool: RateLimit{Rate: 1e9, Burst: 1 << 30},
		PerTool:       RateLimit{Rate: 1e9, Burst: 1 << 30},
		PerCaller:     RateLimit{Rate: 1e9, Burst: 1 << 30},
		Concurrency:   1 << 20,
	})
	callers := make([]string, 64)
	for i := range callers {
		callers[i] = fmt.Sprint("caller", i)
	}
	tools := []string{"grep", "sed", "http", "shell"}
	b.Run("serial", func(b *testing.B) {
		now := rlT0
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			rel, err := l.Allow(callers[i&63], tools[i&3], now)
			if err != nil {
				b.Fatal(err)
			}
			rel()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				rel, err := l.Allow(callers[i&63], tools[i&3], rlT0)
				if err != nil {
					b.Fatal(err)
				}
				rel()
				i++
			}
		})
	})
}

func TestRateLimitWorker(t *testing.T) {
	wl := RateLimit{Rate: 1, Burst: 2}
	l := NewRateLimiter(RateLimitConfig{})
	for i := 0; i < 2; i++ {
		if _, err := l.AllowWorker("a", "grep", "ops", wl, rlT0); err != nil {
			t.Fatalf("burst call %d: %v", i, err)
		}
	}
	// The worker's bucket is shared by all its callers and tools.
	_, err := l.AllowWorker("b", "sed", "ops", wl, rlT0)
	var rle *RateLimitedError
	if !errors.As(err, &rle) || rle.Scope != ScopeWorker || rle.RetryAfter != time.Second {
		t.Fatalf("third call: %v", err)
	}
	// Another worker, and a call through none, are not charged.
	if _, err := l.AllowWorker("a", "grep", "dev", wl, rlT0); err != nil {
		t.Fatalf("other worker: %v", err)
	}
	if _, err := l.Allow("a", "grep", rlT0); err != nil {
		t.Fatalf("no worker: %v", err)
	}
	// A changed limit starts a fresh bucket at the new rate.
	if _, err := l.AllowWorker("a", "grep", "ops", RateLimit{Rate: 5, Burst: 1}, rlT0); err != nil {
		t.Fatalf("new limit: %v", err)
	}
	if _, err := l.AllowWorker("a", "grep", "ops", RateLimit{Rate: 5, Burst: 1}, rlT0); err == nil {
		t.Fatal("new limit's burst of 1 not kept")
	}
	if n := l.bucketCount(); n != 2 {
		t.Fatalf("%d buckets, want 2", n)
	}
}
