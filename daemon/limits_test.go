package daemon

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// personAnswers checks the person's socket client is served at once.
func personAnswers(t *testing.T, c *api.Client, during string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	var h map[string]any
	if err := c.Do(ctx, "GET", "/v1/health", nil, &h); err != nil {
		t.Fatalf("the person's health check during %s: %v", during, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the person's health check during %s took %v", during, d)
	}
}

// One db_sql read of far more than the result cap is refused with
// limit_exceeded naming the limit, and the daemon's memory stays small
// (measured: what the refused read allocated), while the person is served.
func TestSQLResultBoundedInBytes(t *testing.T) {
	td := startDaemon(t, "", nil)
	path := filepath.Join(t.TempDir(), "db.yaml")
	writeFile(t, path, "name: dbw\ntoolsets:\n  sql: {}\n")
	w, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := withToken(td.client, w.Token)
	// 200 rows of 1 MB: 200 MB (270 MB as JSON) if it were all held.
	q := "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 200) SELECT i, zeroblob(1000000) FROM c"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan error, 1)
	go func() {
		_, err := callTool(agent, "db_sql", map[string]any{"sql": q})
		done <- err
	}()
	personAnswers(t, td.client, "a large db_sql read")
	err = <-done
	runtime.ReadMemStats(&after)
	if codeOf(err) != errdefs.LimitExceeded || !strings.Contains(err.Error(), "max_result_bytes") {
		t.Fatalf("a 200 MB read: %v, want limit_exceeded naming max_result_bytes", err)
	}
	if ae := (*api.Error)(nil); !errors.As(err, &ae) || ae.Limit != errdefs.LimitOutput {
		t.Errorf("the error names limit %+v, want %q", ae, errdefs.LimitOutput)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Fatalf("the refused read allocated %d MiB in the daemon", got>>20)
	}
	// A read within the cap still comes back whole.
	r, err := callTool(agent, "db_sql", map[string]any{"sql": "SELECT length(zeroblob(1000000))"})
	if err != nil || string(r.Result) != `{"columns":["length(zeroblob(1000000))"],"rows":[[1000000]]}` {
		t.Fatalf("a small read: %v %s", err, r.Result)
	}
}

// A worker's calls that spin hold at most its share of a key's executors:
// a third call of the worker is refused, another worker still gets an
// executor, and with workers holding all they may, the person's calls
// still run, at once.
func TestExecutorShareKeepsThePersonIn(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) {
		c.Executor.MaxPerKey, c.Executor.AcquireTimeout = 4, 500*time.Millisecond
		c.WorkerLimits.ExecutorShare, c.WorkerLimits.PersonExecutors = 2, 1
	})
	c := td.client
	create(t, c, jsTool)
	create(t, c, `{"name":"spin","description":"d","kind":"js","limits":{"timeout":"6s"},"js":{"code":"for(;;){}"}}`)
	dir := t.TempDir()
	var agents = map[string]*api.Client{}
	for _, name := range []string{"wa", "wb"} {
		path := filepath.Join(dir, name+".yaml")
		writeFile(t, path, "name: "+name+"\ntools: [adder, spin]\napproval: {default: preApproved}\n")
		w, err := addWorker(c, path)
		if err != nil {
			t.Fatal(err)
		}
		agents[name] = withToken(c, w.Token)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	spin := func(name string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = callTool(agents[name], "spin", nil)
		}()
	}
	busy := func(n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			total := 0
			keys, _, _ := td.d.pool.Stats()
			for _, k := range keys {
				total += k.Busy
			}
			if total == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("busy executors never reached %d: %+v", n, keys)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	add := map[string]any{"a": 1, "b": 2}
	spin("wa")
	spin("wa") // wa at its share
	busy(2)
	if _, err := callTool(agents["wa"], "adder", add); codeOf(err) != errdefs.RateLimited {
		t.Fatalf("wa past its share: %v, want rate_limited", err)
	}
	if r, err := callTool(agents["wb"], "adder", add); err != nil || string(r.Result) != "3" {
		t.Fatalf("another worker while wa spins: %v %s", err, r.Result)
	}
	spin("wb") // the workers' part (4 - 1) is full
	busy(3)
	if _, err := callTool(agents["wb"], "adder", add); codeOf(err) != errdefs.RateLimited {
		t.Fatalf("wb past the workers' part: %v, want rate_limited", err)
	}
	start := time.Now()
	if r, err := callTool(c, "adder", add); err != nil || string(r.Result) != "3" {
		t.Fatalf("the person's call while workers spin: %v %s", err, r.Result)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the person's call waited %v", d)
	}
	personAnswers(t, c, "spinning workers")
}

// Socket connections count per principal: one worker's MCP bridges stop
// at api.worker_connections, all workers' at max_connections minus
// person_connections, each at its edge, and the person's CLI still gets
// in while the bridges are open; a closed bridge gives its place back.
func TestSocketConnectionsPerPrincipal(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) {
		c.API.MaxConnections, c.API.PersonConnections, c.API.WorkerConnections = 8, 2, 4
	})
	c := td.client
	create(t, c, jsTool)
	dir := t.TempDir()
	agents := map[string]*api.Client{}
	for _, name := range []string{"wa", "wb"} {
		path := filepath.Join(dir, name+".yaml")
		writeFile(t, path, "name: "+name+"\ntools: [adder]\n")
		w, err := addWorker(c, path)
		if err != nil {
			t.Fatal(err)
		}
		agents[name] = withToken(c, w.Token)
	}
	bridge := func(name string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := agents[name].MCPConn(ctx)
		if err == nil {
			t.Cleanup(func() { conn.Close() })
		}
		return conn, err
	}
	var held []net.Conn
	for range 4 { // wa at its cap
		conn, err := bridge("wa")
		if err != nil {
			t.Fatalf("wa's bridge within its cap: %v", err)
		}
		held = append(held, conn)
	}
	if _, err := bridge("wa"); codeOf(err) != errdefs.RateLimited || !strings.Contains(err.Error(), "api.worker_connections") {
		t.Fatalf("wa's bridge past worker_connections: %v", err)
	}
	for range 2 { // the workers' part (8 - 2) is full
		if _, err := bridge("wb"); err != nil {
			t.Fatalf("wb's bridge within the workers' part: %v", err)
		}
	}
	if _, err := bridge("wb"); codeOf(err) != errdefs.RateLimited || !strings.Contains(err.Error(), "api.person_connections") {
		t.Fatalf("wb's bridge past the workers' part: %v", err)
	}
	// A worker token's plain request counts as the worker's too.
	if _, err := callTool(agents["wb"], "adder", map[string]any{"a": 1, "b": 2}); codeOf(err) != errdefs.RateLimited {
		t.Fatalf("wb's call past the workers' part: %v", err)
	}
	// The person: two connections at once, the reserve.
	idle := rawRequest(t, td.cfg.Socket, "GET /v1/health HTTP/1.1\r\nHost: toolcage\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(idle), nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the person's first connection: %v %v", resp, err)
	}
	personAnswers(t, c, "open bridges")
	if r, err := callTool(c, "adder", map[string]any{"a": 1, "b": 2}); err != nil || string(r.Result) != "3" {
		t.Fatalf("the person's call during open bridges: %v %s", err, r.Result)
	}
	// A bridge that closes gives its place back.
	held[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := bridge("wb")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("wb after one of wa's bridges closed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Connections to mcp.listen that never authenticate are at most
// mcp.max_unauthenticated: 64 idle ones leave the agents (and the person)
// a way in, the extra ones closed at once, long before any timeout.
func TestMCPListenIdleConnections(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) {
		c.MCP.Listen = "127.0.0.1:0"
		c.MCP.MaxUnauthenticated = 4
		c.MCP.HeaderTimeout = time.Minute // the cap, not the timeout, is under test
	})
	c := td.client
	create(t, c, jsTool)
	path := filepath.Join(t.TempDir(), "mw.yaml")
	writeFile(t, path, "name: mw\ntools: [adder]\napproval: {default: preApproved}\n")
	w, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	var idle []net.Conn
	for range 64 {
		conn, err := net.DialTimeout("tcp", td.d.MCPAddr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		idle = append(idle, conn)
	}
	tr := &sdk.StreamableClientTransport{Endpoint: "http://" + td.d.MCPAddr() + "/mcp/mw", HTTPClient: bearerClient(w.Token), MaxRetries: -1}
	cs, _ := connectMCP(t, tr)
	res := callMCP(t, cs, "adder", map[string]any{"a": 1, "b": 2})
	if res.IsError {
		t.Fatalf("the agent's call past 64 idle connections: %+v", res)
	}
	personAnswers(t, c, "64 idle mcp.listen connections")
	open := 0
	for _, conn := range idle {
		conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := conn.Read(make([]byte, 1)); err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			open++
		}
	}
	if open > 4 {
		t.Fatalf("%d idle connections still open, over mcp.max_unauthenticated (4)", open)
	}
	// A request without a valid token closes its connection once answered.
	conn, err := net.DialTimeout("tcp", td.d.MCPAddr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp/mw HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tcw_nope\r\nContent-Length: 2\r\n\r\n{}")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Fatalf("a bad token: %v %+v", err, resp)
	}
}
