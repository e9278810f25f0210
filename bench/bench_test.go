package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/executors/host"
	"github.com/toolcage/toolcage/internal/testutil"
)

// binDir returns the directory with toolcage and toolcage-executor, built
// by `make build` (TOOLCAGE_BIN_DIR) or here.
func binDir(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tc-bench-bin")
		if err != nil {
			binErr = err
			return
		}
		binPath, binErr = testutil.Binaries(dir, "toolcage", "toolcage-executor")
		if binPath != dir {
			os.Remove(dir)
		}
	})
	if binErr != nil {
		tb.Fatal(binErr)
	}
	return binPath
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

type daemonProc struct {
	cmd    *exec.Cmd
	client *api.Client
	dir    string
	socket string
}

// startDaemon runs `toolcage daemon` as its own process.
func startDaemon(tb testing.TB) *daemonProc { return startDaemonEnv(tb) }

func (d *daemonProc) stop() {
	d.cmd.Process.Signal(os.Interrupt)
	d.cmd.Wait()
	os.RemoveAll(d.dir)
}

// rssMiB reads a process's resident set size.
func rssMiB(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS for %d", pid)
}

const trivialTool = `{"name":"add","description":"adds","kind":"js",
 "parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]},
 "js":{"code":"return args.a + args.b"}}`

var addArgs = api.CallRequest{Arguments: json.RawMessage(`{"a":1,"b":2}`)}

func callAdd(tb testing.TB, c *api.Client) {
	var r api.CallResponse
	if err := c.Do(context.Background(), "POST", "/v1/tools/add/call", addArgs, &r); err != nil {
		tb.Fatal(err)
	}
	if string(r.Result) != "3" {
		tb.Fatalf("result %s", r.Result)
	}
}

func setupAdd(b *testing.B) *daemonProc {
	d := startDaemon(b)
	if err := d.client.Do(context.Background(), "POST", "/v1/tools", []byte(trivialTool), nil); err != nil {
		b.Fatal(err)
	}
	for range 50 { // warm executor, caches, connections
		callAdd(b, d.client)
	}
	return d
}

// BenchmarkJSCallLatency: one trivial JS tool call through the socket API
// with a warm executor; reports the median.
func BenchmarkJSCallLatency(b *testing.B) {
	d := setupAdd(b)
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t := time.Now()
		callAdd(b, d.client)
		lat = append(lat, time.Since(t))
	}
	b.ReportMetric(float64(median(lat).Microseconds()), "p50-µs")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}

func benchThroughput(b *testing.B, conc int) {
	d := setupAdd(b)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	work := make(chan struct{}, b.N)
	for range b.N {
		work <- struct{}{}
	}
	close(work)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				callAdd(b, d.client)
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}

// BenchmarkJSCallThroughputC1 and C16: calls per second at concurrency 1, 16.
func BenchmarkJSCallThroughputC1(b *testing.B)  { benchThroughput(b, 1) }
func BenchmarkJSCallThroughputC16(b *testing.B) { benchThroughput(b, 16) }

// BenchmarkExecutorColdStart: start a real toolcage-executor and complete
// the go-plugin handshake.
func BenchmarkExecutorColdStart(b *testing.B) {
	exe := filepath.Join(binDir(b), "toolcage-executor")
	benchColdStart(b, &host.ProcessRunner{Path: exe})
}

// benchColdStart reports the median time r takes to start a JS executor
// and complete the handshake.
func benchColdStart(b *testing.B, r host.Runner) {
	p := host.NewPool(host.PoolConfig{Runners: map[string]host.Runner{"process": r}})
	defer p.Close()
	key := host.NewKey(executors.KindJS, "process", nil)
	var lat []time.Duration
	for b.Loop() {
		t := time.Now()
		if err := p.StartOne(context.Background(), key); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	b.ReportMetric(float64(median(lat).Microseconds())/1000, "p50-ms")
}

// BenchmarkDaemonIdleRSS: resident memory of an idle daemon (executors are
// separate processes and not counted).
func BenchmarkDaemonIdleRSS(b *testing.B) {
	d := startDaemon(b)
	time.Sleep(500 * time.Millisecond)
	var rss float64
	for b.Loop() {
		var err error
		if rss, err = rssMiB(d.cmd.Process.Pid); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(rss, "MiB")
}
