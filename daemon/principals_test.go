package daemon

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// The attacker here holds a worker token and nothing else. Each test is one
// class of attempt to do what only the worker's person may do; each asserts
// the refusal, its stable code, and that nothing changed.

// workerAgent registers worker name with the file body given (after its
// name: line) and returns its agent's client.
func workerAgent(t *testing.T, td *testDaemon, name, body string) *api.Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	writeFile(t, path, "name: "+name+"\n"+body)
	added, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	return withToken(td.client, added.Token)
}

// makerWorker registers a worker whose agent may make tools (unless extra
// writes its own agent_tools:), and returns the agent's client.
func makerWorker(t *testing.T, td *testDaemon, name, extra string) *api.Client {
	t.Helper()
	if !strings.Contains(extra, "agent_tools:") {
		extra = "agent_tools: {create: true}\n" + extra
	}
	return workerAgent(t, td, name, extra)
}

// parkAs calls tool with args as c without waiting; it must park, and the
// approval's id is returned.
func parkAs(t *testing.T, c *api.Client, tool string, args any) string {
	t.Helper()
	_, err := callTool(noWait(c), tool, args)
	ae := apiErr(t, err)
	if ae.Code != errdefs.ApprovalRequired || ae.ApprovalID == "" {
		t.Fatalf("%s %v: want a new pending approval, got %v", tool, args, err)
	}
	return ae.ApprovalID
}

// An approval names a tool by name and version; a tool deleted and made
// again starts at version 1 with other code. The person's approvals of the
// old tool (for good, for a retry, or still pending) must not run the new.
func TestApprovalsDoNotOutliveTheirTool(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	agent := makerWorker(t, td, "maker", "")
	ctx := context.Background()
	const honest = `{"name":"twin","description":"d","kind":"js","parameters":{"type":"object"},"js":{"code":"return 'honest'"}}`
	const swapped = `{"name":"twin","description":"d","kind":"js","parameters":{"type":"object"},"js":{"code":"return 'swapped'"}}`
	create(t, agent, honest)

	always := parkAs(t, agent, "twin", map[string]any{"n": 1})
	if err := c.Do(ctx, "POST", "/v1/approvals/"+always+"/allow", api.ApprovalDecision{Always: true}, nil); err != nil {
		t.Fatal(err)
	}
	if r, err := callTool(noWait(agent), "twin", map[string]any{"n": 1}); err != nil || string(r.Result) != `"honest"` {
		t.Fatalf("the always-approved call: %v %s", err, r.Result)
	}
	retry := parkAs(t, agent, "twin", map[string]any{"n": 2})
	allow(t, c, retry)
	pending := parkAs(t, agent, "twin", map[string]any{"n": 3})

	if err := agent.Do(ctx, "DELETE", "/v1/tools/twin?confirm=true", nil, nil); err != nil {
		t.Fatal(err)
	}
	if tool := create(t, agent, swapped); tool.Version != 1 {
		t.Fatalf("made again at version %d", tool.Version)
	}
	for _, n := range []int{1, 2} {
		if r, err := callTool(noWait(agent), "twin", map[string]any{"n": n}); codeOf(err) != errdefs.ApprovalRequired {
			t.Errorf("n=%d: the old tool's approval ran the new one: %v %s", n, err, r.Result)
		}
	}
	// The approval pending when the tool went is no longer decidable: a
	// person allowing it would approve code they never saw.
	if err := c.Do(ctx, "POST", "/v1/approvals/"+pending+"/allow", nil, nil); codeOf(err) != errdefs.Conflict {
		t.Errorf("allowing an approval of a deleted tool: %v", err)
	}
	if r, err := callTool(noWait(agent), "twin", map[string]any{"n": 3}); codeOf(err) != errdefs.ApprovalRequired {
		t.Errorf("n=3: ran on the old tool's approval: %v %s", err, r.Result)
	}
	if a := getApproval(t, c, retry); a.UsedAt == nil {
		t.Errorf("the unused allowed approval of the deleted tool is still usable: %+v", a)
	}
}

// A dry run (POST /v1/tools/test) runs an unsaved definition at once. An
// agent's dry run must not run what its making the tool would leave
// waiting for a person (shell, HTTP, permissions, mounts), nor reach past
// its worker: what it runs is held to the worker's rules like any call.
func TestAgentDryRunHeldToItsWorker(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	create(t, c, jsTool) // adder, the person's, outside the worker
	// Not under /tmp: the sandbox's own /tmp hides it (and refuses it).
	outside, err := os.MkdirTemp("/var/tmp", "tc-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	writeFile(t, filepath.Join(outside, "private.txt"), "the person's file")
	agent := makerWorker(t, td, "maker", "")
	ctx := context.Background()
	dry := func(def string) (api.CallResponse, error) {
		var out api.CallResponse
		err := agent.Do(ctx, "POST", "/v1/tools/test", api.TestRequest{Definition: []byte(def)}, &out)
		return out, err
	}
	refused := []struct {
		name, def string
		code      errdefs.Code
	}{
		{"shell", `{"name":"d1","description":"d","kind":"shell","shell":{"command":"echo ran"}}`, errdefs.PolicyDenied},
		{"http", `{"name":"d2","description":"d","kind":"http","http":{"method":"GET","url":"http://127.0.0.1:1/","allowed_domains":["127.0.0.1"]}}`, errdefs.PolicyDenied},
		{"js with network", `{"name":"d3","description":"d","kind":"js","permissions":["network"],"js":{"code":"return 1","allowed_domains":["example.com"]}}`, errdefs.PolicyDenied},
		{"js with a mount outside the worker", `{"name":"d4","description":"d","kind":"js","permissions":["filesystem"],` +
			`"mounts":[{"path":"` + outside + `","readonly":true}],"js":{"code":"return 1"}}`, errdefs.Forbidden},
		{"shell with a mount outside the worker", `{"name":"d5","description":"d","kind":"shell","permissions":["filesystem"],` +
			`"mounts":[{"path":"` + outside + `","readonly":true}],"shell":{"command":"cat /mnt/private.txt"}}`, errdefs.Forbidden},
		{"js naming a secret", `{"name":"d8","description":"d","kind":"js","secrets":["api_key"],"js":{"code":"return 1"}}`, errdefs.PolicyDenied},
	}
	for _, tt := range refused {
		out, err := dry(tt.def)
		if code := codeOf(err); code != tt.code {
			t.Errorf("%s: an agent's dry run ran or failed otherwise: %v %s", tt.name, err, out.Result)
		}
	}
	// Harmless JavaScript runs, bounded by the worker: the person's tool
	// outside it is neither listed nor callable from its code.
	out, err := dry(`{"name":"d6","description":"d","kind":"js","js":{"code":` +
		`"let seen = utils.listTools().map(t => t.name); try { await utils.callTool('adder', {a: 1, b: 2}); return 'called adder' } catch (e) { return seen.concat([e.code]) }"}}`)
	if err != nil || string(out.Result) != `["tool_not_found"]` {
		t.Errorf("an agent's dry run reached outside its worker: %v %s", err, out.Result)
	}
	// Nothing ran: no record of a refused dry run is ok.
	for _, e := range executionsOf(t, c, "worker=maker") {
		if e.Tool != "test:d6" && e.Outcome == "ok" {
			t.Errorf("a refused dry run ran: %+v", e)
		}
	}
	// The person's own dry run of a shell tool runs, as before.
	var mine api.CallResponse
	if err := c.Do(ctx, "POST", "/v1/tools/test", api.TestRequest{Definition: []byte(`{"name":"d7","description":"d","kind":"shell","shell":{"command":"echo ran"}}`)}, &mine); err != nil {
		t.Fatalf("the person's dry run: %v", err)
	}
}

// A worker's agent-made tools are recorded by name. A name the agent
// deleted must not grant its agent the next tool made under that name: a
// person's, or another agent's.
func TestDeletedAgentToolNameGrantsNothing(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	maker := makerWorker(t, td, "maker", "")
	other := makerWorker(t, td, "other", "")
	const lure = `{"name":"lure","description":"d","kind":"js","approval":"preApproved","js":{"code":"return 'agent'"}}`
	create(t, maker, lure)
	if err := maker.Do(ctx, "DELETE", "/v1/tools/lure?confirm=true", nil, nil); err != nil {
		t.Fatal(err)
	}
	create(t, c, `{"name":"lure","description":"d","kind":"js","js":{"code":"return 'the person'"}}`)
	if r, err := callTool(noWait(maker), "lure", nil); codeOf(err) != errdefs.ToolNotFound {
		t.Errorf("the person's tool, under a name the agent deleted: %v %s", err, r.Result)
	}
	if err := maker.Do(ctx, "GET", "/v1/tools/lure", nil, nil); codeOf(err) != errdefs.ToolNotFound {
		t.Errorf("get of the person's tool: %v", err)
	}
	if names := listNames(t, maker, ""); len(names) != 0 {
		t.Errorf("maker lists %v", names)
	}
	// Another agent's tool under the name, likewise.
	if err := c.Do(ctx, "DELETE", "/v1/tools/lure", nil, nil); err != nil {
		t.Fatal(err)
	}
	create(t, other, lure)
	for _, try := range []struct{ method, path string }{
		{"POST", "/v1/tools/lure/disable"}, {"DELETE", "/v1/tools/lure?confirm=true"}, {"GET", "/v1/tools/lure/history"},
	} {
		if err := maker.Do(ctx, try.method, try.path, nil, nil); codeOf(err) != errdefs.ToolNotFound {
			t.Errorf("%s %s of another agent's tool: %v", try.method, try.path, err)
		}
	}
	if r, err := callTool(noWait(other), "lure", nil); err != nil || string(r.Result) != `"agent"` {
		t.Errorf("other's own tool after maker's attempts: %v %s", err, r.Result)
	}
}

// mcpPost sends one JSON-RPC message to the MCP HTTP endpoint path with
// the headers given, and returns the status and the session id it names.
func mcpPost(t *testing.T, addr, path string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", "http://"+addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

// MCP over HTTP: the token travels in its header only, a browser's
// cross-site request (an Origin that is not this loopback endpoint's) is
// refused, and a session belongs to the token that opened it: another
// worker's token, or another token of the same worker, cannot use it.
func TestMCPHTTPSessionsAndOrigins(t *testing.T) {
	f := newMCPFixture(t)
	addr := f.td.d.MCPAddr()
	other := registerRaw(t, f.td, "other")
	second, _, err := f.td.d.store.IssueWorkerToken(context.Background(), "mw")
	if err != nil {
		t.Fatal(err)
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"adder","arguments":{"a":1,"b":2}}}`
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	status, sid := mcpPost(t, addr, "/mcp/mw", bearer(f.token), initialize)
	if status != 200 || sid == "" {
		t.Fatalf("initialize: %d %q", status, sid)
	}
	withSession := func(h map[string]string) map[string]string {
		h["Mcp-Session-Id"] = sid
		h["Mcp-Protocol-Version"] = "2025-06-18"
		return h
	}
	for _, tc := range []struct {
		name, path string
		hdr        map[string]string
		body       string
		want       int
	}{
		{"token in the query string", "/mcp/mw?access_token=" + f.token, map[string]string{}, initialize, 401},
		{"token in the query string, bearer empty", "/mcp/mw?token=" + f.token, map[string]string{"Authorization": "Bearer "}, initialize, 401},
		{"a cross-site page", "/mcp/mw", map[string]string{"Authorization": "Bearer " + f.token, "Origin": "http://evil.example"}, initialize, 403},
		{"a cross-site page posing as localhost by name", "/mcp/mw", map[string]string{"Authorization": "Bearer " + f.token, "Origin": "http://localhost.evil.example"}, initialize, 403},
		{"a null origin", "/mcp/mw", map[string]string{"Authorization": "Bearer " + f.token, "Origin": "null"}, initialize, 403},
		{"another worker's token on the session", "/mcp/other", withSession(bearer(other)), call, 0},
		{"another worker's token on the session's path", "/mcp/mw", withSession(bearer(other)), call, 401},
		{"a second token of the worker on the session", "/mcp/mw", withSession(bearer(second)), call, 0},
	} {
		got, _ := mcpPost(t, addr, tc.path, tc.hdr, tc.body)
		if (tc.want != 0 && got != tc.want) || (tc.want == 0 && got < 400) {
			t.Errorf("%s: status %d, want %d (0: any refusal)", tc.name, got, tc.want)
		}
	}
	// Its own loopback origin, and none (a client that is not a browser), are served.
	for _, origin := range []string{"", "http://" + addr} {
		h := bearer(f.token)
		if origin != "" {
			h["Origin"] = origin
		}
		if got, _ := mcpPost(t, addr, "/mcp/mw", h, initialize); got != 200 {
			t.Errorf("origin %q: status %d", origin, got)
		}
	}
	// The session's own token still works; nothing ran for the others.
	if got, _ := mcpPost(t, addr, "/mcp/mw", withSession(bearer(f.token)), call); got != 200 {
		t.Errorf("the session's own call: %d", got)
	}
	if n := len(executionsOf(t, f.td.client, "tool=adder")); n != 1 {
		t.Errorf("adder ran %d times, want once (the session's own call)", n)
	}
}

// A worker's file names the catalog tools it grants. A name no tool holds
// yet is not a grant to whoever makes a tool of it first: an agent's tool
// under it stays its maker's worker's only, so another worker's agent
// never runs it (with its own worker's grants for the code's nested calls).
func TestAgentToolDoesNotSquatAnotherWorkersName(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	create(t, c, jsTool) // adder
	squatter := makerWorker(t, td, "squatter", "")
	victim := workerAgent(t, td, "victim", "tools: [adder, report]\n")
	create(t, squatter, `{"name":"report","description":"d","kind":"js","approval":"preApproved",`+
		`"js":{"code":"return await utils.callTool('adder', {a: 40, b: 2})"}}`)
	if r, err := callTool(noWait(victim), "report", nil); codeOf(err) != errdefs.ToolNotFound {
		t.Errorf("the victim's agent ran the squatter's tool: %v %s", err, r.Result)
	}
	if err := victim.Do(ctx, "GET", "/v1/tools/report", nil, nil); codeOf(err) != errdefs.ToolNotFound {
		t.Errorf("the victim's agent sees the squatter's tool: %v", err)
	}
	if names := listNames(t, victim, ""); len(names) != 1 || names[0] != "adder" {
		t.Errorf("the victim lists %v", names)
	}
	var defs api.ToolDefinitions
	if err := victim.Do(ctx, "GET", "/v1/tools/definitions?format=openai", nil, &defs); err != nil || strings.Contains(string(mustJSON(defs.Tools)), "report") {
		t.Errorf("the victim's definitions: %v %s", err, mustJSON(defs.Tools))
	}
	// Its maker still has it; a person's tool of a listed name is granted as before.
	if r, err := callTool(noWait(squatter), "report", nil); err != nil {
		t.Errorf("the maker's own call: %v %s", err, r.Result)
	}
	if r, err := callTool(noWait(victim), "adder", map[string]any{"a": 1, "b": 2}); err != nil || string(r.Result) != "3" {
		t.Errorf("the victim's person's tool: %v %s", err, r.Result)
	}
}

// personRoutes is every route only a person may use, with the act it is
// logged as ("" for a read refused without an act: the admin log).
func personRoutes(workerPath string) []struct{ act, method, path, body string } {
	return []struct{ act, method, path, body string }{
		{"approval.allow", "POST", "/v1/approvals/abcd2345/allow", `{"always":true}`},
		{"approval.deny", "POST", "/v1/approvals/abcd2345/deny", ``},
		{"tool.approve", "POST", "/v1/tools/adder/approve", ``},
		{"tool.reject", "POST", "/v1/tools/adder/reject", ``},
		{"secret.set", "PUT", "/v1/secrets/api_key", `{"value":"stolen"}`},
		{"secret.list", "GET", "/v1/secrets", ``},
		{"secret.rm", "DELETE", "/v1/secrets/api_key", ``},
		{"secret.rotate", "POST", "/v1/secrets/rotate", ``},
		{"worker.add", "POST", "/v1/workers", `{"path":"` + workerPath + `"}`},
		{"worker.rm", "DELETE", "/v1/workers/victim", ``},
		{"worker.token.rotate", "POST", "/v1/workers/victim/token", ``},
		{"worker.token.revoke", "DELETE", "/v1/workers/victim/token", ``},
		{"worker.token.rotate", "POST", "/v1/workers/helper/token", ``},
		{"worker.token.revoke", "DELETE", "/v1/workers/helper/token", ``},
		{"worker.rm", "DELETE", "/v1/workers/helper", ``},
		{"ui.login", "POST", "/v1/ui/login", ``},
		{"", "GET", "/v1/admin-acts", ``},
	}
}

// Every person-only route, tried with a worker token as is and with every
// way of dressing it up as a person: each is refused with its stable code,
// recorded in the admin log as the token's agent, and nothing changes.
func TestPersonRoutesRefuseEveryDisguise(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	create(t, c, jsTool)
	create(t, c, `{"name":"ask_me","description":"d","kind":"js","approval":"ask","js":{"code":"return 1"}}`)
	if err := c.Do(ctx, "PUT", "/v1/secrets/api_key", api.SecretValue{Value: new("the person's")}, nil); err != nil {
		t.Fatal(err)
	}
	tok := registerRaw(t, td, "helper")
	victimTok := registerRaw(t, td, "victim")
	newWorker := filepath.Join(t.TempDir(), "intruder.yaml")
	writeFile(t, newWorker, "name: intruder\ntools: [adder]\n")
	// A pending approval of the person's, and one of the agent's own.
	personsApproval := parkAs(t, c, "ask_me", nil)
	before := len(adminActs(t, c))

	variants := []struct {
		name string
		hdr  http.Header
		code errdefs.Code
		// spoof: refused at authentication (recorded as auth.refused).
		spoof bool
	}{
		{"token", http.Header{"Authorization": {"Bearer " + tok}}, errdefs.Forbidden, false},
		{"token, scheme in lower case", http.Header{"Authorization": {"bearer " + tok}}, errdefs.Forbidden, false},
		{"token claiming type user", http.Header{"Authorization": {"Bearer " + tok}, "Toolcage-Caller-Type": {"user"}}, errdefs.Forbidden, true},
		{"token claiming type USER", http.Header{"Authorization": {"Bearer " + tok}, "Toolcage-Caller-Type": {"USER"}}, errdefs.InvalidRequest, false},
		{"token claiming a person's caller id", http.Header{"Authorization": {"Bearer " + tok}, "Toolcage-Caller-Id": {"uid:0"}}, errdefs.Forbidden, true},
		{"token naming another worker", http.Header{"Authorization": {"Bearer " + tok}, "Toolcage-Worker": {"victim"}}, errdefs.Forbidden, true},
		{"token naming its own worker", http.Header{"Authorization": {"Bearer " + tok}, "Toolcage-Worker": {"helper"}}, errdefs.Forbidden, false},
		{"token, type user repeated", http.Header{"Authorization": {"Bearer " + tok}, "Toolcage-Caller-Type": {"llm", "user"}}, errdefs.InvalidRequest, false},
		{"token repeated", http.Header{"Authorization": {"Bearer " + tok, "Bearer " + tok}}, errdefs.InvalidRequest, false},
		{"another worker's token", http.Header{"Authorization": {"Bearer " + victimTok}}, errdefs.Forbidden, false},
		{"two tokens in one header", http.Header{"Authorization": {"Bearer " + tok + ", Bearer " + victimTok}}, errdefs.Unauthorized, false},
		{"token in another scheme", http.Header{"Authorization": {"Token " + tok}}, errdefs.Unauthorized, false},
	}
	recorded := 0
	for _, rt := range personRoutes(newWorker) {
		for _, v := range variants {
			hdr := v.hdr.Clone()
			if rt.body != "" {
				hdr.Set("Content-Type", "application/json")
			}
			status, e := rawDo(t, td.cfg.Socket, rt.method, rt.path, hdr, rt.body)
			if e.Code != v.code || status != statusOf(v.code) {
				t.Errorf("%s %s with %s: %d %s %q, want %s", rt.method, rt.path, v.name, status, e.Code, e.Message, v.code)
				continue
			}
			if v.code != errdefs.Forbidden {
				continue // malformed or unknown: nothing to attribute
			}
			acts := adminActs(t, c)
			a := acts[0]
			wantAct, wantTarget := rt.act, ""
			if v.spoof {
				wantAct, wantTarget = "auth.refused", rt.method+" "+rt.path
			}
			if wantAct == "" {
				if len(acts) != before+recorded {
					t.Errorf("%s %s with %s: recorded %+v", rt.method, rt.path, v.name, a)
				}
				continue
			}
			recorded++
			wantWorker := "helper"
			if v.name == "another worker's token" {
				wantWorker = "victim"
			}
			if len(acts) != before+recorded || a.Act != wantAct || a.Outcome != "refused" || a.ErrorCode != "forbidden" ||
				a.CallerType != "llm" || a.Worker != wantWorker || a.TokenID == "" || (wantTarget != "" && a.Target != wantTarget) {
				t.Errorf("%s %s with %s: recorded as %+v (%d acts, want %d)", rt.method, rt.path, v.name, a, len(acts), before+recorded)
			}
		}
	}
	// Nothing changed: the secret, the workers and their tokens, the approval, the tools.
	var sl api.SecretList
	if err := c.Do(ctx, "GET", "/v1/secrets", nil, &sl); err != nil || len(sl.Secrets) != 1 {
		t.Errorf("secrets: %v %+v", err, sl)
	}
	var wl api.WorkerList
	if err := c.Do(ctx, "GET", "/v1/workers", nil, &wl); err != nil || len(wl.Workers) != 2 {
		t.Errorf("workers: %v %+v", err, wl)
	}
	for _, tk := range []string{tok, victimTok} {
		if err := withToken(c, tk).Do(ctx, "GET", "/v1/health", nil, nil); err != nil {
			t.Errorf("a token stopped working: %v", err)
		}
	}
	if a := getApproval(t, c, personsApproval); a.Status != "pending" {
		t.Errorf("the person's approval: %+v", a)
	}
	var tool api.Tool
	if err := c.Do(ctx, "GET", "/v1/tools/adder", nil, &tool); err != nil || tool.Status != "active" {
		t.Errorf("adder: %v %+v", err, tool)
	}
}

// An agent may not make a tool named as one of its worker's own: its
// toolsets' tools and the meta-tools (a tool file's likewise). Names the
// catalog cannot hold (case, look-alike letters) are invalid; a person's
// tool of the name is a conflict, and stays the person's.
func TestAgentToolNamesCannotShadow(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	create(t, c, jsTool) // adder
	agent := makerWorker(t, td, "maker", "agent_tools: {create: true, meta_tools: true}\ntoolsets:\n  state: {}\n")
	def := func(name string) string {
		return `{"name":"` + name + `","description":"d","kind":"js","js":{"code":"return 'shadow'"}}`
	}
	for _, tt := range []struct {
		name string
		code errdefs.Code
	}{
		{"set_state", errdefs.Conflict},
		{"get_state", errdefs.Conflict},
		{"create_tool", errdefs.InvalidDefinition}, // reserved for everyone
		{"toggle_custom_tool", errdefs.InvalidDefinition},
		{"adder", errdefs.Conflict},
		{"Adder", errdefs.InvalidDefinition},
		{"ADDER", errdefs.InvalidDefinition},
		{"аdder", errdefs.InvalidDefinition},       // Cyrillic а
		{"adder\u200b", errdefs.InvalidDefinition}, // zero-width space
		{"adder ", errdefs.InvalidDefinition},
		{"../adder", errdefs.InvalidDefinition},
	} {
		var tool api.Tool
		err := agent.Do(context.Background(), "POST", "/v1/tools", []byte(def(tt.name)), &tool)
		if codeOf(err) != tt.code {
			t.Errorf("%q: %v (%+v), want %s", tt.name, err, tool, tt.code)
		}
	}
	if got := listNames(t, agent, ""); slices.Contains(got, "adder") {
		t.Errorf("maker lists %v", got)
	}
	var tool api.Tool
	if err := c.Do(context.Background(), "GET", "/v1/tools/adder", nil, &tool); err != nil || tool.CreatedBy != "user" {
		t.Errorf("adder: %v %+v", err, tool)
	}
	// Through the meta-tool, the same.
	if r, err := metaCall(t, noWait(agent), "create_tool", map[string]any{"name": "set_state", "description": "d", "code": "return 1"}); codeOf(err) != errdefs.Conflict {
		t.Errorf("create_tool set_state: %v %+v", err, r)
	}
}

// A person's decisions on an agent's tool stay the person's: a tool a
// person approved and then disabled is not the agent's to enable again
// (by the API or the meta-tool); rolling back or editing a pending tool
// never makes it active; a rejected tool stays rejected.
func TestAgentCannotUndoAPersonsDecision(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	agent := makerWorker(t, td, "maker", "agent_tools: {create: true, meta_tools: true}\n")
	const netTool = `{"name":"net","description":"d","kind":"js","permissions":["network"],"js":{"code":"return 'net v%d'","allowed_domains":["example.com"]}}`
	status := func(name string) (api.Tool, string) {
		var tl api.Tool
		if err := c.Do(ctx, "GET", "/v1/tools/"+name, nil, &tl); err != nil {
			t.Fatal(err)
		}
		return tl, tl.Status
	}
	if tl := create(t, agent, strings.Replace(netTool, "%d", "1", 1)); tl.Status != "pending_approval" {
		t.Fatalf("net v1: %+v", tl)
	}
	if err := c.Do(ctx, "POST", "/v1/tools/net/approve", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "POST", "/v1/tools/net/disable", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := agent.Do(ctx, "POST", "/v1/tools/net/enable", nil, nil); codeOf(err) != errdefs.Forbidden {
		t.Errorf("the agent enabled the tool its person disabled: %v", err)
	}
	if _, err := metaCall(t, noWait(agent), "toggle_custom_tool", map[string]any{"name": "net", "enabled": true}); codeOf(err) != errdefs.Forbidden {
		t.Errorf("toggle_custom_tool enabled the tool its person disabled: %v", err)
	}
	if _, s := status("net"); s != "disabled" {
		t.Errorf("net is %s", s)
	}
	// A person enables it; the agent's edit waits for the person, and a
	// rollback to the approved version does not skip that.
	if err := c.Do(ctx, "POST", "/v1/tools/net/enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := agent.Do(ctx, "PUT", "/v1/tools/net", []byte(strings.Replace(netTool, "%d", "2", 1)), nil); err != nil {
		t.Fatal(err)
	}
	if tl, s := status("net"); s != "pending_approval" || tl.Version != 2 {
		t.Fatalf("net after the agent's edit: %+v", tl)
	}
	if err := agent.Do(ctx, "POST", "/v1/tools/net/rollback", api.RollbackRequest{Version: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if _, s := status("net"); s != "pending_approval" {
		t.Errorf("net after the agent's rollback: %s", s)
	}
	if _, err := callTool(noWait(agent), "net", nil); codeOf(err) != errdefs.ToolNotActive {
		t.Errorf("a call of the pending tool: %v", err)
	}
	// Rejected stays rejected, whatever the agent writes.
	if err := c.Do(ctx, "POST", "/v1/tools/net/reject", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := agent.Do(ctx, "PUT", "/v1/tools/net", []byte(`{"name":"net","description":"d","kind":"js","js":{"code":"return 'harmless now'"}}`), nil); err != nil {
		t.Fatal(err)
	}
	for _, try := range []string{"/v1/tools/net/enable", "/v1/tools/net/approve"} {
		_ = agent.Do(ctx, "POST", try, nil, nil)
	}
	if _, s := status("net"); s != "rejected" {
		t.Errorf("net after the agent's edit of the rejected tool: %s", s)
	}
	// Its own harmless tool the agent may turn off and on.
	create(t, agent, `{"name":"calm","description":"d","kind":"js","js":{"code":"return 1"}}`)
	for _, verb := range []string{"disable", "enable"} {
		if err := agent.Do(ctx, "POST", "/v1/tools/calm/"+verb, nil, nil); err != nil {
			t.Errorf("%s calm: %v", verb, err)
		}
	}
}

// A tool's code calls other tools as its caller (utils.callTool): nested
// calls take from the same worker's rate limit, reach no tool outside the
// worker, no meta-tool, and a tool that asks parks for the person (before
// it would take from the bucket).
func TestNestedCallsStayTheAgents(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	create(t, c, jsTool) // adder
	create(t, c, `{"name":"asks","description":"d","kind":"js","approval":"ask","js":{"code":"return 'ran'"}}`)
	create(t, c, jsDef("outside", `return "outside ran"`))
	create(t, c, jsDef("fanout", `let out = []; for (let i = 0; i < 5; i++) {
		try { await utils.callTool("adder", {a: i, b: 0}); out.push("ok") } catch (e) { out.push(e.code) } }
		for (const name of ["outside", "create_tool", "asks", "secrets"]) {
		try { await utils.callTool(name, {}); out.push(name + ":ran") } catch (e) { out.push(name + ":" + e.code) } }
		return out`))
	agent := workerAgent(t, td, "fan", "tools: [adder, asks, fanout]\nrate_limit: {per_minute: 1, burst: 3}\nagent_tools: {create: true, meta_tools: true}\n")
	r, err := callTool(noWait(agent), "fanout", nil)
	want := `["ok","ok","rate_limited","rate_limited","rate_limited","outside:tool_not_found","create_tool:tool_not_found","asks:approval_required","secrets:tool_not_found"]`
	if err != nil || string(r.Result) != want {
		t.Fatalf("fanout: %v %s, want %s", err, r.Result, want)
	}
	// The approval the nested call parked in is the person's: pending.
	if l := waitPending(t, c, 1); l.Approvals[0].Tool != "asks" || l.Approvals[0].Worker != "fan" {
		t.Errorf("the nested call's approval: %+v", l.Approvals[0])
	}
	if ex := executionsOf(t, c, "tool=outside"); len(ex) != 0 && ex[0].Outcome == "ok" {
		t.Errorf("outside ran: %+v", ex)
	}
}

// A tool's mount is checked when the tool is made (and approved) and again
// at each call. An agent that can write where the mount points must not
// swap the path for a symlink to somewhere its person never granted: the
// call is refused, and what is behind the link is never read.
func TestMountSwappedForASymlinkIsRefused(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	// Not under /tmp: the sandbox's own /tmp hides it.
	base, err := os.MkdirTemp("/var/tmp", "tc-swap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	granted, private := filepath.Join(base, "granted"), filepath.Join(base, "private")
	writeFile(t, filepath.Join(granted, "notes", "n.txt"), "granted notes\n")
	writeFile(t, filepath.Join(private, "n.txt"), "the person's private file\n")
	for _, d := range []string{granted, filepath.Join(granted, "notes"), private} {
		os.Chmod(d, 0o755)
	}
	sandboxOwn(t, base)
	notes := filepath.Join(granted, "notes")
	agent := makerWorker(t, td, "maker", "mounts: [{path: "+granted+", readonly: false}]\n")
	create(t, agent, `{"name":"read_notes","description":"m","kind":"shell","approval":"preApproved","permissions":["filesystem"],`+
		`"mounts":[{"path":"`+notes+`"}],"shell":{"command":"cat `+notes+`/n.txt"}}`)
	if err := c.Do(context.Background(), "POST", "/v1/tools/read_notes/approve", nil, nil); err != nil {
		t.Fatal(err)
	}
	r, err := callTool(noWait(agent), "read_notes", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := shellOut(t, r); out.Stdout != "granted notes\n" {
		t.Fatalf("before the swap: %+v", out)
	}
	// The agent's writable grant lets it do this (write_file, exec...).
	if err := os.RemoveAll(notes); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(private, notes); err != nil {
		t.Fatal(err)
	}
	for _, who := range []*api.Client{noWait(agent), noWait(c)} {
		r, err := callTool(who, "read_notes", nil)
		if codeOf(err) != errdefs.PolicyDenied {
			t.Errorf("after the swap: %v %s", err, r.Result)
		}
		if strings.Contains(string(r.Result), "private") {
			t.Errorf("the private file was read: %s", r.Result)
		}
	}
	// A path written through a symlink is refused when the tool is made:
	// what a person approves is the path that is mounted.
	err = c.Do(context.Background(), "POST", "/v1/tools", []byte(`{"name":"via_link","description":"m","kind":"shell","permissions":["filesystem"],`+
		`"mounts":[{"path":"`+notes+`"}],"shell":{"command":"ls"}}`), nil)
	if codeOf(err) != errdefs.InvalidDefinition {
		t.Errorf("a mount through a symlink: %v", err)
	}
}

// sseData reads the data lines of a server-sent event stream at path for
// a moment, with the headers given.
func sseData(t *testing.T, socket, path string, hdr http.Header) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	tr := socketTransport(socket)
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://toolcage"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = hdr
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%s: status %d", path, resp.StatusCode)
	}
	b, _ := io.ReadAll(resp.Body) // until the timeout ends it
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// The person's streams (approvals --watch, audit --follow) and lists give
// an agent its own worker's only, whatever it asks for.
func TestAgentStreamsAreItsOwn(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	create(t, c, jsTool)
	create(t, c, `{"name":"asks","description":"d","kind":"js","approval":"ask","js":{"code":"return 1"}}`)
	agent := workerAgent(t, td, "helper", "tools: [adder, asks]\n")
	tok := agent.Token
	victimTok := registerRaw(t, td, "victim")
	parkAs(t, agent, "asks", nil)
	persons := parkAs(t, c, "asks", map[string]any{"who": "person"})
	if _, err := callTool(withToken(c, victimTok), "adder", map[string]any{"a": 1, "b": 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := callTool(agent, "adder", map[string]any{"a": 2, "b": 2}); err != nil {
		t.Fatal(err)
	}
	bearer := http.Header{"Authorization": {"Bearer " + tok}}
	approvals := sseData(t, td.cfg.Socket, "/v1/approvals/events", bearer)
	if len(approvals) != 1 {
		t.Errorf("approvals stream: %d events, want the agent's one", len(approvals))
	}
	for _, d := range approvals {
		if strings.Contains(d, persons) || !strings.Contains(d, `"worker:helper"`) {
			t.Errorf("approvals stream: %s", d)
		}
	}
	for _, q := range []string{"", "?worker=victim", "?caller=worker:victim", "?tool=adder&limit=50"} {
		data := sseData(t, td.cfg.Socket, "/v1/executions/events"+q, bearer)
		if len(data) == 0 && q == "" {
			t.Errorf("executions stream: no event (the agent's own calls are there)")
		}
		for _, d := range data {
			if !strings.Contains(d, `"worker":"helper"`) {
				t.Errorf("executions stream %s: %s", q, d)
			}
		}
		var l api.ExecutionList
		if err := agent.Do(context.Background(), "GET", "/v1/executions"+q, nil, &l); err != nil {
			t.Fatal(err)
		}
		for _, e := range l.Executions {
			if e.Worker != "helper" {
				t.Errorf("executions %s: %+v", q, e)
			}
		}
	}
	var al api.ApprovalList
	if err := agent.Do(context.Background(), "GET", "/v1/approvals", nil, &al); err != nil || len(al.Approvals) != 1 {
		t.Errorf("approvals list: %v %+v", err, al)
	}
}

// The meta-tools, tried against a person's tool and past the worker's
// grants: each refused with its code, the person's tool unchanged; what an
// agent makes that needs a person waits, whichever route changed it.
func TestMetaToolAttempts(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	create(t, c, jsTool) // adder, the person's, in the worker
	agent := noWait(makerWorker(t, td, "maker", "tools: [adder]\nagent_tools: {create: true, meta_tools: true}\n"))
	for _, tt := range []struct {
		tool string
		args map[string]any
		code errdefs.Code
	}{
		{"create_tool", map[string]any{"name": "adder", "description": "d", "code": "return 0"}, errdefs.Conflict},
		{"update_tool", map[string]any{"name": "adder", "code": "return 0"}, errdefs.Forbidden},
		{"update_tool", map[string]any{"name": "adder", "approval": "preApproved"}, errdefs.Forbidden},
		{"toggle_custom_tool", map[string]any{"name": "adder", "enabled": false}, errdefs.Forbidden},
		{"delete_custom_tool", map[string]any{"name": "adder", "confirm": true}, errdefs.Forbidden},
		{"create_tool", map[string]any{"name": "m1", "description": "d", "code": "return 0", "mounts": []any{map[string]any{"path": "/etc"}}}, errdefs.InvalidArguments},
		{"create_tool", map[string]any{"name": "m2", "description": "d", "code": "return 0", "secrets": []string{"api_key"}}, errdefs.Forbidden},
		{"update_tool", map[string]any{"name": "ghost", "code": "return 0"}, errdefs.ToolNotFound},
	} {
		if got, err := metaCall(t, agent, tt.tool, tt.args); codeOf(err) != tt.code {
			t.Errorf("%s %v: %v %v, want %s", tt.tool, tt.args, err, got, tt.code)
		}
	}
	var adder api.Tool
	if err := c.Do(ctx, "GET", "/v1/tools/adder", nil, &adder); err != nil || adder.Status != "active" || adder.Version != 1 {
		t.Errorf("adder after the attempts: %v %+v", err, adder)
	}
	// Network waits for a person, by the meta-tool or the API.
	if got := mustMeta(t, agent, "create_tool", map[string]any{"name": "netty", "description": "d", "code": "return 1",
		"permissions": []string{"network"}, "allowed_domains": []string{"example.com"}, "approval": "preApproved"}); got["status"] != "pending_approval" {
		t.Errorf("a network tool: %v", got)
	}
	if _, err := callTool(agent, "netty", nil); codeOf(err) != errdefs.ToolNotActive {
		t.Errorf("a call of the pending network tool: %v", err)
	}
	// A harmless tool changed to another kind waits for a person.
	if got := mustMeta(t, agent, "create_tool", map[string]any{"name": "shifty", "description": "d", "code": "return 1"}); got["status"] != "active" {
		t.Fatalf("shifty: %v", got)
	}
	if err := agent.Do(ctx, "PUT", "/v1/tools/shifty", []byte(`{"name":"shifty","description":"d","kind":"shell","approval":"preApproved","shell":{"command":"id"}}`), nil); err != nil {
		t.Fatal(err)
	}
	if r, err := callTool(agent, "shifty", nil); codeOf(err) != errdefs.ToolNotActive {
		t.Errorf("shifty, now shell, ran: %v %s", err, r.Result)
	}
}

// An agent's retries after a person's decision: a denied call parks again,
// an allowed one runs once and only with the arguments allowed.
func TestAgentApprovalRetries(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	create(t, c, askEcho)
	agent := workerAgent(t, td, "helper", "tools: [ask_echo]\n")
	denied := parkNoWait(t, agent, map[string]any{"rm": "/"})
	if err := c.Do(ctx, "POST", "/v1/approvals/"+denied+"/deny", nil, nil); err != nil {
		t.Fatal(err)
	}
	if again := parkNoWait(t, agent, map[string]any{"rm": "/"}); again == denied {
		t.Error("a denied approval's id came back")
	}
	allowed := parkNoWait(t, agent, map[string]any{"rm": "/tmp/x"})
	allow(t, c, allowed)
	for _, other := range []map[string]any{{"rm": "/"}, {"rm": "/tmp/x", "and": "more"}, {"rm": "/tmp/x/"}} {
		parkNoWait(t, agent, other)
	}
	if _, err := callTool(noWait(agent), "ask_echo", map[string]any{"rm": "/tmp/x"}); err != nil {
		t.Fatalf("the allowed retry: %v", err)
	}
	parkNoWait(t, agent, map[string]any{"rm": "/tmp/x"})
	// The agent cannot decide its own by id or prefix, by any method.
	for _, p := range []string{"/v1/approvals/" + allowed + "/allow", "/v1/approvals/" + allowed[:4] + "/allow", "/v1/approvals/" + strings.ToUpper(allowed) + "/allow"} {
		if err := agent.Do(ctx, "POST", p, api.ApprovalDecision{Always: true}, nil); codeOf(err) != errdefs.Forbidden {
			t.Errorf("POST %s: %v", p, err)
		}
	}
	if err := agent.Do(ctx, "PUT", "/v1/approvals/"+allowed+"/allow", nil, nil); err == nil {
		t.Error("PUT allow worked")
	}
}

// The files that say what workers may do (every registered worker's file
// and tool files, and the daemon's config file) are never writable
// through an agent's workspace or mounts: an agent that could write its
// neighbour's worker file would grant it what only a person may.
func TestGrantFilesNeverWritableByAnAgent(t *testing.T) {
	cfgDir := sandboxDir(t)
	cfgFile := filepath.Join(cfgDir, "toolcage.yaml")
	writeFile(t, cfgFile, "approvals: {timeout: 2m}\n")
	td := startDaemon(t, "", func(c *Config) { c.File = cfgFile })
	c := td.client
	create(t, c, jsTool)
	shared := sandboxDir(t)
	sandboxOwn(t, shared)
	const fsAgent = "workspace: %s\nreadonly: false\ntoolsets: {filesystem: {}}\napproval: {tools: {write_file: preApproved}}\n"
	// First the writer, then a neighbour whose file lies in its workspace.
	writer := workerAgent(t, td, "writer", strings.Replace(fsAgent, "%s", shared, 1))
	neighbour := filepath.Join(shared, "neighbour.yaml")
	writeFile(t, neighbour, "name: neighbour\ntools: [adder]\n")
	// The agent's workspace is the sandbox user's: a worker file in it is
	// refused at add (internal/filetrust) whoever asks.
	if _, err := addWorker(c, neighbour); codeOf(err) != errdefs.Forbidden || !strings.Contains(err.Error(), "owner 65534") {
		t.Errorf("a worker file in an agent's workspace: %v", err)
	}
	// Registered while the directory was the person's, then handed to
	// the sandbox user: the mounts guard still keeps the writer out.
	for _, p := range []string{shared, neighbour} {
		if err := os.Chown(p, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := addWorker(c, neighbour); err != nil {
		t.Fatal(err)
	}
	sandboxOwn(t, shared)
	_, err := callTool(noWait(writer), "write_file", map[string]any{"path": "neighbour.yaml",
		"content": "name: neighbour\ntools: [adder]\napproval: {default: preApproved}\n"})
	if codeOf(err) != errdefs.PolicyDenied {
		t.Errorf("the writer wrote its neighbour's worker file: %v", err)
	}
	if b, _ := os.ReadFile(neighbour); string(b) != "name: neighbour\ntools: [adder]\n" {
		t.Errorf("the neighbour's file: %q", b)
	}
	// A worker registered after, with a writable workspace holding a
	// registered worker's file or the config file, is refused.
	for _, ws := range []string{shared, cfgDir} {
		path := filepath.Join(t.TempDir(), "late.yaml")
		writeFile(t, path, "name: late\n"+strings.Replace(fsAgent, "%s", ws, 1))
		if _, err := addWorker(c, path); codeOf(err) != errdefs.Forbidden {
			t.Errorf("a writable workspace %s: %v", ws, err)
		}
	}
	// Read-only, it is the person's choice.
	path := filepath.Join(t.TempDir(), "reader.yaml")
	writeFile(t, path, "name: reader\nworkspace: "+cfgDir+"\ntoolsets: {filesystem: {}}\n")
	if _, err := addWorker(c, path); err != nil {
		t.Errorf("a read-only workspace holding the config: %v", err)
	}
}

// A file that appears where a worker's tool_files match becomes one of
// its tools, a person's: no agent's writable workspace may lie there, nor
// hold that directory, even when no tool file is in it yet.
func TestToolFileDirsNeverWritableByAnAgent(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	dir := sandboxDir(t)
	writeFile(t, filepath.Join(dir, "tools", "a", "t.yaml"), "name: t_a\ndescription: d\nkind: js\njs: {code: 'return 1'}\n")
	if err := os.MkdirAll(filepath.Join(dir, "tools", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "tooled.yaml")
	writeFile(t, path, "name: tooled\ntool_files: [tools/*/*.yaml]\n")
	if _, err := addWorker(c, path); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ws, ro string
		ok     bool
	}{
		{filepath.Join(dir, "tools", "b"), "false", false},
		{filepath.Join(dir, "tools"), "false", false},
		{filepath.Join(dir, "tools", "b"), "true", true},
	} {
		p := filepath.Join(t.TempDir(), "late.yaml")
		writeFile(t, p, "name: late\nworkspace: "+tt.ws+"\nreadonly: "+tt.ro+"\n")
		_, err := addWorker(c, p)
		if tt.ok && err != nil || !tt.ok && codeOf(err) != errdefs.Forbidden {
			t.Errorf("workspace %s readonly %s: %v", tt.ws, tt.ro, err)
		}
		if err == nil {
			if err := c.Do(context.Background(), "DELETE", "/v1/workers/late", nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// GET /v1/stats counts for an agent what its lists show it: its worker's
// tools and its worker's calls, not the catalog's or other workers'.
func TestAgentStatsAreItsOwn(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	create(t, c, jsTool)
	create(t, c, `{"name":"hidden","description":"d","kind":"js","js":{"code":"return 1"}}`)
	agent := workerAgent(t, td, "helper", "tools: [adder]\n")
	other := workerAgent(t, td, "other", "tools: [adder, hidden]\n")
	for range 3 {
		if _, err := callTool(other, "hidden", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := callTool(agent, "adder", map[string]any{"a": 1, "b": 2}); err != nil {
		t.Fatal(err)
	}
	var mine, all api.Stats
	if err := agent.Do(ctx, "GET", "/v1/stats", nil, &mine); err != nil {
		t.Fatal(err)
	}
	if mine.Total != 1 || mine.Active != 1 || mine.CreatedByUser != 1 || mine.Executions != 1 || mine.TotalUsage != 1 {
		t.Errorf("agent's stats = %+v, want its one tool and its one call", mine)
	}
	if err := c.Do(ctx, "GET", "/v1/stats", nil, &all); err != nil {
		t.Fatal(err)
	}
	if all.Total != 2 || all.Executions != 4 || all.TotalUsage != 4 {
		t.Errorf("person's stats = %+v, want the whole catalog and every call", all)
	}
}

// The metrics name every tool of every worker and count every call: a
// person's, not an agent's, to read.
func TestAgentCannotReadMetrics(t *testing.T) {
	td := startDaemon(t, "", nil)
	create(t, td.client, jsTool)
	agent := workerAgent(t, td, "helper", "tools: [adder]\n")
	err := agent.Do(context.Background(), "GET", "/v1/metrics", nil, nil)
	if ae := apiErr(t, err); ae.Code != errdefs.Forbidden {
		t.Errorf("agent GET /v1/metrics: %v, want forbidden", err)
	}
	raw, err := td.client.Open(context.Background(), "/v1/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if b, _ := io.ReadAll(raw); !strings.Contains(string(b), "toolcage_") {
		t.Errorf("person GET /v1/metrics: no toolcage series in %d bytes", len(b))
	}
}
