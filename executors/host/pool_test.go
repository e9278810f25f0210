package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/internal/testutil"
	"github.com/toolcage/toolcage/principal"
)

// The test binary doubles as an executor: started with this variable set it
// serves testExecutor over go-plugin, exactly as toolcage-executor would.
const testExecutorEnv = "TOOLCAGE_TEST_EXECUTOR"

func TestMain(m *testing.M) {
	if os.Getenv(testExecutorEnv) == "1" {
		executors.Serve(executors.ExecutorFunc(testExecute))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type testOp struct {
	Op string `json:"op"`
	MS int    `json:"ms"`
	V  string `json:"v"`
}

func testExecute(ctx context.Context, req *executors.Request) (*executors.Result, error) {
	var op testOp
	if err := json.Unmarshal(req.Args, &op); err != nil {
		return nil, err
	}
	switch op.Op {
	case "echo":
		v, _ := json.Marshal(map[string]any{"v": op.V, "pid": os.Getpid(), "tool": req.Tool, "caller": req.Caller.ID})
		return &executors.Result{Value: v, Logs: []executors.LogLine{{Level: "info", Message: "echo " + op.V}}}, nil
	case "sleep":
		select {
		case <-time.After(time.Duration(op.MS) * time.Millisecond):
			return &executors.Result{Value: json.RawMessage(`"slept"`)}, nil
		case <-ctx.Done():
			return nil, errdefs.LimitError(errdefs.LimitTimeout, "interrupted")
		}
	case "hang":
		time.Sleep(time.Hour)
	case "exit":
		os.Exit(3)
	case "stderr":
		fmt.Fprintln(os.Stderr, op.V)
		return &executors.Result{Value: json.RawMessage(`null`)}, nil
	case "limit":
		return nil, errdefs.LimitError(errdefs.LimitMemory, "memory limit of 1 byte exceeded")
	case "denied":
		return nil, errdefs.Errorf(errdefs.PolicyDenied, "no")
	}
	return nil, errors.New("unknown op " + op.Op)
}

func newTestPool(t *testing.T, mod func(*PoolConfig)) (*Pool, *testutil.SyncBuffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logs := &testutil.SyncBuffer{}
	cfg := PoolConfig{
		Runners: map[string]Runner{"process": &ProcessRunner{Path: exe, Env: []string{testExecutorEnv + "=1"}}},
		Logger:  slog.New(slog.NewTextHandler(logs, nil)),
	}
	if mod != nil {
		mod(&cfg)
	}
	p := NewPool(cfg)
	t.Cleanup(func() { p.Close() })
	return p, logs
}

var testKey = NewKey(executors.KindJS, "process", nil)

func call(t *testing.T, p *Pool, op testOp, timeout time.Duration) (*executors.Result, error) {
	t.Helper()
	args, _ := json.Marshal(op)
	return p.Execute(context.Background(), testKey, &executors.Request{
		CallID: "c1", Tool: "t", Kind: executors.KindJS, Args: args,
		Caller: principal.Caller{ID: "uid:0", Type: "user"},
		Limits: executors.Limits{Timeout: timeout},
	})
}

func pidOf(t *testing.T, res *executors.Result) int {
	t.Helper()
	var v struct{ PID int }
	if err := json.Unmarshal(res.Value, &v); err != nil {
		t.Fatal(err)
	}
	return v.PID
}

func TestPoolRoundTripAndReuse(t *testing.T) {
	p, _ := newTestPool(t, nil)
	res, err := call(t, p, testOp{Op: "echo", V: "hi"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(res.Value, &v); err != nil {
		t.Fatal(err)
	}
	if v["v"] != "hi" || v["tool"] != "t" || v["caller"] != "uid:0" {
		t.Fatalf("result = %s", res.Value)
	}
	if len(res.Logs) != 1 || res.Logs[0].Message != "echo hi" {
		t.Fatalf("logs = %+v", res.Logs)
	}
	first := pidOf(t, res)
	res, err = call(t, p, testOp{Op: "echo"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := pidOf(t, res); got != first {
		t.Fatalf("second call ran in pid %d, want the warm executor %d", got, first)
	}
}

func TestPoolRetiresExecutorAfterFailure(t *testing.T) {
	tests := []struct {
		name      string
		op        testOp
		timeout   time.Duration
		wantCode  errdefs.Code
		wantLimit string
		replaced  bool
	}{
		{"limit", testOp{Op: "limit"}, time.Second, errdefs.LimitExceeded, errdefs.LimitMemory, true},
		{"timeout reported by executor", testOp{Op: "sleep", MS: 5000}, 100 * time.Millisecond, errdefs.Timeout, errdefs.LimitTimeout, true},
		{"hang past grace", testOp{Op: "hang"}, 50 * time.Millisecond, errdefs.Timeout, errdefs.LimitTimeout, true},
		{"exit mid-call", testOp{Op: "exit"}, time.Second, errdefs.ExecutorFailed, "", true},
		{"policy refusal keeps executor", testOp{Op: "denied"}, time.Second, errdefs.PolicyDenied, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newTestPool(t, func(c *PoolConfig) { c.TimeoutGrace = 200 * time.Millisecond })
			res, err := call(t, p, testOp{Op: "echo"}, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			before := pidOf(t, res)
			_, err = call(t, p, tt.op, tt.timeout)
			if got := errdefs.CodeOf(err); got != tt.wantCode {
				t.Fatalf("code = %q (%v), want %q", got, err, tt.wantCode)
			}
			if got := errdefs.LimitOf(err); got != tt.wantLimit {
				t.Fatalf("limit = %q, want %q", got, tt.wantLimit)
			}
			res, err = call(t, p, testOp{Op: "echo"}, time.Second)
			if err != nil {
				t.Fatalf("call after failure: %v", err)
			}
			after := pidOf(t, res)
			if (after != before) != tt.replaced {
				t.Fatalf("pid before %d after %d; replaced want %v", before, after, tt.replaced)
			}
			if tt.replaced && syscall.Kill(before, 0) == nil {
				t.Fatalf("retired executor %d still runs", before)
			}
			var want int64
			if tt.replaced {
				want = 1
			}
			// A background replacement (MinIdle) may add a start.
			if c := p.Counts(); c.Replaced != want || c.Started < 1+want {
				t.Fatalf("counts %+v, want %d replaced, at least %d started", c, want, 1+want)
			}
		})
	}
}

func TestPoolExecutorKilledMidCall(t *testing.T) {
	p, _ := newTestPool(t, nil)
	res, err := call(t, p, testOp{Op: "echo"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, res)
	done := make(chan error, 1)
	go func() {
		_, err := call(t, p, testOp{Op: "sleep", MS: 10000}, 20*time.Second)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if errdefs.CodeOf(err) != errdefs.ExecutorFailed {
			t.Fatalf("err = %v, want executor_failed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("call did not end after its executor was killed")
	}
	res, err = call(t, p, testOp{Op: "echo"}, time.Second)
	if err != nil {
		t.Fatalf("next call: %v", err)
	}
	if pidOf(t, res) == pid {
		t.Fatal("next call ran in the killed executor")
	}
}

func TestPoolFullIsRateLimited(t *testing.T) {
	p, _ := newTestPool(t, func(c *PoolConfig) { c.MaxPerKey = 1; c.AcquireTimeout = 100 * time.Millisecond })
	done := make(chan struct{})
	go func() {
		defer close(done)
		call(t, p, testOp{Op: "sleep", MS: 1000}, 5*time.Second)
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	_, err := call(t, p, testOp{Op: "echo"}, time.Second)
	if errdefs.CodeOf(err) != errdefs.RateLimited {
		t.Fatalf("err = %v, want rate_limited", err)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Fatalf("refused after %v, before the acquire timeout", waited)
	}
	<-done
	if _, err := call(t, p, testOp{Op: "echo"}, time.Second); err != nil {
		t.Fatalf("after the busy call: %v", err)
	}
}

func TestPoolConcurrentCallsUseSeparateExecutors(t *testing.T) {
	p, _ := newTestPool(t, func(c *PoolConfig) { c.MaxPerKey = 4 })
	var wg sync.WaitGroup
	start := time.Now()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := call(t, p, testOp{Op: "sleep", MS: 300}, 5*time.Second); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if el := time.Since(start); el > 1200*time.Millisecond {
		t.Fatalf("4 parallel 300ms calls took %v: they were serialised", el)
	}
	_, started, _ := p.Stats()
	if started != 4 {
		t.Fatalf("started %d executors, want 4", started)
	}
}

func TestPoolStderrReachesLog(t *testing.T) {
	p, logs := newTestPool(t, nil)
	if _, err := call(t, p, testOp{Op: "stderr", V: "hello-from-executor"}, time.Second); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(logs.String(), "hello-from-executor") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("executor stderr not in daemon log:\n%s", logs.String())
}

func TestPoolCloseStopsExecutors(t *testing.T) {
	p, _ := newTestPool(t, nil)
	res, err := call(t, p, testOp{Op: "echo"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, res)
	p.Close()
	if syscall.Kill(pid, 0) == nil {
		// Reaped asynchronously by go-plugin; give it a moment.
		time.Sleep(500 * time.Millisecond)
		if syscall.Kill(pid, 0) == nil {
			t.Fatalf("executor %d still runs after Close", pid)
		}
	}
	if _, err := call(t, p, testOp{Op: "echo"}, time.Second); errdefs.CodeOf(err) != errdefs.Unavailable {
		t.Fatalf("call after Close: %v, want unavailable", err)
	}
}

func TestPoolIdleReaper(t *testing.T) {
	p, _ := newTestPool(t, func(c *PoolConfig) { c.MinIdle = -1; c.IdleTimeout = 100 * time.Millisecond })
	if _, err := call(t, p, testOp{Op: "echo"}, time.Second); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		stats, _, retired := p.Stats()
		if retired == 1 && stats[0].Idle == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("idle executor was not retired")
}

func TestPoolWarm(t *testing.T) {
	p, _ := newTestPool(t, nil)
	if err := p.Warm(context.Background(), testKey, 2); err != nil {
		t.Fatal(err)
	}
	stats, started, _ := p.Stats()
	if started != 2 || stats[0].Idle != 2 {
		t.Fatalf("after Warm(2): started %d, stats %+v", started, stats)
	}
}

func BenchmarkPoolExecute(b *testing.B) {
	exe, _ := os.Executable()
	p := NewPool(PoolConfig{Runners: map[string]Runner{"process": &ProcessRunner{Path: exe, Env: []string{testExecutorEnv + "=1"}}}})
	defer p.Close()
	args, _ := json.Marshal(testOp{Op: "echo"})
	req := func() *executors.Request {
		return &executors.Request{Kind: executors.KindJS, Args: args, Limits: executors.Limits{Timeout: time.Second}}
	}
	if _, err := p.Execute(context.Background(), testKey, req()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Execute(context.Background(), testKey, req()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecutorColdStart(b *testing.B) {
	exe, _ := os.Executable()
	p := NewPool(PoolConfig{Runners: map[string]Runner{"process": &ProcessRunner{Path: exe, Env: []string{testExecutorEnv + "=1"}}}})
	defer p.Close()
	for b.Loop() {
		if err := p.StartOne(context.Background(), testKey); err != nil {
			b.Fatal(err)
		}
	}
}

// callAs is call as a caller that came through worker ("" for none).
func callAs(p *Pool, worker string, op testOp, timeout time.Duration) (*executors.Result, error) {
	args, _ := json.Marshal(op)
	caller := principal.Caller{ID: "uid:0", Type: "user"}
	if worker != "" {
		caller = principal.Caller{ID: "worker:" + worker, Type: "llm", Worker: worker}
	}
	return p.Execute(context.Background(), testKey, &executors.Request{
		CallID: "c1", Tool: "t", Kind: executors.KindJS, Args: args, Caller: caller,
		Limits: executors.Limits{Timeout: timeout},
	})
}

// One worker's calls hold at most WorkerShare executors of a key, all
// workers' at most MaxPerKey-PersonReserve: with a worker spinning at its
// share, another worker still gets an executor, and with workers holding
// every one they may, the person still does. Each cap at its edge: the
// call at the cap runs, the one past it is rate_limited.
func TestPoolWorkerShare(t *testing.T) {
	p, _ := newTestPool(t, func(c *PoolConfig) {
		c.MaxPerKey, c.WorkerShare, c.PersonReserve = 4, 2, 1
		c.AcquireTimeout = 200 * time.Millisecond
	})
	var wg sync.WaitGroup
	spin := func(worker string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := callAs(p, worker, testOp{Op: "sleep", MS: 5000}, 10*time.Second); err != nil {
				t.Errorf("%s's held call: %v", worker, err)
			}
		}()
	}
	busy := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			keys, _, _ := p.Stats()
			if len(keys) == 1 && keys[0].Busy == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("busy never reached %d: %+v", n, keys)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	refused := func(worker, want string) {
		t.Helper()
		_, err := callAs(p, worker, testOp{Op: "echo"}, time.Second)
		if errdefs.CodeOf(err) != errdefs.RateLimited || !strings.Contains(err.Error(), want) {
			t.Fatalf("%q past its cap: %v, want rate_limited naming %q", worker, err, want)
		}
	}
	spin("a")
	spin("a") // at the share
	busy(2)
	refused("a", `worker "a" holds its share of 2`)
	spin("b") // another worker gets one: the workers' part is now full
	busy(3)
	refused("c", "not kept for the person")
	// The person's call gets the reserved executor, at once.
	start := time.Now()
	if _, err := callAs(p, "", testOp{Op: "echo", V: "person"}, 5*time.Second); err != nil {
		t.Fatalf("the person's call while workers spin: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the person waited %v", d)
	}
	wg.Wait()
	// Shares come back when calls end.
	if _, err := callAs(p, "a", testOp{Op: "echo"}, time.Second); err != nil {
		t.Fatalf("after the calls ended: %v", err)
	}
}
