package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
)

// Shell, HTTP and JS calls measured against what they wrap: the same work
// done directly from Go, and the same call with the sandbox off. Each pair
// runs interleaved in one loop, so drift on a shared machine hits both.

// noSandbox is the daemon environment that runs executors as plain child
// processes (sandbox.enabled: false).
const noSandbox = "TOOLCAGE_SANDBOX_ENABLED=false"

// startDaemonEnv is startDaemon with TOOLCAGE_* settings added to the
// daemon's environment.
func startDaemonEnv(tb testing.TB, env ...string) *daemonProc {
	tb.Helper()
	bin := binDir(tb)
	dir, err := os.MkdirTemp("", "tcb")
	if err != nil {
		tb.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	args := []string{"--socket", sock, "daemon", "--data-dir", filepath.Join(dir, "data"), "--log-level", "error"}
	// TOOLCAGE_BENCH_PROFILE=DIR writes each benchmark daemon's CPU profile
	// there, named for the benchmark and its settings.
	if pd := os.Getenv("TOOLCAGE_BENCH_PROFILE"); pd != "" {
		name := strings.Join(append([]string{tb.Name()}, env...), "-")
		args = append(args, "--cpu-profile", filepath.Join(pd, strings.ReplaceAll(name, "/", "_")+".daemon.pprof"))
	}
	cmd := exec.Command(filepath.Join(bin, "toolcage"), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		tb.Fatal(err)
	}
	d := &daemonProc{cmd: cmd, client: api.NewClient(sock), dir: dir, socket: sock}
	tb.Cleanup(d.stop)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if d.client.Do(context.Background(), "GET", "/v1/health", nil, nil) == nil {
			return d
		}
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	tb.Fatalf("daemon (%s) did not come up", strings.Join(env, " "))
	return nil
}

// createTool registers a JSON definition.
func createTool(tb testing.TB, c *api.Client, def string) {
	tb.Helper()
	if err := c.Do(context.Background(), "POST", "/v1/tools", []byte(def), nil); err != nil {
		tb.Fatalf("creating a tool: %v", err)
	}
}

// callTool calls a tool and fails unless it ran without error.
func callTool(tb testing.TB, c *api.Client, name string, args api.CallRequest) *api.CallResponse {
	var r api.CallResponse
	if err := c.Do(context.Background(), "POST", "/v1/tools/"+name+"/call", args, &r); err != nil {
		tb.Fatal(err)
	}
	if r.IsError {
		tb.Fatalf("%s: %s", name, r.Error)
	}
	return &r
}

// timed runs f and returns how long it took.
func timed(f func()) time.Duration {
	t := time.Now()
	f()
	return time.Since(t)
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// echoTool is a trivial shell tool: one simple command, so it runs as an
// argv with no shell.
const echoTool = `{"name":"echo_x","description":"prints x","kind":"shell",
 "parameters":{"type":"object","properties":{}},
 "shell":{"command":"echo x"}}`

var noArgs = api.CallRequest{Arguments: json.RawMessage(`{}`)}

// BenchmarkShellCall: a trivial shell tool through the socket API of a
// sandboxed daemon, of a daemon with the sandbox off, and `sh -c "echo x"`
// run directly from Go, interleaved. Reports the three medians, what the
// daemon adds to running the process directly, and what the sandbox adds.
func BenchmarkShellCall(b *testing.B) {
	sbx, plain := startDaemon(b), startDaemonEnv(b, noSandbox)
	for _, d := range []*daemonProc{sbx, plain} {
		createTool(b, d.client, echoTool)
		if r := callTool(b, d.client, "echo_x", noArgs); !strings.Contains(string(r.Result), "x") {
			b.Fatalf("echo_x returned %s", r.Result)
		}
	}
	direct := func() {
		if err := exec.Command("sh", "-c", "echo x").Run(); err != nil {
			b.Fatal(err)
		}
	}
	for range 20 { // warm executors, caches, connections
		callTool(b, sbx.client, "echo_x", noArgs)
		callTool(b, plain.client, "echo_x", noArgs)
		direct()
	}
	var sLat, pLat, dLat []time.Duration
	i := 0
	for b.Loop() {
		steps := []func(){
			func() { sLat = append(sLat, timed(func() { callTool(b, sbx.client, "echo_x", noArgs) })) },
			func() { pLat = append(pLat, timed(func() { callTool(b, plain.client, "echo_x", noArgs) })) },
			func() { dLat = append(dLat, timed(direct)) },
		}
		for j := range steps { // rotate the order, so none is always first
			steps[(i+j)%len(steps)]()
		}
		i++
	}
	s, p, d := median(sLat), median(pLat), median(dLat)
	b.ReportMetric(us(s), "p50-µs")
	b.ReportMetric(us(p), "nosandbox-p50-µs")
	b.ReportMetric(us(d), "direct-p50-µs")
	b.ReportMetric(ms(s-d), "vs-direct-ms")
	b.ReportMetric(ms(s-p), "sandbox-added-ms")
}

// BenchmarkHTTPCall: an HTTP tool GETting a local server through the socket
// API (sandboxed daemon, network guard on, localhost allowed as a private
// host), against http.Get of the same URL from Go, interleaved.
func BenchmarkHTTPCall(b *testing.B) {
	url := localAPI(b)
	d := startDaemonEnv(b, "TOOLCAGE_HTTP_ALLOW_PRIVATE_HOSTS=localhost")
	createTool(b, d.client, fmt.Sprintf(`{"name":"local_get","description":"GET a local server","kind":"http",
	 "http":{"method":"GET","url":%q,"allowed_domains":["localhost"]}}`, url))
	if r := callTool(b, d.client, "local_get", noArgs); !strings.Contains(string(r.Result), "ok") {
		b.Fatalf("local_get returned %s", r.Result)
	}
	// The same call with an API key, which the egress proxy puts in.
	createKeyTool(b, d, "local_get_key", "process", url)
	direct := func() {
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("direct GET: %v %s", err, resp.Status)
		}
	}
	for range 20 {
		callTool(b, d.client, "local_get", noArgs)
		callTool(b, d.client, "local_get_key", noArgs)
		direct()
	}
	var tLat, kLat, dLat []time.Duration
	i := 0
	for b.Loop() {
		steps := []func(){
			func() { tLat = append(tLat, timed(func() { callTool(b, d.client, "local_get", noArgs) })) },
			func() { kLat = append(kLat, timed(func() { callTool(b, d.client, "local_get_key", noArgs) })) },
			func() { dLat = append(dLat, timed(direct)) },
		}
		for j := range steps { // rotate the order, so no step always goes first
			steps[(i+j)%len(steps)]()
		}
		i++
	}
	t, k, g := median(tLat), median(kLat), median(dLat)
	b.ReportMetric(us(t), "p50-µs")
	b.ReportMetric(us(g), "direct-p50-µs")
	b.ReportMetric(ms(t-g), "vs-direct-ms")
	b.ReportMetric(us(k), "egress-p50-µs")
	b.ReportMetric(ms(k-t), "egress-added-ms")
}

// localAPI serves {"ok":true} on 127.0.0.1 and returns its URL, named
// by localhost (which the daemons here allow as a private host).
func localAPI(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"ok":true}`)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return fmt.Sprintf("http://localhost:%d/ok", ln.Addr().(*net.TCPAddr).Port)
}

// createKeyTool stores the secret bench_key (once per daemon is enough;
// again is harmless) and makes name, an HTTP tool GETting url with it in
// a header, which the egress proxy puts in, with the isolation given.
func createKeyTool(b *testing.B, d *daemonProc, name, isolation, url string) {
	key := "bench-key-Q7r2Lm9Xw4Kp"
	if err := d.client.Do(context.Background(), "PUT", "/v1/secrets/bench_key", api.SecretValue{Value: &key}, nil); err != nil {
		b.Fatal(err)
	}
	createTool(b, d.client, fmt.Sprintf(`{"name":%q,"description":"GET a local server with a key","kind":"http","isolation":%q,
	 "secrets":["bench_key"],"http":{"method":"GET","url":%q,"headers":{"X-Api-Key":"{{secret.bench_key}}"},"allowed_domains":["localhost"]}}`, name, isolation, url))
}

// BenchmarkJSCallSandbox: the trivial JS tool of BenchmarkJSCallLatency on
// a sandboxed daemon and on one with the sandbox off, interleaved. Reports
// both medians and what the sandbox adds, in percent.
func BenchmarkJSCallSandbox(b *testing.B) {
	sbx, plain := startDaemon(b), startDaemonEnv(b, noSandbox)
	for _, d := range []*daemonProc{sbx, plain} {
		createTool(b, d.client, trivialTool)
	}
	for range 50 {
		callAdd(b, sbx.client)
		callAdd(b, plain.client)
	}
	var sLat, pLat []time.Duration
	i := 0
	for b.Loop() {
		s := func() { sLat = append(sLat, timed(func() { callAdd(b, sbx.client) })) }
		p := func() { pLat = append(pLat, timed(func() { callAdd(b, plain.client) })) }
		if i%2 == 0 {
			s()
			p()
		} else {
			p()
			s()
		}
		i++
	}
	s, p := median(sLat), median(pLat)
	b.ReportMetric(us(s), "p50-µs")
	b.ReportMetric(us(p), "nosandbox-p50-µs")
	b.ReportMetric(100*(float64(s)-float64(p))/float64(p), "sandbox-added-%")
}
