package enginecompare

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
	"modernc.org/quickjs"
)

// The scripts every engine runs. Each evaluates to a function, so that the
// work measured is calling it, not parsing it.
const (
	// toolSrc is how the executor runs a tool: its code as the body of an
	// async function, arguments parsed from JSON, the settled result
	// serialised back to JSON.
	toolSrc = `(function (json) {
	const tool = async function (args) { return args.a + args.b };
	return tool(JSON.parse(json)).then((v) => JSON.stringify(v === undefined ? null : v));
})`
	loopSrc = `(function (n) { let s = 0; for (let i = 0; i < n; i++) s += i; return s })`
	jsonSrc = `(function (s) { return JSON.stringify(JSON.parse(s)) })`
	bombSrc = `(function () { const a = []; while (true) a.push('x'.repeat(1 << 20) + a.length) })`
)

const (
	argsJSON = `{"a": 1, "b": 2}`
	loopN    = 1_000_000
	loopSum  = loopN * (loopN - 1) / 2
)

// doc10K is a JSON object of about 10 KB: records of mixed fields.
var doc10K = func() string {
	type rec struct {
		ID     int               `json:"id"`
		Name   string            `json:"name"`
		Active bool              `json:"active"`
		Score  float64           `json:"score"`
		Tags   []string          `json:"tags"`
		Attrs  map[string]string `json:"attrs"`
	}
	var recs []rec
	for i := 0; ; i++ {
		recs = append(recs, rec{
			ID: i, Name: "record number " + strconv.Itoa(i), Active: i%2 == 0, Score: float64(i) * 1.25,
			Tags:  []string{"alpha", "beta", "gamma"},
			Attrs: map[string]string{"color": "blue", "size": "large", "note": "héllo ✓"},
		})
		b, _ := json.Marshal(map[string]any{"records": recs})
		if len(b) >= 10_000 {
			return string(b)
		}
	}
}()

// The goja side. goja.Program is not tied to a runtime: compile once.
var (
	gojaTool = goja.MustCompile("tool.js", toolSrc, false)
	gojaLoop = goja.MustCompile("loop.js", loopSrc, false)
	gojaJSON = goja.MustCompile("json.js", jsonSrc, false)
	gojaBomb = goja.MustCompile("bomb.js", bombSrc, false)
)

// gojaFunc runs prog in rt and returns the function it evaluates to.
func gojaFunc(rt *goja.Runtime, prog *goja.Program) (goja.Callable, error) {
	v, err := rt.RunProgram(prog)
	if err != nil {
		return nil, err
	}
	f, ok := goja.AssertFunction(v)
	if !ok {
		return nil, errors.New("not a function")
	}
	return f, nil
}

// gojaCall makes a fresh runtime, runs the tool and returns its JSON result.
func gojaCall(args string) (string, error) {
	rt := goja.New()
	f, err := gojaFunc(rt, gojaTool)
	if err != nil {
		return "", err
	}
	v, err := f(goja.Undefined(), rt.ToValue(args))
	if err != nil {
		return "", err
	}
	p := v.Export().(*goja.Promise) // goja runs the job queue before returning
	if p.State() != goja.PromiseStateFulfilled {
		return "", fmt.Errorf("promise %v: %v", p.State(), p.Result())
	}
	return p.Result().String(), nil
}

// The quickjs side. Bytecode is compiled once and loaded into each VM.
var (
	qjsTool, qjsLoop, qjsJSON, qjsBomb = func() ([]byte, []byte, []byte, []byte) {
		m, err := quickjs.NewVM()
		if err != nil {
			panic(err)
		}
		defer m.Close()
		var out [4][]byte
		for i, src := range []string{toolSrc, loopSrc, jsonSrc, bombSrc} {
			if out[i], err = m.Compile(src, quickjs.EvalGlobal); err != nil {
				panic(err)
			}
		}
		return out[0], out[1], out[2], out[3]
	}()
)

// qjsFunc loads bytecode into m and returns the function it evaluates to;
// the caller frees it.
func qjsFunc(m *quickjs.VM, code []byte) (quickjs.Value, error) {
	return m.EvalBytecodeValue(code)
}

// qjsCall makes a fresh VM, runs the tool and returns its JSON result.
func qjsCall(args string) (string, error) {
	m, err := quickjs.NewVM()
	if err != nil {
		return "", err
	}
	defer m.Close()
	f, err := qjsFunc(m, qjsTool)
	if err != nil {
		return "", err
	}
	defer f.Free()
	p, err := f.CallValue(quickjs.UndefinedValue, args)
	if err != nil {
		return "", err
	}
	defer p.Free()
	var out string
	var failed error
	q, err := p.Then(func(v quickjs.Value) {
		r, err := v.Any()
		if err != nil {
			failed = err
			return
		}
		out, _ = r.(string)
	}, func(v quickjs.Value) { failed = quickjs.ErrorFromValue(v) })
	if err != nil {
		return "", err
	}
	defer q.Free()
	if _, err := m.ExecutePendingJobs(); err != nil {
		return "", err
	}
	return out, failed
}

func TestEnginesAgree(t *testing.T) {
	for name, call := range map[string]func(string) (string, error){"goja": gojaCall, "quickjs": qjsCall} {
		got, err := call(argsJSON)
		if err != nil || got != "3" {
			t.Errorf("%s trivial call = %q, %v; want 3", name, got, err)
		}
	}

	rt := goja.New()
	loop, _ := gojaFunc(rt, gojaLoop)
	if v, err := loop(goja.Undefined(), rt.ToValue(loopN)); err != nil || v.ToInteger() != loopSum {
		t.Errorf("goja loop = %v, %v", v, err)
	}
	rtJSON, _ := gojaFunc(rt, gojaJSON)
	if v, err := rtJSON(goja.Undefined(), rt.ToValue(doc10K)); err != nil || !sameJSON(v.String(), doc10K) {
		t.Errorf("goja JSON round trip differs: %v", err)
	}

	m, err := quickjs.NewVM()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ql, _ := qjsFunc(m, qjsLoop)
	defer ql.Free()
	if v, err := ql.Call(quickjs.UndefinedValue, loopN); err != nil || toInt(v) != loopSum {
		t.Errorf("quickjs loop = %v, %v", v, err)
	}
	qj, _ := qjsFunc(m, qjsJSON)
	defer qj.Free()
	if v, err := qj.Call(quickjs.UndefinedValue, doc10K); err != nil || !sameJSON(v.(string), doc10K) {
		t.Errorf("quickjs JSON round trip differs: %v", err)
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return -1
}

func BenchmarkNewVM(b *testing.B) {
	b.Run("goja", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = goja.New()
		}
	})
	b.Run("quickjs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m, err := quickjs.NewVM()
			if err != nil {
				b.Fatal(err)
			}
			m.Close()
		}
	})
}

func BenchmarkTrivialCall(b *testing.B) {
	for name, call := range map[string]func(string) (string, error){"goja": gojaCall, "quickjs": qjsCall} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := call(argsJSON); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCPULoop(b *testing.B) {
	b.Run("goja", func(b *testing.B) {
		rt := goja.New()
		f, _ := gojaFunc(rt, gojaLoop)
		n := rt.ToValue(loopN)
		for b.Loop() {
			if _, err := f(goja.Undefined(), n); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("quickjs", func(b *testing.B) {
		m, _ := quickjs.NewVM()
		defer m.Close()
		f, _ := qjsFunc(m, qjsLoop)
		defer f.Free()
		for b.Loop() {
			if _, err := f.Call(quickjs.UndefinedValue, loopN); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkJSONRoundTrip10K(b *testing.B) {
	b.Run("goja", func(b *testing.B) {
		rt := goja.New()
		f, _ := gojaFunc(rt, gojaJSON)
		b.SetBytes(int64(len(doc10K)))
		b.ReportAllocs()
		for b.Loop() {
			v, err := f(goja.Undefined(), rt.ToValue(doc10K))
			if err != nil {
				b.Fatal(err)
			}
			_ = v.String()
		}
	})
	b.Run("quickjs", func(b *testing.B) {
		m, _ := quickjs.NewVM()
		defer m.Close()
		f, _ := qjsFunc(m, qjsJSON)
		defer f.Free()
		b.SetBytes(int64(len(doc10K)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.Call(quickjs.UndefinedValue, doc10K); err != nil {
				b.Fatal(err)
			}
		}
	})
}

const bombLimit = 64 << 20

// TestMemoryBomb shows how each engine stops a call that allocates without
// end under a 64 MiB limit. quickjs counts its own allocations and fails
// the allocation that would pass the limit; goja has no such limit, so the
// host has to watch the Go heap and interrupt the VM, as the JS executor
// does. It logs the time to stop and how far memory grew.
func TestMemoryBomb(t *testing.T) {
	t.Run("quickjs", func(t *testing.T) {
		m, err := quickjs.NewVM()
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		m.SetMemoryLimit(bombLimit)
		f, err := qjsFunc(m, qjsBomb)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Free()
		rss := peakRSS()
		start := time.Now()
		_, err = f.Call(quickjs.UndefinedValue)
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), "out of memory") {
			t.Fatalf("err = %v, want out of memory", err)
		}
		t.Logf("quickjs: stopped by its own allocator after %v (%v); peak RSS grew by %d MiB", took.Round(time.Millisecond), err, (peakRSS()-rss)>>20)
	})

	t.Run("goja", func(t *testing.T) {
		rt := goja.New()
		f, err := gojaFunc(rt, gojaBomb)
		if err != nil {
			t.Fatal(err)
		}
		stop := watchHeap(rt, bombLimit)
		rss := peakRSS()
		start := time.Now()
		_, err = f(goja.Undefined())
		took := time.Since(start)
		grew := stop()
		var ie *goja.InterruptedError
		if !errors.As(err, &ie) {
			t.Fatalf("err = %v, want an interrupt", err)
		}
		t.Logf("goja: stopped by a heap watchdog after %v; live heap grew by %d MiB (limit %d MiB), peak RSS by %d MiB", took.Round(time.Millisecond), grew>>20, bombLimit>>20, (peakRSS()-rss)>>20)
	})
}

// watchHeap interrupts rt once the Go heap has grown by more than limit
// live bytes: a minimal version of the executor's watchdog. The returned
// func stops it and reports the largest confirmed growth.
func watchHeap(rt *goja.Runtime, limit uint64) func() uint64 {
	runtime.GC()
	base := heapObjects()
	done := make(chan struct{})
	result := make(chan uint64, 1)
	go func() {
		var grew uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				result <- grew
				return
			case <-tick.C:
				if heapObjects()-base <= limit {
					continue
				}
				runtime.GC() // the sample counts garbage; confirm
				if g := heapObjects() - base; g > limit {
					grew = max(grew, g)
					rt.Interrupt("memory limit")
				}
			}
		}
	}()
	return func() uint64 {
		close(done)
		return <-result
	}
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// peakRSS reads the process's peak resident set (VmHWM) from /proc, 0
// elsewhere. quickjs allocates outside the Go heap, so only RSS sees it.
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
