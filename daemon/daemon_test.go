package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

const jsTool = `
name: adder
description: adds two numbers
kind: js
parameters:
  type: object
  properties:
    a: {type: number}
    b: {type: number}
  required: [a, b]
js:
  code: return args.a + args.b
`

func codeOf(err error) errdefs.Code {
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	if err == nil {
		return ""
	}
	return "not-an-api-error: " + errdefs.Code(err.Error())
}

func apiErr(t *testing.T, err error) *api.Error {
	t.Helper()
	var ae *api.Error
	if !errors.As(err, &ae) {
		t.Fatalf("want an API error, got %v", err)
	}
	return ae
}

func create(t *testing.T, c *api.Client, def string) api.Tool {
	t.Helper()
	var tool api.Tool
	if err := c.Do(context.Background(), "POST", "/v1/tools", []byte(def), &tool); err != nil {
		t.Fatalf("create: %v", err)
	}
	return tool
}

func callTool(c *api.Client, name string, args any) (api.CallResponse, error) {
	var resp api.CallResponse
	err := c.Do(context.Background(), "POST", "/v1/tools/"+name+"/call", api.CallRequest{Arguments: mustJSON(args)}, &resp)
	return resp, err
}

func llm(c *api.Client) *api.Client {
	cc := *c
	cc.CallerType = "llm"
	return &cc
}

func TestCallJSTool(t *testing.T) {
	td := startDaemon(t, "", nil)
	create(t, td.client, jsTool)
	resp, err := callTool(td.client, "adder", map[string]any{"a": 2, "b": 40})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Result) != "42" || resp.IsError || resp.Version != 1 || resp.Tool != "adder" || resp.CallID == "" {
		t.Fatalf("resp = %+v", resp)
	}
}

func TestCatalogLifecycle(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	tool := create(t, c, jsTool)
	if tool.Status != "active" || tool.CreatedBy != "user" || tool.Version != 1 {
		t.Fatalf("created = %+v", tool)
	}
	if err := c.Do(ctx, "POST", "/v1/tools", []byte(jsTool), nil); codeOf(err) != errdefs.Conflict {
		t.Fatalf("duplicate: %v", err)
	}

	// Update: a code change raises the version; the same definition does not.
	v2 := strings.Replace(jsTool, "return args.a + args.b", "return args.a * args.b", 1)
	var got api.Tool
	if err := c.Do(ctx, "PUT", "/v1/tools/adder", []byte(v2), &got); err != nil || got.Version != 2 {
		t.Fatalf("update: %v %+v", err, got)
	}
	if err := c.Do(ctx, "PUT", "/v1/tools/adder", []byte(v2), &got); err != nil || got.Version != 2 {
		t.Fatalf("no-op update: %v version %d", err, got.Version)
	}
	if r, err := callTool(c, "adder", map[string]any{"a": 3, "b": 4}); err != nil || string(r.Result) != "12" || r.Version != 2 {
		t.Fatalf("call v2: %v %+v", err, r)
	}
	// PATCH merges into the current definition.
	if err := c.Do(ctx, "PATCH", "/v1/tools/adder", []byte(`{"category":"Math"}`), &got); err != nil || got.Version != 3 {
		t.Fatalf("patch: %v %+v", err, got)
	}
	var hist api.ToolHistory
	if err := c.Do(ctx, "GET", "/v1/tools/adder/history", nil, &hist); err != nil || len(hist.Versions) != 3 || hist.Current != 3 {
		t.Fatalf("history: %v %+v", err, hist)
	}
	// Rollback restores version 1 as version 4.
	if err := c.Do(ctx, "POST", "/v1/tools/adder/rollback", api.RollbackRequest{Version: 1}, &got); err != nil || got.Version != 4 {
		t.Fatalf("rollback: %v %+v", err, got)
	}
	if r, err := callTool(c, "adder", map[string]any{"a": 3, "b": 4}); err != nil || string(r.Result) != "7" || r.Version != 4 {
		t.Fatalf("call after rollback: %v %+v", err, r)
	}
	if err := c.Do(ctx, "POST", "/v1/tools/adder/rollback", api.RollbackRequest{Version: 99}, nil); codeOf(err) != errdefs.InvalidRequest {
		t.Fatalf("rollback to missing version: %v", err)
	}

	// Disable: calls are refused until enabled again.
	if err := c.Do(ctx, "POST", "/v1/tools/adder/disable", nil, &got); err != nil || got.Status != "disabled" {
		t.Fatalf("disable: %v %+v", err, got)
	}
	if _, err := callTool(c, "adder", map[string]any{"a": 1, "b": 1}); codeOf(err) != errdefs.ToolNotActive {
		t.Fatalf("call disabled: %v", err)
	}
	if err := c.Do(ctx, "POST", "/v1/tools/adder/approve", nil, nil); codeOf(err) != errdefs.Conflict {
		t.Fatalf("approve a disabled tool: %v", err)
	}
	if err := c.Do(ctx, "POST", "/v1/tools/adder/enable", nil, &got); err != nil || got.Status != "active" {
		t.Fatalf("enable: %v %+v", err, got)
	}

	// An llm's tool with a dangerous permission waits for a person.
	danger := strings.NewReplacer("name: adder", "name: llm_tool", "kind: js", "kind: js\npermissions: [filesystem]").Replace(jsTool)
	var pending api.Tool
	if err := llm(c).Do(ctx, "POST", "/v1/tools", []byte(danger), &pending); err != nil || pending.Status != "pending_approval" || pending.CreatedBy != "llm" {
		t.Fatalf("llm create: %v %+v", err, pending)
	}
	if _, err := callTool(c, "llm_tool", map[string]any{"a": 1, "b": 1}); codeOf(err) != errdefs.ToolNotActive {
		t.Fatalf("call pending: %v", err)
	}
	if err := c.Do(ctx, "POST", "/v1/tools/llm_tool/enable", nil, nil); codeOf(err) != errdefs.Conflict {
		t.Fatalf("enable pending: %v", err)
	}
	if err := llm(c).Do(ctx, "POST", "/v1/tools/llm_tool/approve", nil, nil); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("llm approves: %v", err)
	}
	if err := c.Do(ctx, "POST", "/v1/tools/llm_tool/approve", nil, &got); err != nil || got.Status != "active" {
		t.Fatalf("approve: %v %+v", err, got)
	}
	// An llm tool without dangerous permissions starts active.
	safe := strings.Replace(jsTool, "name: adder", "name: llm_safe", 1)
	if err := llm(c).Do(ctx, "POST", "/v1/tools", []byte(safe), &got); err != nil || got.Status != "active" {
		t.Fatalf("llm safe create: %v %+v", err, got)
	}
	// Reject: stays for the record, never runs, cannot be enabled.
	danger2 := strings.Replace(danger, "name: llm_tool", "name: llm_rejected", 1)
	create(t, llm(c), danger2)
	if err := c.Do(ctx, "POST", "/v1/tools/llm_rejected/reject", nil, &got); err != nil || got.Status != "rejected" {
		t.Fatalf("reject: %v %+v", err, got)
	}
	if err := c.Do(ctx, "POST", "/v1/tools/llm_rejected/enable", nil, nil); codeOf(err) != errdefs.Conflict {
		t.Fatalf("enable rejected: %v", err)
	}
	// An llm changing a tool to hold a dangerous permission sends it back.
	if err := llm(c).Do(ctx, "PUT", "/v1/tools/llm_safe", []byte(strings.Replace(danger, "name: llm_tool", "name: llm_safe", 1)), &got); err != nil || got.Status != "pending_approval" {
		t.Fatalf("llm adds permission: %v %+v", err, got)
	}

	// Filters.
	var list api.ToolList
	if err := c.Do(ctx, "GET", "/v1/tools?created_by=llm&status=pending_approval", nil, &list); err != nil || list.Total != 1 || len(list.Tools) != 1 {
		t.Fatalf("filtered list: %v %+v", err, list)
	}
	if err := c.Do(ctx, "GET", "/v1/tools?limit=2&offset=1", nil, &list); err != nil || list.Total != 4 || len(list.Tools) != 2 {
		t.Fatalf("paged list: %v total %d len %d", err, list.Total, len(list.Tools))
	}
	var stats api.Stats
	if err := c.Do(ctx, "GET", "/v1/stats", nil, &stats); err != nil || stats.Total != 4 || stats.Rejected != 1 || stats.CreatedByLLM != 3 || stats.PendingApproval != 1 {
		t.Fatalf("stats: %v %+v", err, stats)
	}

	// Deletion: an llm may not delete the user's tool, but may delete its own.
	if err := llm(c).Do(ctx, "DELETE", "/v1/tools/adder", nil, nil); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("llm deletes user tool: %v", err)
	}
	if err := llm(c).Do(ctx, "PUT", "/v1/tools/adder", []byte(v2), nil); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("llm changes user tool: %v", err)
	}
	if err := llm(c).Do(ctx, "DELETE", "/v1/tools/llm_tool?confirm=true", nil, nil); err != nil {
		t.Fatalf("llm deletes its tool: %v", err)
	}
	if err := c.Do(ctx, "DELETE", "/v1/tools/adder", nil, nil); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := c.Do(ctx, "GET", "/v1/tools/adder", nil, nil); codeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("get deleted: %v", err)
	}
	// The audit log outlives the tool.
	var ex api.ExecutionList
	if err := c.Do(ctx, "GET", "/v1/executions?tool=adder", nil, &ex); err != nil || len(ex.Executions) < 3 {
		t.Fatalf("executions of deleted tool: %v %d", err, len(ex.Executions))
	}
}

func TestAPIErrorCodes(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.JS.Timeout = 2 * time.Second })
	c := td.client
	create(t, c, jsTool)
	create(t, c, strings.NewReplacer("name: adder", "name: blocked_tool", "kind: js", "kind: js\napproval: blocked").Replace(jsTool))
	create(t, c, strings.NewReplacer("name: adder", "name: ask_tool", "kind: js", "kind: js\napproval: ask").Replace(jsTool))
	create(t, c, "name: spin\ndescription: spins\nkind: js\nlimits: {timeout: 200ms}\njs: {code: 'while(true){}'}")
	create(t, c, "name: bomb\ndescription: eats memory\nkind: js\nlimits: {memory: 16MiB}\njs: {code: \"let a=[]; while(true) a.push('x'.repeat(1<<20)+a.length)\"}")
	create(t, c, "name: thrower\ndescription: throws\nkind: js\njs: {code: \"\\nthrow new TypeError('nope')\"}")

	tests := []struct {
		name     string
		client   *api.Client
		method   string
		path     string
		body     any
		wantCode errdefs.Code
		status   int
	}{
		{"unknown route", c, "GET", "/v1/nope", nil, errdefs.InvalidRequest, 400},
		{"bad json", c, "POST", "/v1/tools/adder/call", []byte(`{"arguments":`), errdefs.InvalidRequest, 400},
		{"unknown field", c, "POST", "/v1/tools/adder/call", []byte(`{"args":{}}`), errdefs.InvalidRequest, 400},
		{"invalid definition", c, "POST", "/v1/tools", []byte(`{"name":"Bad Name","kind":"js"}`), errdefs.InvalidDefinition, 400},
		{"forbidden js pattern", c, "POST", "/v1/tools", []byte(`{"name":"evil","description":"x","kind":"js","js":{"code":"return eval('1')"}}`), errdefs.PolicyDenied, 403},
		{"tool not found", c, "POST", "/v1/tools/missing/call", api.CallRequest{}, errdefs.ToolNotFound, 404},
		{"missing argument", c, "POST", "/v1/tools/adder/call", api.CallRequest{Arguments: mustJSON(map[string]any{"a": 1})}, errdefs.InvalidArguments, 400},
		{"wrong type", c, "POST", "/v1/tools/adder/call", api.CallRequest{Arguments: mustJSON(map[string]any{"a": "1", "b": 2})}, errdefs.InvalidArguments, 400},
		{"arguments not an object", c, "POST", "/v1/tools/adder/call", api.CallRequest{Arguments: json.RawMessage(`[1]`)}, errdefs.InvalidArguments, 400},
		{"blocked", c, "POST", "/v1/tools/blocked_tool/call", api.CallRequest{Arguments: mustJSON(map[string]any{"a": 1, "b": 2})}, errdefs.PolicyDenied, 403},
		{"ask", noWait(c), "POST", "/v1/tools/ask_tool/call", api.CallRequest{Arguments: mustJSON(map[string]any{"a": 1, "b": 2})}, errdefs.ApprovalRequired, 403},
		{"timeout", c, "POST", "/v1/tools/spin/call", api.CallRequest{}, errdefs.Timeout, 504},
		{"memory bomb", c, "POST", "/v1/tools/bomb/call", api.CallRequest{}, errdefs.LimitExceeded, 422},
		{"bad caller type", &api.Client{}, "POST", "/v1/tools/adder/call", api.CallRequest{}, "", 0},
		{"rollback bad version", c, "POST", "/v1/tools/adder/rollback", api.RollbackRequest{Version: 0}, errdefs.InvalidRequest, 400},
		{"bad limit param", c, "GET", "/v1/tools?limit=-1", nil, errdefs.InvalidRequest, 400},
		{"js bad timeout", c, "POST", "/v1/js", api.JSRequest{Code: "return 1", Timeout: "soon"}, errdefs.InvalidRequest, 400},
		{"js memory over max", c, "POST", "/v1/js", api.JSRequest{Code: "return 1", Memory: "100GiB"}, errdefs.InvalidRequest, 400},
		{"js memory far over max", c, "POST", "/v1/js", api.JSRequest{Code: "return 1", Memory: "1TiB"}, errdefs.InvalidRequest, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := tt.client
			if tt.name == "bad caller type" {
				cl = llm(c)
				cl.CallerType = "robot"
				tt.wantCode, tt.status = errdefs.InvalidRequest, 400
			}
			err := cl.Do(context.Background(), tt.method, tt.path, tt.body, nil)
			ae := apiErr(t, err)
			if ae.Code != tt.wantCode || ae.Status != tt.status {
				t.Fatalf("got %s (%d) %q, want %s (%d)", ae.Code, ae.Status, ae.Message, tt.wantCode, tt.status)
			}
			if ae.Message == "" {
				t.Fatal("empty message")
			}
		})
	}

	// A thrown error is a tool-level error result, with its line.
	r, err := callTool(c, "thrower", nil)
	if err != nil || !r.IsError || !strings.Contains(r.Error, "nope") || !strings.Contains(r.Error, "line 2") {
		t.Fatalf("thrower: %v %+v", err, r)
	}
	// Failures carry the call id and the limit, and are in the audit log.
	_, err = callTool(c, "spin", nil)
	ae := apiErr(t, err)
	if ae.CallID == "" || ae.Limit != "timeout" {
		t.Fatalf("timeout error detail: %+v", ae)
	}
	var ex api.ExecutionList
	if err := c.Do(context.Background(), "GET", "/v1/executions?tool=bomb", nil, &ex); err != nil || len(ex.Executions) != 1 {
		t.Fatalf("audit of bomb: %v %+v", err, ex)
	}
	if e := ex.Executions[0]; e.Outcome != "failed" || e.ErrorCode != "limit_exceeded" || e.Limit != "memory" {
		t.Fatalf("bomb audit record: %+v", e)
	}
	err = c.Do(context.Background(), "POST", "/v1/tools", []byte(`{"name":"Bad","kind":"lisp"}`), nil)
	if ae := apiErr(t, err); len(ae.Problems) < 3 {
		t.Fatalf("want every problem listed, got %+v", ae.Problems)
	}
}

func TestPrototypePollutionDoesNotLeak(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.Executor.MaxPerKey = 1 })
	c := td.client
	ctx := context.Background()
	var r api.CallResponse
	poison := api.JSRequest{Code: `Object.prototype.polluted = 'yes'; Array.prototype.push = null; globalValue = 1; return 'done'`}
	if err := c.Do(ctx, "POST", "/v1/js", poison, &r); err != nil {
		t.Fatal(err)
	}
	probe := api.JSRequest{Code: `const a = []; a.push(1); return [({}).polluted === undefined, typeof globalValue, a.length]`}
	if err := c.Do(ctx, "POST", "/v1/js", probe, &r); err != nil {
		t.Fatal(err)
	}
	if string(r.Result) != `[true,"undefined",1]` {
		t.Fatalf("second call saw the first call's changes: %s", r.Result)
	}
}

func TestExecutorKilledMidCall(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.Executor.MaxPerKey = 1 })
	c := td.client
	ctx := context.Background()
	var r api.CallResponse
	if err := c.Do(ctx, "POST", "/v1/js", api.JSRequest{Code: "return 1"}, &r); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		errc <- c.Do(ctx, "POST", "/v1/js", api.JSRequest{Code: "while(true){}", Timeout: "20s"}, nil)
	}()
	time.Sleep(300 * time.Millisecond)
	pids := executorPIDs(t)
	if len(pids) == 0 {
		t.Fatal("no executor process found")
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	select {
	case err := <-errc:
		if codeOf(err) != errdefs.ExecutorFailed {
			t.Fatalf("killed call: %v, want executor_failed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call did not end when its executor was killed")
	}
	if err := c.Do(ctx, "POST", "/v1/js", api.JSRequest{Code: "return 2"}, &r); err != nil || string(r.Result) != "2" {
		t.Fatalf("next call: %v %s", err, r.Result)
	}
}

func TestMemoryBombLeavesOthersAlone(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	var wg sync.WaitGroup
	var bombErr, goodErr error
	var good api.CallResponse
	wg.Add(2)
	go func() {
		defer wg.Done()
		bombErr = c.Do(ctx, "POST", "/v1/js", api.JSRequest{Code: "let s='x'; while(true) s += s + 'y';", Memory: "32MiB"}, nil)
	}()
	go func() {
		defer wg.Done()
		goodErr = c.Do(ctx, "POST", "/v1/js", api.JSRequest{Code: "let n=0; for (let i=0;i<2e6;i++) n+=i; return n"}, &good)
	}()
	wg.Wait()
	if codeOf(bombErr) != errdefs.LimitExceeded && codeOf(bombErr) != errdefs.ExecutorFailed {
		t.Fatalf("bomb: %v", bombErr)
	}
	if goodErr != nil || string(good.Result) != "1999999000000" {
		t.Fatalf("well-behaved call: %v %s", goodErr, good.Result)
	}
	var h api.Health
	if err := c.Do(ctx, "GET", "/v1/health", nil, &h); err != nil || h.Status != "ok" {
		t.Fatalf("health after bomb: %v", err)
	}
}

func TestSocketModeAndPeerCheck(t *testing.T) {
	td := startDaemon(t, "", nil, WithPeerCheck(func(uid uint32) bool { return uid == 4242 }))
	st, err := os.Stat(td.cfg.Socket)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || st.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket mode %v, want 0600 socket", st.Mode())
	}
	err = td.client.Do(context.Background(), "GET", "/v1/health", nil, nil)
	if ae := apiErr(t, err); ae.Code != errdefs.Forbidden || ae.Status != 403 {
		t.Fatalf("refused peer got %+v", ae)
	}
}

const peerHelperEnv = "TOOLCAGE_TEST_PEER_SOCKET"

// peerHelper runs in a child process started as another user: it calls the
// daemon and prints the HTTP status it got.
func peerHelper() int {
	c := api.NewClient(os.Getenv(peerHelperEnv))
	err := c.Do(context.Background(), "GET", "/v1/health", nil, nil)
	var ae *api.Error
	switch {
	case err == nil:
		fmt.Println("status 200")
	case errors.As(err, &ae):
		fmt.Printf("status %d %s\n", ae.Status, ae.Code)
	default:
		fmt.Println("error", err)
	}
	return 0
}

// TestPeerUIDFromAnotherUser connects as a real other user (nobody). The
// socket's mode would stop it first, so the test opens the mode to prove
// the SO_PEERCRED check holds on its own.
func TestPeerUIDFromAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a process as another user")
	}
	td := startDaemon(t, "", nil)
	os.Chmod(filepath.Dir(td.cfg.Socket), 0o755)
	os.Chmod(td.cfg.Socket, 0o666)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "tc-peer")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "peer")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{peerHelperEnv + "=" + td.cfg.Socket}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "status 403 forbidden" {
		t.Fatalf("other user got %q, want status 403 forbidden", got)
	}
	// And the daemon's own user still gets in.
	if err := td.client.Do(context.Background(), "GET", "/v1/health", nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRestartKeepsToolsAndExecutions(t *testing.T) {
	data := t.TempDir()
	td := startDaemon(t, data, nil)
	create(t, td.client, jsTool)
	for i := range 3 {
		if _, err := callTool(td.client, "adder", map[string]any{"a": i, "b": 1}); err != nil {
			t.Fatal(err)
		}
	}
	td.stop()

	td2 := startDaemon(t, data, nil)
	var tool api.Tool
	if err := td2.client.Do(context.Background(), "GET", "/v1/tools/adder", nil, &tool); err != nil {
		t.Fatal(err)
	}
	if tool.UsageCount != 3 || tool.LastUsedAt == nil {
		t.Fatalf("after restart: %+v", tool)
	}
	var ex api.ExecutionList
	if err := td2.client.Do(context.Background(), "GET", "/v1/executions", nil, &ex); err != nil || len(ex.Executions) != 3 {
		t.Fatalf("executions after restart: %v %d", err, len(ex.Executions))
	}
	if r, err := callTool(td2.client, "adder", map[string]any{"a": 1, "b": 1}); err != nil || string(r.Result) != "2" {
		t.Fatalf("call after restart: %v %+v", err, r)
	}
}

func TestShutdownDrainsCallsInFlight(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	errc := make(chan error, 1)
	var r api.CallResponse
	go func() {
		errc <- c.Do(context.Background(), "POST", "/v1/js", api.JSRequest{Code: "const end = Date.now() + 700; while (Date.now() < end) {} return 'finished'"}, &r)
	}()
	time.Sleep(200 * time.Millisecond)
	go td.stop() // as SIGTERM does
	if err := <-errc; err != nil || string(r.Result) != `"finished"` {
		t.Fatalf("call in flight during shutdown: %v %s", err, r.Result)
	}
	td.stop()
	if td.serveErr != nil {
		t.Fatalf("Serve: %v", td.serveErr)
	}
	if _, err := os.Stat(td.cfg.Socket); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
	if pids := executorPIDs(t); len(pids) != 0 {
		time.Sleep(time.Second)
		if pids := executorPIDs(t); len(pids) != 0 {
			t.Fatalf("executors left running: %v", pids)
		}
	}
}

func TestSecondDaemonOnSameSocketRefused(t *testing.T) {
	td := startDaemon(t, "", nil)
	cfg := td.cfg
	cfg.DataDir = t.TempDir()
	_, err := New(context.Background(), cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "already listening") {
		t.Fatalf("second daemon: %v", err)
	}
}

func TestMetricsAndHealth(t *testing.T) {
	td := startDaemon(t, "", nil)
	create(t, td.client, jsTool)
	if _, err := callTool(td.client, "adder", map[string]any{"a": 1, "b": 2}); err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if err := td.client.Do(context.Background(), "GET", "/v1/health", nil, &raw); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", td.cfg.Socket)
	}}}
	resp, err := hc.Get("http://x/v1/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`toolcage_calls_total{kind="js",outcome="ok",tool="adder"} 1`, "toolcage_executors_started_total", `state="idle"`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("metrics lack %q:\n%s", want, b)
		}
	}
}

// noWait is c sending Toolcage-Approval-Wait: 0, so a call needing
// approval answers approval_required at once.
func noWait(c *api.Client) *api.Client {
	cp := *c
	cp.ApprovalWait = "0"
	return &cp
}
