package daemon

import (
	"bufio"
	"context"
	"encoding/json"
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
	create(t, c, `{"name":"spin","description":"d","kind":"js","limits":{"timeout":"15s"},"js":{"code":"for(;;){}"}}`)
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
	// The spinning calls end when the test does: their callers go away.
	spinCtx, stopSpins := context.WithCancel(context.Background())
	defer wg.Wait()
	defer stopSpins()
	spin := func(name string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = agents[name].Do(spinCtx, "POST", "/v1/tools/spin/call", api.CallRequest{Arguments: mustJSON(map[string]any{})}, nil)
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

// limitsWorker registers worker name with tools, every call preApproved
// unless the tool asks, and returns its agent's client.
func limitsWorker(t *testing.T, c *api.Client, name, body string) *api.Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	writeFile(t, path, "name: "+name+"\n"+body)
	w, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	return withToken(c, w.Token)
}

// One worker's calls waiting for a person are capped at the edge: the
// cap-th parks, the next is refused without parking, another worker and
// the person still park, and a decision makes room again.
func TestPendingApprovalsPerWorker(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.WorkerLimits.PendingApprovals = 3 })
	c := td.client
	create(t, c, `{"name":"ask_echo","description":"d","kind":"js","approval":"ask","js":{"code":"return args"}}`)
	wa := limitsWorker(t, c, "wa", "tools: [ask_echo]\n")
	wb := limitsWorker(t, c, "wb", "tools: [ask_echo]\n")
	var ids []string
	for i := range 3 {
		ids = append(ids, parkNoWait(t, wa, map[string]any{"i": i}))
	}
	_, err := callTool(noWait(wa), "ask_echo", map[string]any{"i": 3})
	if codeOf(err) != errdefs.RateLimited || !strings.Contains(err.Error(), "worker_limits.pending_approvals") {
		t.Fatalf("wa's 4th pending call: %v, want rate_limited", err)
	}
	var l api.ApprovalList
	if err := c.Do(context.Background(), "GET", "/v1/approvals?status=pending", nil, &l); err != nil || len(l.Approvals) != 3 {
		t.Fatalf("pending after the refusal: %d %v", len(l.Approvals), err)
	}
	parkNoWait(t, wb, map[string]any{"i": 0})
	parkNoWait(t, c, map[string]any{"i": 0})
	personAnswers(t, c, "a worker at its pending cap")
	if err := c.Do(context.Background(), "POST", "/v1/approvals/"+ids[0]+"/deny", api.ApprovalDecision{}, nil); err != nil {
		t.Fatal(err)
	}
	parkNoWait(t, wa, map[string]any{"i": 4})
}

// A call's arguments are bounded in size and nesting when the call
// arrives, each at its edge, for the person and agents alike; a refused
// call is recorded without its arguments and parks nothing, so the
// person's approvals list stays small.
func TestArgumentBounds(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) {
		c.WorkerLimits.ArgumentBytes, c.WorkerLimits.ArgumentDepth = "1KiB", 8
	})
	c := td.client
	create(t, c, `{"name":"ask_echo","description":"d","kind":"js","approval":"ask","js":{"code":"return args"}}`)
	create(t, c, `{"name":"echo","description":"d","kind":"js","js":{"code":"return 1"}}`)
	agent := limitsWorker(t, c, "wa", "tools: [echo, ask_echo]\napproval: {tools: {echo: preApproved}}\n")
	nest := func(n int) json.RawMessage { // n levels: {"a": [...]}
		return json.RawMessage(`{"a":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	sized := func(n int) json.RawMessage { return json.RawMessage(`{"s":"` + strings.Repeat("x", n-8) + `"}`) }
	for _, who := range []struct {
		name string
		c    *api.Client
	}{{"person", c}, {"agent", agent}} {
		for _, tc := range []struct {
			name  string
			args  json.RawMessage
			limit string
		}{
			{"depth at the limit", nest(8), ""},
			{"depth one over", nest(9), errdefs.LimitDepth},
			{"bytes at the limit", sized(1024), ""},
			{"bytes one over", sized(1025), errdefs.LimitArguments},
		} {
			_, err := callTool(who.c, "echo", tc.args)
			if tc.limit == "" && err != nil {
				t.Errorf("%s, %s: %v", who.name, tc.name, err)
			}
			if ae := (*api.Error)(nil); tc.limit != "" && (!errors.As(err, &ae) || ae.Code != errdefs.LimitExceeded || ae.Limit != tc.limit) {
				t.Errorf("%s, %s: %v, want limit_exceeded (%s)", who.name, tc.name, err, tc.limit)
			}
		}
	}
	// The red team's argument, to a tool that asks: refused before it
	// parks, recorded without it.
	attack := json.RawMessage(`{"a":` + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + `}`)
	if _, err := callTool(noWait(agent), "ask_echo", attack); codeOf(err) != errdefs.LimitExceeded {
		t.Fatalf("9,000 deep to an asking tool: %v", err)
	}
	personAnswers(t, c, "a 9,000-deep argument")
	var l api.ApprovalList
	if err := c.Do(context.Background(), "GET", "/v1/approvals", nil, &l); err != nil || len(l.Approvals) != 0 {
		t.Fatalf("approvals after the refusal: %+v %v", l.Approvals, err)
	}
	var ex api.ExecutionList
	if err := c.Do(context.Background(), "GET", "/v1/executions?tool=ask_echo", nil, &ex); err != nil || len(ex.Executions) != 1 {
		t.Fatalf("audit: %+v %v", ex, err)
	}
	if got := ex.Executions[0].Arguments; len(got) > 200 || !strings.Contains(string(got), "not kept") {
		t.Fatalf("the refused call's record keeps %d bytes of arguments: %.200s", len(got), got)
	}
}

// The tools one worker's agents keep, and the versions an agent's change
// takes a tool to, are capped at the edge; the person's changes are not,
// and a deleted tool makes room.
func TestAgentToolsAndVersionsCapped(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.WorkerLimits.Tools, c.WorkerLimits.Versions = 2, 3 })
	c := td.client
	agent := limitsWorker(t, c, "maker", "agent_tools: {create: true}\n")
	def := func(name, ret string) []byte {
		return []byte(`{"name":"` + name + `","description":"d","kind":"js","js":{"code":"return ` + ret + `"}}`)
	}
	ctx := context.Background()
	for _, name := range []string{"t1", "t2"} {
		if err := agent.Do(ctx, "POST", "/v1/tools", def(name, "1"), nil); err != nil {
			t.Fatalf("%s within the cap: %v", name, err)
		}
	}
	err := agent.Do(ctx, "POST", "/v1/tools", def("t3", "1"), nil)
	if ae := (*api.Error)(nil); !errors.As(err, &ae) || ae.Code != errdefs.LimitExceeded || ae.Limit != errdefs.LimitTools ||
		!strings.Contains(err.Error(), "worker_limits.tools") {
		t.Fatalf("a third tool: %v", err)
	}
	personAnswers(t, c, "an agent at its tool cap")
	create(t, c, string(def("persons", "1"))) // the person's tools are not the worker's
	// Versions: 2 and 3 pass, 4 is refused; the person may go on.
	for i, ret := range []string{"2", "3"} {
		if err := agent.Do(ctx, "PATCH", "/v1/tools/t1", def("t1", ret), nil); err != nil {
			t.Fatalf("version %d: %v", i+2, err)
		}
	}
	if err := agent.Do(ctx, "PATCH", "/v1/tools/t1", def("t1", "4"), nil); codeOf(err) != errdefs.LimitExceeded ||
		!strings.Contains(err.Error(), "worker_limits.versions") {
		t.Fatalf("version 4 by the agent: %v", err)
	}
	if err := c.Do(ctx, "PATCH", "/v1/tools/t1", def("t1", "4"), nil); err != nil {
		t.Fatalf("version 4 by the person: %v", err)
	}
	if err := agent.Do(ctx, "DELETE", "/v1/tools/t2?confirm=true", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := agent.Do(ctx, "POST", "/v1/tools", def("t3", "1"), nil); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
}

// The bounds' settings are checked at config load, each at its edge.
func TestWorkerLimitsConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  map[string]any
		want string // "" loads
	}{
		{"defaults", nil, ""},
		{"person executors at the most", map[string]any{"executor.max_per_key": 8, "worker_limits.person_executors": 7}, ""},
		{"person executors all", map[string]any{"executor.max_per_key": 8, "worker_limits.person_executors": 8}, "worker_limits.person_executors"},
		{"no share", map[string]any{"worker_limits.executor_share": 0}, "worker_limits.executor_share"},
		{"no pending", map[string]any{"worker_limits.pending_approvals": 0}, "worker_limits.pending_approvals"},
		{"depth at the ceiling", map[string]any{"worker_limits.argument_depth": 1000}, ""},
		{"depth past the ceiling", map[string]any{"worker_limits.argument_depth": 1001}, "worker_limits.argument_depth"},
		{"argument bytes at the floor", map[string]any{"worker_limits.argument_bytes": "1KiB"}, ""},
		{"argument bytes under the floor", map[string]any{"worker_limits.argument_bytes": "1023"}, "worker_limits.argument_bytes"},
		{"sql result bytes at the ceiling", map[string]any{"worker_limits.sql_result_bytes": "256MiB"}, ""},
		{"sql result bytes not a size", map[string]any{"worker_limits.sql_result_bytes": "lots"}, "worker_limits.sql_result_bytes"},
		{"person connections all", map[string]any{"api.max_connections": 8, "api.person_connections": 8}, "api.person_connections"},
		{"person connections at the most", map[string]any{"api.max_connections": 8, "api.person_connections": 7}, ""},
		{"no worker connections", map[string]any{"api.worker_connections": 0}, "api.worker_connections"},
		{"no unauthenticated", map[string]any{"mcp.max_unauthenticated": 0}, "mcp.max_unauthenticated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := map[string]any{"data_dir": t.TempDir()}
			for k, v := range tc.set {
				set[k] = v
			}
			_, err := LoadConfig("", set)
			if tc.want == "" && err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("%v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// A worker file edit the daemon refuses (its workspace reaches the data
// dir through a symlink) is tried again on a timer: once the symlink is
// gone, with no edit of the file, the edit is taken.
func TestWorkerReloadRetriedAfterARefusal(t *testing.T) {
	data := t.TempDir()
	td := startDaemon(t, data, nil, withWorkerRetry(200*time.Millisecond))
	c := td.client
	dir := t.TempDir()
	path := filepath.Join(dir, "rw.yaml")
	writeFile(t, path, "name: rw\ndescription: first\n")
	if _, err := addWorker(c, path); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.Symlink(data, ws); err != nil {
		t.Fatal(err)
	}
	get := func() api.Worker {
		var w api.Worker
		if err := c.Do(context.Background(), "GET", "/v1/workers/rw", nil, &w); err != nil {
			t.Fatal(err)
		}
		return w
	}
	writeFile(t, path, "name: rw\ndescription: second\nworkspace: ws\n")
	waitFor(t, "the edit to be refused", func() bool { return get().ReloadError != "" })
	if w := get(); w.Description != "first" {
		t.Fatalf("a refused edit took effect: %+v", w)
	}
	// The cause goes; the file is not touched.
	if err := os.Remove(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the refused edit to be retried and taken", func() bool { w := get(); return w.Description == "second" && w.ReloadError == "" })
	personAnswers(t, c, "a retried reload")
}

// Creates racing each other cannot pass the tool cap together.
func TestAgentToolCapConcurrentCreates(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.WorkerLimits.Tools = 3 })
	agent := limitsWorker(t, td.client, "maker", "agent_tools: {create: true}\n")
	var wg sync.WaitGroup
	var mu sync.Mutex
	made, refused := 0, 0
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			def := fmt.Sprintf(`{"name":"t%d","description":"d","kind":"js","js":{"code":"return 1"}}`, i)
			err := agent.Do(context.Background(), "POST", "/v1/tools", []byte(def), nil)
			mu.Lock()
			defer mu.Unlock()
			switch codeOf(err) {
			case "":
				made++
			case errdefs.LimitExceeded:
				refused++
			default:
				t.Errorf("t%d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if made != 3 || refused != 9 {
		t.Fatalf("made %d, refused %d; want 3 and 9", made, refused)
	}
}
