package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// TestFilesystemToolset: the filesystem toolset's tools, through a
// worker's token, on a real workspace in the sandbox.
func TestFilesystemToolset(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	dir := sandboxDir(t)
	repo := gitRepo(t, dir, "initial")
	outside := filepath.Join(dir, "outside.txt")
	writeFile(t, outside, "host file\n")
	if err := os.Symlink(outside, filepath.Join(repo, "leak")); err != nil {
		t.Fatal(err)
	}
	sandboxOwn(t, repo)
	wdir := filepath.Join(dir, "agent")
	path := filepath.Join(wdir, "w.yaml")
	writeFile(t, path, `name: fs_agent
workspace: ../repo
readonly: false
toolsets:
  filesystem: {max_write_bytes: 64}
approval:
  tools: {write_file: preApproved, edit_file: preApproved}
`)
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	var shown api.Worker
	if err := c.Do(context.Background(), "GET", "/v1/workers/fs_agent", nil, &shown); err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{}
	for _, tl := range shown.Tools {
		sources[tl.Name] = tl.Source + "/" + tl.Approval
	}
	for name, want := range map[string]string{"read_file": "toolset:filesystem/preApproved", "write_file": "toolset:filesystem/preApproved",
		"delete_file": "toolset:filesystem/ask", "search": "toolset:filesystem/preApproved"} {
		if sources[name] != want {
			t.Errorf("worker show: %s is %q, want %q (all: %v)", name, sources[name], want, sources)
		}
	}
	agent := noWait(withToken(c, added.Token))
	result := func(name string, args any) map[string]any {
		t.Helper()
		r, err := callTool(agent, name, args)
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		var m map[string]any
		if err := json.Unmarshal(r.Result, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := result("read_file", map[string]any{"path": "README.md"}); m["content"] != "hello from the workspace\n" {
		t.Fatalf("read_file: %v", m)
	}
	if m := result("write_file", map[string]any{"path": "notes/todo.txt", "content": "one\ntwo\n"}); m["created"] != true {
		t.Fatalf("write_file: %v", m)
	}
	if m := result("edit_file", map[string]any{"path": "notes/todo.txt", "find": "two", "replace": "2"}); m["replaced"] != float64(1) {
		t.Fatalf("edit_file: %v", m)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "notes", "todo.txt")); string(b) != "one\n2\n" {
		t.Fatalf("on the host: %q", b)
	}
	if m := result("search", map[string]any{"pattern": "^hello"}); len(m["matches"].([]any)) != 1 {
		t.Fatalf("search: %v", m)
	}
	if m := result("glob", map[string]any{"pattern": "**/*.txt"}); len(m["entries"].([]any)) != 1 {
		t.Fatalf("glob: %v", m)
	}
	refused := []struct {
		tool string
		args map[string]any
		code errdefs.Code
	}{
		{"read_file", map[string]any{"path": "../outside.txt"}, errdefs.PolicyDenied},
		{"read_file", map[string]any{"path": outside}, errdefs.PolicyDenied},
		{"read_file", map[string]any{"path": "leak"}, errdefs.PolicyDenied},
		{"read_file", map[string]any{"path": "/workspace/../outside.txt"}, errdefs.PolicyDenied},
		{"edit_file", map[string]any{"path": "README.md", "find": "absent", "replace": "x"}, errdefs.InvalidArguments},
		{"write_file", map[string]any{"path": "big.txt", "content": strings.Repeat("x", 65)}, errdefs.LimitExceeded},
		{"read_file", map[string]any{"path": "README.md", "mode": "x"}, errdefs.InvalidArguments},
		{"delete_file", map[string]any{"path": "README.md"}, errdefs.ApprovalRequired},
	}
	for _, tt := range refused {
		_, err := callTool(agent, tt.tool, tt.args)
		if codeOf(err) != tt.code {
			t.Errorf("%s %v: %v, want %s", tt.tool, tt.args, err, tt.code)
		}
	}
	if _, err := callTool(agent, "write_file", map[string]any{"path": "exact.txt", "content": strings.Repeat("x", 64)}); err != nil {
		t.Errorf("a write at the cap: %v", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "host file\n" {
		t.Fatalf("the host file changed: %q", b)
	}

	// A read-only workspace: writes are refused with a clear code.
	writeFile(t, path, "name: fs_agent\nworkspace: ../repo\ntoolsets: {filesystem: {}}\n")
	waitFor(t, "the read-only reload", func() bool {
		_, err := callTool(agent, "write_file", map[string]any{"path": "x.txt", "content": "x"})
		return codeOf(err) == errdefs.ApprovalRequired
	})
	os.Remove(filepath.Join(repo, "x.txt")) // written before the reload took
	writeFile(t, path, "name: fs_agent\nworkspace: ../repo\ntoolsets: {filesystem: {}}\napproval: {tools: {write_file: preApproved}}\n")
	waitFor(t, "the read-only reload", func() bool {
		_, err := callTool(agent, "write_file", map[string]any{"path": "x.txt", "content": "x"})
		return codeOf(err) == errdefs.PolicyDenied && strings.Contains(err.Error(), "read-only")
	})
	if _, err := os.Stat(filepath.Join(repo, "x.txt")); err == nil {
		t.Fatal("a read-only workspace was written")
	}
}

// TestToolsetKindsRefusedOutside: the toolset-only kinds cannot be
// written by hand, by a person or an agent, in the catalog or a tool file.
func TestToolsetKindsRefusedOutside(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	for _, def := range []string{
		`{"name":"rf","description":"d","kind":"fs","permissions":["filesystem"],"fs":{"op":"read_file"}}`,
		`{"name":"ex","description":"d","kind":"exec","exec":{"rules":[{"pattern":"rm","approval":"preApproved"}]}}`,
	} {
		for _, cl := range []*api.Client{c, llm(c)} {
			err := cl.Do(context.Background(), "POST", "/v1/tools", []byte(def), nil)
			if codeOf(err) != errdefs.InvalidDefinition || !strings.Contains(err.Error(), "exists only in the built-in") {
				t.Errorf("create %s: %v", def, err)
			}
		}
		if err := c.Do(context.Background(), "POST", "/v1/tools/test", []byte(`{"definition":`+def+`}`), nil); codeOf(err) != errdefs.InvalidDefinition {
			t.Errorf("dry run %s: %v", def, err)
		}
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tools", "rf.yaml"), "name: rf\ndescription: d\nkind: fs\npermissions: [filesystem]\nfs: {op: read_file}\n")
	path := filepath.Join(dir, "w.yaml")
	writeFile(t, path, "name: sneaky\ntool_files: [tools/*.yaml]\n")
	if _, err := addWorker(c, path); codeOf(err) != errdefs.InvalidDefinition || !strings.Contains(err.Error(), "exists only in the built-in") {
		t.Errorf("a tool file naming kind fs: %v", err)
	}
}

// TestExecToolset: the exec tool under a worker's rules, per command of a
// command line, with wrappers, and under the global deny rules.
func TestExecToolset(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	dir := sandboxDir(t)
	repo := gitRepo(t, dir, "exec commit")
	sandboxOwn(t, repo)
	path := filepath.Join(dir, "agent", "w.yaml")
	writeFile(t, path, `name: exec_agent
workspace: ../repo
toolsets:
  exec:
    rules:
      - {pattern: "git status", approval: preApproved}
      - {pattern: "git log", approval: preApproved}
      - {pattern: "ls", approval: preApproved}
      - {pattern: "rm", approval: preApproved}
      - {pattern: "git push", approval: blocked}
      - {pattern: "git", approval: preApproved}
`)
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := noWait(withToken(c, added.Token))
	run := func(cmd string) (shellResult, error) {
		r, err := callTool(agent, "exec", map[string]any{"command": cmd})
		if err != nil {
			return shellResult{}, err
		}
		return shellOut(t, r), nil
	}
	out, err := run("git log --oneline && ls")
	if err != nil || out.ExitCode != 0 || !strings.Contains(out.Stdout, "exec commit") || !strings.Contains(out.Stdout, "README.md") {
		t.Fatalf("git log && ls in the workspace: %+v %v", out, err)
	}
	if out, err := run("timeout 10 env LC_ALL=C git status --short"); err != nil || out.ExitCode != 0 {
		t.Fatalf("wrapped git status: %+v %v", out, err)
	}
	tests := []struct {
		cmd  string
		code errdefs.Code
	}{
		// A second command no rule names: a person decides.
		{"git status && uname -a", errdefs.ApprovalRequired},
		{"git status | wc -l", errdefs.ApprovalRequired},
		{"git status | sh", errdefs.PolicyDenied}, // the deny rules first
		{"sh -c 'git status; id'", errdefs.ApprovalRequired},
		{"sudo git status", errdefs.PolicyDenied}, // the deny rules refuse sudo first
		// Blocked beats preApproved, in any segment.
		{"git push origin main", errdefs.PolicyDenied},
		{"git status && git push", errdefs.PolicyDenied},
		{"nice git push", errdefs.PolicyDenied},
		// The deny rules still deny under a preApproved rule.
		{"rm -rf /", errdefs.PolicyDenied},
		{"ls; rm -rf ~", errdefs.PolicyDenied},
		{"", errdefs.InvalidArguments},
	}
	for _, tt := range tests {
		_, err := run(tt.cmd)
		if codeOf(err) != tt.code {
			t.Errorf("exec %q: %v, want %s", tt.cmd, err, tt.code)
		}
	}
	// What a rule pre-approves still cannot write a read-only workspace.
	if out, err := run("rm README.md"); err != nil || out.ExitCode == 0 {
		t.Fatalf("rm in a read-only workspace: %+v %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(repo, "README.md")); err != nil {
		t.Fatal("the read-only workspace lost a file")
	}
}

// result decodes a call's JSON result into v.
func result(t *testing.T, r api.CallResponse, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Result, v); err != nil {
		t.Fatalf("result %s: %v", r.Result, err)
	}
}

// TestStateToolset: a worker's agent keeps JSON values across calls and
// daemon restarts, within the caps its file sets; another worker does
// not see them; every call is audited.
func TestStateToolset(t *testing.T) {
	data := t.TempDir()
	td := startDaemon(t, data, nil)
	dir := t.TempDir()
	pathA, pathB := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	writeFile(t, pathA, "name: sa\ntoolsets:\n  state: {max_keys: 3, max_value_bytes: 40}\n")
	writeFile(t, pathB, "name: sb\ntoolsets: {state: {}}\n")
	a, err := addWorker(td.client, pathA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := addWorker(td.client, pathB)
	if err != nil {
		t.Fatal(err)
	}
	agentA, agentB := withToken(td.client, a.Token), withToken(td.client, b.Token)

	call := func(c *api.Client, tool string, args map[string]any) api.CallResponse {
		t.Helper()
		r, err := callTool(c, tool, args)
		if err != nil {
			t.Fatalf("%s %v: %v", tool, args, err)
		}
		return r
	}
	call(agentA, "set_state", map[string]any{"key": "todo:1", "value": map[string]any{"title": "write tests", "done": false}})
	call(agentA, "set_state", map[string]any{"key": "todo:2", "value": []int{1, 2}})
	var got struct {
		Found bool            `json:"found"`
		Value json.RawMessage `json:"value"`
	}
	result(t, call(agentA, "get_state", map[string]any{"key": "todo:1"}), &got)
	if !got.Found || string(got.Value) != `{"done":false,"title":"write tests"}` {
		t.Fatalf("get: %+v", got)
	}
	result(t, call(agentB, "get_state", map[string]any{"key": "todo:1"}), &got)
	if got.Found {
		t.Fatal("worker sb sees sa's state")
	}
	// The caps of the worker's file, at their edges.
	if _, err := callTool(agentA, "set_state", map[string]any{"key": "big", "value": strings.Repeat("x", 38)}); err != nil {
		t.Fatalf("40-byte value: %v", err)
	}
	if _, err := callTool(agentA, "set_state", map[string]any{"key": "big", "value": strings.Repeat("x", 39)}); codeOf(err) != errdefs.LimitExceeded {
		t.Fatalf("41-byte value: %v", err)
	}
	if _, err := callTool(agentA, "set_state", map[string]any{"key": "fourth", "value": 4}); codeOf(err) != errdefs.LimitExceeded {
		t.Fatalf("a fourth key: %v", err)
	}
	if _, err := callTool(agentA, "set_state", map[string]any{"key": "", "value": 1}); codeOf(err) != errdefs.InvalidArguments {
		t.Fatalf("empty key: %v", err)
	}
	var keys struct{ Keys []string }
	result(t, call(agentA, "list_state_keys", map[string]any{"prefix": "todo:"}), &keys)
	if strings.Join(keys.Keys, ",") != "todo:1,todo:2" {
		t.Fatalf("list: %v", keys.Keys)
	}
	result(t, call(agentA, "list_state_keys", map[string]any{}), &keys)
	if len(keys.Keys) != 3 {
		t.Fatalf("list all: %v", keys.Keys)
	}
	var del struct{ Deleted bool }
	result(t, call(agentA, "delete_state", map[string]any{"key": "big"}), &del)
	if !del.Deleted {
		t.Fatal("delete reported nothing deleted")
	}

	// A person cannot write the kind by hand.
	err = td.client.Do(context.Background(), "POST", "/v1/tools", []byte(`{"name":"sneaky","description":"d","kind":"state","state":{"op":"set","max_keys":1000000}}`), nil)
	if codeOf(err) != errdefs.InvalidDefinition || !strings.Contains(err.Error(), "toolset") {
		t.Fatalf("a hand-written state tool: %v", err)
	}

	// The state outlives the daemon.
	td.stop()
	td = startDaemon(t, data, nil)
	result(t, call(withToken(td.client, a.Token), "get_state", map[string]any{"key": "todo:2"}), &got)
	if !got.Found || string(got.Value) != `[1,2]` {
		t.Fatalf("after a restart: %+v", got)
	}
	var ex api.ExecutionList
	if err := td.client.Do(context.Background(), "GET", "/v1/executions?tool=set_state", nil, &ex); err != nil || len(ex.Executions) < 4 {
		t.Fatalf("audit: %+v %v", ex, err)
	}
}

// TestSQLToolset: a worker's own database, reached only through the
// guards: reads and writes work, ATTACH and file pragmas are refused
// with policy_denied, a runaway query times out, the file sits in the
// worker's data dir.
func TestSQLToolset(t *testing.T) {
	data := t.TempDir()
	td := startDaemon(t, data, nil)
	path := filepath.Join(t.TempDir(), "db.yaml")
	writeFile(t, path, "name: dbw\ntoolsets:\n  sql: {query_timeout: 300ms, max_bytes: 1MB}\n")
	w, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := withToken(td.client, w.Token)
	r, err := callTool(agent, "db_sql", map[string]any{"sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"})
	if err != nil || r.IsError {
		t.Fatalf("create: %v %+v", err, r)
	}
	r, err = callTool(agent, "db_sql", map[string]any{"sql": "INSERT INTO notes (body) VALUES (?), (?)", "params": []string{"a", "b"}})
	var wr struct {
		Changes      int64 `json:"changes"`
		LastInsertID int64 `json:"last_insert_id"`
	}
	if err != nil {
		t.Fatal(err)
	}
	result(t, r, &wr)
	if wr.Changes != 2 || wr.LastInsertID != 2 {
		t.Fatalf("insert: %s", r.Result)
	}
	r, err = callTool(agent, "db_sql", map[string]any{"sql": "SELECT id, body FROM notes WHERE body = :b", "params": map[string]any{"b": "b"}})
	if err != nil || string(r.Result) != `{"columns":["id","body"],"rows":[[2,"b"]]}` {
		t.Fatalf("select: %v %s", err, r.Result)
	}
	r, err = callTool(agent, "db_sql", map[string]any{"sql": "SELEC nonsense"})
	if err != nil || !r.IsError || !strings.Contains(r.Error, "syntax") {
		t.Fatalf("a syntax error is the tool's: %v %+v", err, r)
	}
	other := filepath.Join(t.TempDir(), "other.db")
	for _, q := range []string{"ATTACH '" + other + "' AS o", "PRAGMA writable_schema = 1", "SELECT load_extension('x')"} {
		if _, err := callTool(agent, "db_sql", map[string]any{"sql": q}); codeOf(err) != errdefs.PolicyDenied {
			t.Errorf("%q: %v", q, err)
		}
	}
	start := time.Now()
	_, err = callTool(agent, "db_sql", map[string]any{"sql": "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT count(*) FROM c"})
	if codeOf(err) != errdefs.Timeout || time.Since(start) > 5*time.Second {
		t.Fatalf("endless query: %v after %v", err, time.Since(start))
	}
	r, err = callTool(agent, "db_schema", nil)
	if err != nil || !strings.Contains(string(r.Result), `"name":"notes"`) {
		t.Fatalf("schema: %v %s", err, r.Result)
	}
	if _, err := os.Stat(filepath.Join(data, "workers", "dbw", "db.sqlite")); err != nil {
		t.Fatalf("database file: %v", err)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Fatalf("ATTACH made a file: %v", err)
	}
	// A call not through a worker has no database.
	if _, err := callTool(td.client, "db_sql", map[string]any{"sql": "SELECT 1"}); codeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("outside a worker: %v", err)
	}
}

// Removing a worker removes its database (the file and its directory,
// after the open handle is closed) and its state: the same name added
// again starts empty.
func TestWorkerRemoveDeletesItsData(t *testing.T) {
	data := t.TempDir()
	td := startDaemon(t, data, nil)
	path := filepath.Join(t.TempDir(), "gone.yaml")
	writeFile(t, path, "name: gone\ntoolsets:\n  sql: {}\n  state: {}\n")
	dir := filepath.Join(data, "workers", "gone")
	for round := range 2 {
		w, err := addWorker(td.client, path)
		if err != nil {
			t.Fatal(err)
		}
		agent := withToken(td.client, w.Token)
		r, err := callTool(agent, "db_schema", nil)
		if err != nil || string(r.Result) != `{"tables":[]}` {
			t.Fatalf("round %d: a new worker's schema: %v %s", round, err, r.Result)
		}
		r, err = callTool(agent, "get_state", map[string]any{"key": "k"})
		if err != nil || !strings.Contains(string(r.Result), `"found":false`) {
			t.Fatalf("round %d: a new worker's state: %v %s", round, err, r.Result)
		}
		if r, err := callTool(agent, "db_sql", map[string]any{"sql": "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('x')"}); err != nil || r.IsError {
			t.Fatalf("round %d: write: %v %+v", round, err, r)
		}
		if _, err := callTool(agent, "set_state", map[string]any{"key": "k", "value": 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "db.sqlite")); err != nil {
			t.Fatalf("round %d: database file: %v", round, err)
		}
		if err := td.client.Do(context.Background(), "DELETE", "/v1/workers/gone", nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("round %d: the removed worker's directory: %v", round, err)
		}
		if _, err := callTool(agent, "db_schema", nil); codeOf(err) != errdefs.Unauthorized {
			t.Fatalf("round %d: the removed worker's token: %v", round, err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("round %d: a refused call made the directory again: %v", round, err)
		}
	}
}

// TestFetchToolset: fetch_url reaches any host the toolset's allowlist
// covers ("*" here), through the guard: the test server on 127.0.0.1 is
// reached only because the config names that host in
// allow_private_hosts; loopback by another name, private and metadata
// addresses are refused; a long body is cut; a method the toolset does
// not allow is forbidden before any request is sent (GET and HEAD only,
// unless methods: says more); "*" in a tool's own allowlist is refused.
func TestFetchToolset(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/long" {
			w.Write([]byte(strings.Repeat("é", 1000)))
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"method": r.Method, "x": r.Header.Get("X-Test"), "body": string(body)})
	}))
	defer srv.Close()
	td := startDaemon(t, "", func(c *Config) { c.HTTP.AllowPrivateHosts = []string{"127.0.0.1"} })
	path := filepath.Join(t.TempDir(), "f.yaml")
	writeFile(t, path, "name: fw\ntoolsets:\n  fetch: {allowed_domains: [\"*\"], max_response_bytes: 1001, methods: [get, Post]}\n")
	w, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := withToken(td.client, w.Token)
	r, err := callTool(agent, "fetch_url", map[string]any{"url": srv.URL + "/echo", "method": "POST", "headers": map[string]string{"X-Test": "yes"}, "body": "hello"})
	if err != nil || r.IsError {
		t.Fatalf("fetch: %v %+v", err, r)
	}
	var v struct {
		Status    int
		Body      map[string]string
		Truncated bool
	}
	result(t, r, &v)
	if v.Status != 200 || v.Body["method"] != "POST" || v.Body["x"] != "yes" || v.Body["body"] != "hello" || v.Truncated {
		t.Fatalf("echo: %s", r.Result)
	}
	r, err = callTool(agent, "fetch_url", map[string]any{"url": srv.URL + "/long"})
	var long struct {
		Body      struct{ Data string }
		Truncated bool
	}
	if err != nil {
		t.Fatal(err)
	}
	result(t, r, &long)
	// 1,001 bytes cut back to 1,000: whole two-byte characters only.
	if !long.Truncated || len(long.Body.Data) != 1000 {
		t.Fatalf("long body: truncated %v, %d bytes", long.Truncated, len(long.Body.Data))
	}
	before := hits.Load()
	u, _ := url.Parse(srv.URL)
	for _, target := range []string{
		"http://localhost:" + u.Port() + "/", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/",
		"http://[::1]:" + u.Port() + "/", "file:///etc/passwd", "http://2130706433:" + u.Port() + "/",
	} {
		if _, err := callTool(agent, "fetch_url", map[string]any{"url": target}); codeOf(err) != errdefs.PolicyDenied {
			t.Errorf("%s: %v", target, err)
		}
	}
	if _, err := callTool(agent, "fetch_url", map[string]any{"url": srv.URL, "headers": map[string]string{"Host": "internal"}}); codeOf(err) != errdefs.PolicyDenied {
		t.Errorf("Host header: %v", err)
	}
	// Methods the worker's methods: leave out.
	for _, m := range []string{"DELETE", "head", "PUT"} {
		if _, err := callTool(agent, "fetch_url", map[string]any{"url": srv.URL + "/echo", "method": m}); codeOf(err) != errdefs.Forbidden {
			t.Errorf("method %s: %v", m, err)
		}
	}
	if e := executionsOf(t, td.client, "tool=fetch_url&limit=1")[0]; e.Outcome != "refused" || e.ErrorCode != "forbidden" {
		t.Errorf("forbidden method recorded as %+v", e)
	}
	// A worker that names no methods reads: GET and HEAD, not POST.
	readerPath := filepath.Join(t.TempDir(), "r.yaml")
	writeFile(t, readerPath, "name: fr\ntoolsets:\n  fetch: {allowed_domains: [\"*\"]}\n")
	rw, err := addWorker(td.client, readerPath)
	if err != nil {
		t.Fatal(err)
	}
	reader := withToken(td.client, rw.Token)
	if _, err := callTool(reader, "fetch_url", map[string]any{"url": srv.URL + "/echo", "method": "POST", "body": "x"}); codeOf(err) != errdefs.Forbidden {
		t.Errorf("POST through a reading worker: %v", err)
	}
	if hits.Load() != before {
		t.Fatal("a refused fetch reached the server")
	}
	for _, m := range []string{"", "HEAD"} {
		if r, err := callTool(reader, "fetch_url", map[string]any{"url": srv.URL + "/echo", "method": m}); err != nil || r.IsError {
			t.Errorf("method %q through a reading worker: %v %+v", m, err, r)
		}
	}
	if got := hits.Load(); got != before+2 {
		t.Fatalf("the reading worker's GET and HEAD reached the server %d times", got-before)
	}
	// Without allow_private_hosts, the same worker reaches no loopback.
	td2 := startDaemon(t, "", nil)
	w2, err := addWorker(td2.client, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := callTool(withToken(td2.client, w2.Token), "fetch_url", map[string]any{"url": srv.URL}); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("loopback without allow_private_hosts: %v", err)
	}
	// "*" is the toolset's alone.
	for _, def := range []string{
		`{"name":"anyhttp","description":"d","kind":"http","http":{"method":"GET","url":"https://example.com/","allowed_domains":["*"]}}`,
		`{"name":"anyjs","description":"d","kind":"js","permissions":["network"],"js":{"code":"return 1","allowed_domains":["*"]}}`,
		`{"name":"anyfetch","description":"d","kind":"fetch","fetch":{"allowed_domains":["*"]}}`,
	} {
		if err := td2.client.Do(context.Background(), "POST", "/v1/tools", []byte(def), nil); codeOf(err) != errdefs.InvalidDefinition {
			t.Errorf("%s: %v", def, err)
		}
	}
}

// TestJSUtilsState: a worker's JavaScript tools read and write the same
// state as its state toolset; without the toolset they have none.
func TestJSUtilsState(t *testing.T) {
	td := startDaemon(t, "", nil)
	create(t, td.client, `{"name":"counter","description":"counts","kind":"js","js":{"code":
		"const n = (utils.getState('count') ?? 0) + 1; utils.setState('count', n); utils.deleteState('gone'); return {n, keys: utils.listStateKeys('c')}"}}`)
	create(t, td.client, `{"name":"hog","description":"too big","kind":"js","js":{"code":"utils.setState('big', 'x'.repeat(100)); return 1"}}`)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.yaml"), "name: js1\ntools: [counter, hog]\ntoolsets: {state: {max_value_bytes: 64}}\n")
	writeFile(t, filepath.Join(dir, "n.yaml"), "name: js2\ntools: [counter]\n")
	w1, err := addWorker(td.client, filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	w2, err := addWorker(td.client, filepath.Join(dir, "n.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	a1 := withToken(td.client, w1.Token)
	if _, err := callTool(a1, "set_state", map[string]any{"key": "gone", "value": true}); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 2; want++ {
		r, err := callTool(a1, "counter", nil)
		if err != nil || r.IsError || string(r.Result) != fmt.Sprintf(`{"n":%d,"keys":["count"]}`, want) {
			t.Fatalf("call %d: %v %+v", want, err, r)
		}
	}
	var got struct {
		Found bool
		Value json.RawMessage
	}
	result(t, mustCall(t, a1, "get_state", map[string]any{"key": "count"}), &got)
	if string(got.Value) != "2" {
		t.Fatalf("the toolset sees %s", got.Value)
	}
	result(t, mustCall(t, a1, "get_state", map[string]any{"key": "gone"}), &got)
	if got.Found {
		t.Fatal("deleteState did not delete")
	}
	r, err := callTool(a1, "hog", nil)
	if err != nil || !r.IsError || !strings.Contains(r.Error, "RangeError") {
		t.Fatalf("a value over the cap: %v %+v", err, r)
	}
	r, err = callTool(withToken(td.client, w2.Token), "counter", nil)
	if err != nil || !r.IsError || !strings.Contains(r.Error, "state toolset") {
		t.Fatalf("a worker without state: %v %+v", err, r)
	}
}

func mustCall(t *testing.T, c *api.Client, tool string, args any) api.CallResponse {
	t.Helper()
	r, err := callTool(c, tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return r
}

// TestExecGitInAPersonsRepo: exec runs git in a read-only workspace the
// sandbox's user does not own (a person's repository, a root daemon's
// sandbox running as nobody): git's ownership check is told the workspace
// is safe, so it works as the person would expect.
func TestExecGitInAPersonsRepo(t *testing.T) {
	td := startDaemon(t, "", nil)
	dir := sandboxDir(t)
	gitRepo(t, dir, "the person's commit") // left owned by the test's user
	path := filepath.Join(dir, "agent", "w.yaml")
	writeFile(t, path, "name: git_agent\nworkspace: ../repo\ntoolsets:\n  exec:\n    rules:\n      - {pattern: \"git log\", approval: preApproved}\n")
	added, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := callTool(noWait(withToken(td.client, added.Token)), "exec", map[string]any{"command": "git log --oneline"})
	if err != nil {
		t.Fatal(err)
	}
	if out := shellOut(t, r); out.ExitCode != 0 || !strings.Contains(out.Stdout, "the person's commit") {
		t.Errorf("git log in a repository the sandbox does not own: %+v", out)
	}
}
