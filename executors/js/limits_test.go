package js

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
)

// wantLimit fails unless err is a broken-limit error for limit.
func wantLimit(t *testing.T, err error, limit string) {
	t.Helper()
	if errdefs.LimitOf(err) != limit {
		t.Fatalf("err = %v, want the %s limit", err, limit)
	}
	want := errdefs.LimitExceeded
	if limit == errdefs.LimitTimeout {
		want = errdefs.Timeout
	}
	if got := errdefs.CodeOf(err); got != want {
		t.Fatalf("code = %q, want %q", got, want)
	}
}

// slack is how late a stop may come on a loaded test machine.
const slack = time.Second

func TestTimeout(t *testing.T) {
	const limit = 100 * time.Millisecond
	for _, tt := range []struct{ name, code string }{
		{"tight loop", "while (true) {}"},
		{"loop in catch and finally", "try { while (true) {} } catch (e) { return 'caught' } finally { while (true) {} }"},
		{"never-settling promise", "return new Promise(() => {})"},
		{"await in a loop", "while (true) await null"},
		{"endless microtasks", "const f = () => { Promise.resolve().then(f) }; f(); return 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := run(t, false, tt.code, "", executors.Limits{Timeout: limit})
			took := time.Since(start)
			wantLimit(t, err, errdefs.LimitTimeout)
			if took < limit || took > limit+slack {
				t.Errorf("stopped after %v, want about %v", took, limit)
			}
		})
	}
}

// TestTimeoutEdge runs work that takes about half the limit (it must
// finish) and then twice the limit (it must not).
func TestTimeoutEdge(t *testing.T) {
	// Wide enough that a loaded machine under -race still finishes the
	// short call; the long one would run twice the limit if not stopped.
	const limit = time.Second
	code := "const end = Date.now() + args.ms; let n = 0; while (Date.now() < end) n++; return n > 0"
	if _, err := run(t, false, code, `{"ms": 300}`, executors.Limits{Timeout: limit}); err != nil {
		t.Errorf("a 300ms call under a 1s limit: %v", err)
	}
	_, err := run(t, false, code, `{"ms": 2000}`, executors.Limits{Timeout: limit})
	wantLimit(t, err, errdefs.LimitTimeout)
}

func TestContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	e := New(Config{})
	start := time.Now()
	_, err := e.Execute(ctx, &executors.Request{JS: &executors.JSCall{Code: "while (true) {}"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 50*time.Millisecond+slack {
		t.Errorf("stopped after %v", took)
	}

	ctx, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err = e.Execute(ctx, &executors.Request{JS: &executors.JSCall{Code: "return new Promise(() => {})"}})
	wantLimit(t, err, errdefs.LimitTimeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want it to wrap DeadlineExceeded", err)
	}

	// A call that arrives already cancelled does not run.
	_, err = e.Execute(ctx, &executors.Request{JS: &executors.JSCall{Code: "return 1"}})
	wantLimit(t, err, errdefs.LimitTimeout)
}

// TestAbandonStuckNative stops a call stuck inside one native operation (a
// backtracking regular expression, which goja cannot interrupt) and checks
// that Execute returns anyway, and that the next call waits for the stuck
// one to finish rather than sharing the heap with it.
func TestAbandonStuckNative(t *testing.T) {
	e := New(Config{})
	e.skipCodeCheck = true
	const limit = 50 * time.Millisecond
	start := time.Now()
	_, err := e.Execute(context.Background(), &executors.Request{
		Limits: executors.Limits{Timeout: limit},
		JS:     &executors.JSCall{Code: `return /^(?=a)(a|aa)+(\1)?b$/.test('a'.repeat(28))`},
	})
	took := time.Since(start)
	wantLimit(t, err, errdefs.LimitTimeout)
	if took > limit+abandonAfter+slack {
		t.Errorf("Execute returned after %v, want at most %v", took, limit+abandonAfter)
	}
	// The next call waits (within its own timeout) for the stuck one.
	res, err := e.Execute(context.Background(), &executors.Request{
		Limits: executors.Limits{Timeout: 2 * time.Minute},
		JS:     &executors.JSCall{Code: "return 1"},
	})
	if err != nil || string(res.Value) != "1" {
		t.Fatalf("next call: %v %v", res, err)
	}
}

var grewRE = regexp.MustCompile(`heap grew by ([0-9.]+) (MiB|GiB)`)

// grewBy extracts the measured growth from a memory limit error, in MiB.
func grewBy(err error) float64 {
	m := grewRE.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	if m[2] == "GiB" {
		v *= 1024
	}
	return v
}

// TestMemoryBombs checks that a 64 MiB limit stops each kind of memory bomb,
// and logs how far past the limit each got: the watchdog's precision.
func TestMemoryBombs(t *testing.T) {
	const limitMiB = 64
	for _, tt := range []struct {
		name string
		code string
		// overshoot bounds the confirmed growth past the limit, in MiB:
		// typically a few MiB for step-by-step growth, more on a loaded
		// machine, where samples come late.
		overshoot float64
	}{
		{"push 1 MiB strings", "let a = []; while (true) a.push('x'.repeat(1 << 20) + a.length)", 48},
		{"push small objects", "let a = []; while (true) a.push({ i: a.length, s: 'k' + a.length, n: [a.length] })", 48},
		{"push big arrays", "let a = []; while (true) a.push(new Array(1000).fill(a.length))", 48},
		{"grow one object", "const o = {}; let i = 0; while (true) o['k' + i++] = i", 48},
		{"grow a map", "const m = new Map(); let i = 0; while (true) m.set(i, 'v' + i++)", 48},
		{"concatenate strings", "const a = []; let s = ''; while (true) { s += 'abcdefghij'.repeat(1000); if (s.length > 1e6) { a.push(s); s = '' } }", 48},
		// Each doubling is one native step that cannot be interrupted:
		// the stop lands within two steps, three when samples are late on
		// a loaded machine (832 MiB past was seen once under -race).
		{"double a string", "let s = 'x'; while (true) s = s + s", 4 * limitMiB * 4},
		// A typed array is one allocation, made before any check.
		{"typed array", "const b = new Float64Array(32 << 20); b.fill(1); return b.length", 256},
		{"huge repeat", "return 'x'.repeat(2 ** 30)", 0},
		{"huge padEnd", "return ''.padEnd(2 ** 30, 'ab')", 0},
		{"huge join", "return new Array(2 ** 30).join('x')", 0},
		{"huge fill", "return new Array(2 ** 30).fill(0).length", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			settle(t)
			start := time.Now()
			_, err := run(t, false, tt.code, "", executors.Limits{MemoryBytes: limitMiB << 20, Timeout: time.Minute})
			wantLimit(t, err, errdefs.LimitMemory)
			over := grewBy(err) - limitMiB
			t.Logf("stopped after %v, %.1f MiB past the limit: %v", time.Since(start).Round(time.Millisecond), max(over, 0), err)
			if over > tt.overshoot {
				t.Errorf("overshoot %.1f MiB, want at most %.0f", over, tt.overshoot)
			}
		})
	}
}

// TestMemoryEdge: a call that keeps about half its limit live, while making
// garbage, succeeds; the same call with twice the data does not.
func TestMemoryEdge(t *testing.T) {
	const limit = 64 << 20
	code := `
		const keep = [];
		for (let i = 0; i < args.mib; i++) keep.push('y'.repeat(1 << 20) + i);
		let n = 0;
		for (let i = 0; i < 20000; i++) n += ('z' + i).repeat(50).length;
		return keep.length`
	res, err := run(t, false, code, `{"mib": 32}`, executors.Limits{MemoryBytes: limit})
	if err != nil || string(res.Value) != "32" {
		t.Fatalf("half the limit: %v %v", res, err)
	}
	_, err = run(t, false, code, `{"mib": 96}`, executors.Limits{MemoryBytes: limit})
	wantLimit(t, err, errdefs.LimitMemory)
}

// TestMemoryNotCreditedWithGarbage runs a call that leaves a lot of garbage
// and then one that keeps 48 MiB under a 64 MiB limit: the second must not
// be charged for the first one's garbage, nor escape a bomb because a GC
// during it frees that garbage.
func TestMemoryNotCreditedWithGarbage(t *testing.T) {
	e := New(Config{MemoryBytes: 64 << 20})
	e.skipCodeCheck = true
	exec := func(code string) error {
		_, err := e.Execute(context.Background(), &executors.Request{JS: &executors.JSCall{Code: code}})
		return err
	}
	litter := "const a = []; for (let i = 0; i < 56; i++) a.push('g'.repeat(1 << 20) + i); return a.length"
	keep := "const a = []; for (let i = 0; i < 48; i++) a.push('k'.repeat(1 << 20) + i); return a.length"
	bomb := "const a = []; while (true) a.push('b'.repeat(1 << 20) + a.length)"
	for i := range 2 {
		if err := exec(litter); err != nil {
			t.Fatalf("litter %d: %v", i, err)
		}
		if err := exec(keep); err != nil {
			t.Fatalf("keep %d: %v", i, err)
		}
		if err := exec(litter); err != nil {
			t.Fatalf("litter %d: %v", i, err)
		}
		err := exec(bomb)
		if errdefs.LimitOf(err) != errdefs.LimitMemory {
			t.Fatalf("bomb %d: %v", i, err)
		}
		if over := grewBy(err) - 64; over > 48 {
			t.Errorf("bomb %d overshot by %.1f MiB", i, over)
		}
	}
}

func TestOutputLimit(t *testing.T) {
	const limit = 100
	lim := executors.Limits{OutputBytes: limit}
	// The result "xxx…" is n+2 bytes of JSON.
	res, err := run(t, false, "return 'x'.repeat(args.n)", `{"n": 98}`, lim)
	if err != nil || res.OutputBytes != limit {
		t.Fatalf("result at the limit: %v %+v", err, res)
	}
	_, err = run(t, false, "return 'x'.repeat(args.n)", `{"n": 99}`, lim)
	wantLimit(t, err, errdefs.LimitOutput)

	// Logs fill what the result leaves, in order; the rest is dropped.
	res, err = run(t, false, `
		for (let i = 0; i < 10; i++) console.log(String(i).repeat(20));
		return 'ok'`, "", lim)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Logs) != 4 || res.OutputBytes != 4+4*20 {
		t.Errorf("logs: truncated=%v lines=%d bytes=%d, want 4 lines of 20 and the result", res.Truncated, len(res.Logs), res.OutputBytes)
	}
	for i, l := range res.Logs {
		if l.Message != strings.Repeat(strconv.Itoa(i), 20) {
			t.Errorf("line %d = %q", i, l.Message)
		}
	}

	// Logs that fit exactly are not truncated.
	res, err = run(t, false, "console.log('x'.repeat(96)); return 1", "", lim)
	if err != nil || res.Truncated || res.OutputBytes != 97 {
		t.Errorf("exact fit: %v %+v", err, res)
	}

	// A log flood is cut while it runs, not held in memory.
	res, err = run(t, false, "for (let i = 0; i < 1e6; i++) console.log('line ' + i); return 1", "", executors.Limits{OutputBytes: 1 << 10})
	if err != nil || !res.Truncated || res.OutputBytes > 1<<10 {
		t.Errorf("flood: %v %+v", err, res)
	}
}

// TestGuardsKeepSemantics checks that the allocation guards on built-ins
// change nothing for ordinary calls.
func TestGuardsKeepSemantics(t *testing.T) {
	res, err := run(t, false, `
		let calls = 0;
		const two = { valueOf() { calls++; return 2 } };
		const tryit = (f) => { try { return f() } catch (e) { return e.name } };
		return [
			'ab'.repeat(NaN), 'ab'.repeat(2), 'ab'.repeat(two), tryit(() => 'x'.repeat(-1)),
			'x'.padStart(3, '-'), 'x'.padEnd(3), 'x'.padStart(two, '*'),
			[1, 2].join(), [1, 2].join(''), Array.prototype.join.call({ length: 2, 0: 'a', 1: 'b' }, '+'),
			[1, 2, 3].fill(0, 1), [1, 2, 3].fill(9, -1), new Array(3).fill(7), [1, 2, 3].fill(0, NaN, two),
			calls,
		]`, "", executors.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := `["","abab","abab","RangeError","--x","x  ","*x","1,2","12","a+b",[1,0,0],[1,2,9],[7,7,7],[0,0,3],3]`
	if string(res.Value) != want || res.IsError {
		t.Errorf("got %s %s\nwant %s", res.Value, res.Error, want)
	}
}

// TestNoCodeGeneration proves the runtime guard on its own (the static
// check is off): every route to compiling a string throws EvalError.
func TestNoCodeGeneration(t *testing.T) {
	for _, expr := range append([]string{
		"Function('return 1')()",
		"new Function('return 1')()",
		"Function`return 1`",
		"(function(){}).constructor('return 1')()",
		"(() => 1).constructor('return 1')()",
		"(async function(){}).constructor('return 1')",
		"(function*(){}).constructor('yield 1')",
		"Object.getPrototypeOf(async () => {}).constructor('return 1')",
		"Reflect.construct(Function, ['return 1'])",
		"Reflect.apply(Function, null, ['return 1'])",
		"Function.prototype.constructor('return 1')",
		"Function.apply(null, ['return 1'])",
		"Function.call(null, 'return 1')",
		"new (Function.bind(null, 'return 1'))()",
		"utils.hash.constructor('return 1')",
		"console.log.constructor('return 1')",
		"[].map.constructor('return 1')",
		"(class {}).constructor('return 1')",
		"Object.getOwnPropertyDescriptor(Function.prototype, 'constructor').value('return 1')",
	}, redTeamCodeGeneration...) {
		t.Run(expr, func(t *testing.T) {
			res, err := run(t, false, "return "+expr, "", executors.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.HasPrefix(res.Error, "EvalError: Code generation from strings is disabled") {
				t.Errorf("got %s %q, want EvalError", res.Value, res.Error)
			}
		})
	}
	for _, expr := range []string{"eval('1')", "globalThis.eval('1')", "(0, eval)('1')", "globalThis['ev' + 'al']('1')"} {
		t.Run(expr, func(t *testing.T) {
			res, err := run(t, false, "return "+expr, "", executors.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !(strings.HasPrefix(res.Error, "ReferenceError: eval is not defined") || strings.HasPrefix(res.Error, "TypeError")) {
				t.Errorf("got %s %q, want a ReferenceError or TypeError", res.Value, res.Error)
			}
		})
	}
}

// TestConcurrentExecute calls one executor from many goroutines; calls are
// serialised and each gets its own result.
func TestConcurrentExecute(t *testing.T) {
	e := New(Config{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			res, err := e.Execute(context.Background(), &executors.Request{
				Args: json.RawMessage(fmt.Sprintf(`{"i": %d}`, i)),
				JS:   &executors.JSCall{Code: "const g = (function () { return this })(); g.seen = (g.seen || 0) + 1; console.log(args.i); return [args.i, g.seen]"},
			})
			if err != nil {
				t.Error(err)
				return
			}
			if want := fmt.Sprintf("[%d,1]", i); string(res.Value) != want {
				t.Errorf("call %d = %s, want %s", i, res.Value, want)
			}
		})
	}
	wg.Wait()
}
