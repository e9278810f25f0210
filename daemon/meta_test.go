package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
)

// metaCall calls a meta-tool and decodes its result into a map.
func metaCall(t *testing.T, c *api.Client, tool string, args any) (map[string]any, error) {
	t.Helper()
	out, err := callTool(c, tool, args)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out.Result, &m); err != nil {
		t.Fatalf("%s result %s: %v", tool, out.Result, err)
	}
	return m, nil
}

func mustMeta(t *testing.T, c *api.Client, tool string, args any) map[string]any {
	t.Helper()
	m, err := metaCall(t, c, tool, args)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return m
}

func toolNames(m map[string]any) []string {
	var names []string
	list, _ := m["tools"].([]any)
	for _, x := range list {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	return names
}

// TestMetaTools drives each meta-tool as a worker's agent through a real
// daemon, with the refusals the rules for agents give.
func TestMetaTools(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	create(t, c, jsTool) // adder, a person's
	create(t, c, jsDef("calls_meta", `try { return await utils.callTool("list_custom_tools", {}) } catch (e) { return e.code }`))
	dir := t.TempDir()
	path := filepath.Join(dir, "maker.yaml")
	writeFile(t, path, "name: maker\ntools: [adder, calls_meta]\nsecrets: [api_token]\napproval: {default: preApproved}\nagent_tools: {create: true, meta_tools: true}\n")
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := *c
	agent.Token = added.Token
	a := noWait(&agent) // a call that would wait for a person fails at once

	// The meta-tools are the worker's tools, listed and exported with
	// their hints.
	defsOut, err := definitions(a, "format=mcp")
	if err != nil {
		t.Fatal(err)
	}
	hints := map[string]map[string]bool{}
	for _, raw := range defsOut.Tools {
		var v struct {
			Name        string
			Annotations map[string]bool
		}
		_ = json.Unmarshal(raw, &v)
		hints[v.Name] = v.Annotations
	}
	for _, name := range catalog.MetaToolNames {
		if hints[name] == nil {
			t.Errorf("meta-tool %s is not exported: %v", name, hints)
		}
	}
	if !hints["list_custom_tools"]["readOnlyHint"] || !hints["delete_custom_tool"]["destructiveHint"] || hints["create_tool"]["readOnlyHint"] || hints["create_tool"]["destructiveHint"] {
		t.Errorf("meta-tool hints: %v", hints)
	}

	// worker show lists them, and blocked ones as blocked.
	var shown api.Worker
	if err := c.Do(ctx, "GET", "/v1/workers/maker", nil, &shown); err != nil {
		t.Fatal(err)
	}
	var metas []string
	for _, wt := range shown.Tools {
		if wt.Source == "meta" {
			metas = append(metas, wt.Name)
		}
	}
	if !slices.Equal(metas, catalog.MetaToolNames) {
		t.Errorf("worker show's meta-tools: %v", metas)
	}

	// create_tool: bare JavaScript is active at once and runs.
	got := mustMeta(t, a, "create_tool", map[string]any{"name": "doubler", "description": "Double a number", "category": "Math",
		"parameters": `{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`, "code": "return args.n * 2"})
	if got["status"] != "active" || got["version"] != 1.0 {
		t.Fatalf("create doubler: %v", got)
	}
	if out, err := callTool(a, "doubler", map[string]int{"n": 21}); err != nil || string(out.Result) != "42" {
		t.Fatalf("call doubler: %v %s", err, out.Result)
	}
	// An agent-made shell tool starts pending and does not run.
	got = mustMeta(t, a, "create_tool", map[string]any{"name": "lister", "description": "List a dir", "kind": "shell", "shell": map[string]any{"command": "ls {{dir}}"}})
	if got["status"] != "pending_approval" || !strings.Contains(got["message"].(string), "waits for a person's approval") {
		t.Fatalf("create shell tool: %v", got)
	}
	if _, err := callTool(a, "lister", map[string]string{"dir": "/"}); codeOf(err) != errdefs.ToolNotActive {
		t.Fatalf("call pending shell tool: %v", err)
	}
	// Secrets: only the grant, and a granted one still waits.
	if _, err := metaCall(t, a, "create_tool", map[string]any{"name": "leaky", "description": "d", "code": "return 1", "secrets": []string{"db_password"}}); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("secret outside the grant: %v", err)
	}
	if got := mustMeta(t, a, "create_tool", map[string]any{"name": "keyed", "description": "d", "code": "return 1", "secrets": []string{"api_token"}}); got["status"] != "pending_approval" {
		t.Fatalf("granted secret: %v", got)
	}
	// Bad input: a refusal with a stable code, never a crash.
	for _, bad := range []map[string]any{
		{"name": "Bad Name", "description": "d", "code": "return 1"},
		{"name": "nocode", "description": "d"},
		{"name": "x", "description": "d", "code": "return 1", "parameters": "{not json"},
		{"name": "x", "description": "d", "code": "return 1", "bogus": 1},
		{"name": "adder", "description": "d", "code": "return 1"},
		{"name": "get_tool", "description": "d", "code": "return 1"},
	} {
		if _, err := metaCall(t, a, "create_tool", bad); err == nil || !slices.Contains([]errdefs.Code{errdefs.InvalidArguments, errdefs.InvalidDefinition, errdefs.Conflict}, codeOf(err)) {
			t.Errorf("create_tool %v: %v", bad, err)
		}
	}

	// list_custom_tools: what the agent made, with counts.
	got = mustMeta(t, a, "list_custom_tools", nil)
	if names := toolNames(got); !slices.Equal(names, []string{"doubler", "keyed", "lister"}) || got["total"] != 3.0 || got["active"] != 1.0 || got["pending_approval"] != 2.0 {
		t.Fatalf("list_custom_tools: %v", got)
	}
	if names := toolNames(mustMeta(t, a, "list_custom_tools", map[string]string{"status": "pending_approval"})); !slices.Equal(names, []string{"keyed", "lister"}) {
		t.Fatalf("list_custom_tools pending: %v", names)
	}

	// search_tools: name, description and category, over the worker's tools.
	for q, want := range map[string][]string{"double": {"doubler"}, "adds numbers": {"adder"}, "math": {"doubler"}, "nothing here": nil} {
		if names := toolNames(mustMeta(t, a, "search_tools", map[string]string{"query": q})); !slices.Equal(names, want) {
			t.Errorf("search %q: %v, want %v", q, names, want)
		}
	}
	if _, err := metaCall(t, a, "search_tools", nil); codeOf(err) != errdefs.InvalidArguments {
		t.Errorf("search without a query: %v", err)
	}

	// get_tool: the whole definition of one of the worker's tools only.
	got = mustMeta(t, a, "get_tool", map[string]string{"name": "doubler"})
	if def, _ := got["definition"].(map[string]any); def["js"].(map[string]any)["code"] != "return args.n * 2" || got["created_by"] != "llm" {
		t.Fatalf("get_tool: %v", got)
	}
	create(t, c, jsDef("elsewhere", "return 1"))
	if _, err := metaCall(t, a, "get_tool", map[string]string{"name": "elsewhere"}); codeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("get_tool outside the worker: %v", err)
	}

	// update_tool: only what is given changes; a person's tool is not the agent's.
	got = mustMeta(t, a, "update_tool", map[string]any{"name": "doubler", "code": "return args.n * 3"})
	if got["version"] != 2.0 || got["status"] != "active" {
		t.Fatalf("update doubler: %v", got)
	}
	if out, err := callTool(a, "doubler", map[string]int{"n": 2}); err != nil || string(out.Result) != "6" {
		t.Fatalf("call updated doubler: %v %s", err, out.Result)
	}
	if got := mustMeta(t, a, "update_tool", map[string]any{"name": "doubler", "permissions": []string{"network"}, "allowed_domains": []string{"example.com"}}); got["status"] != "pending_approval" {
		t.Fatalf("update to network: %v", got)
	}
	if _, err := metaCall(t, a, "update_tool", map[string]any{"name": "adder", "code": "return 0"}); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("update a person's tool: %v", err)
	}

	// toggle_custom_tool.
	if err := c.Do(ctx, "POST", "/v1/tools/doubler/approve", nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := mustMeta(t, a, "toggle_custom_tool", map[string]any{"name": "doubler", "enabled": false}); got["status"] != "disabled" {
		t.Fatalf("disable: %v", got)
	}
	if got := mustMeta(t, a, "toggle_custom_tool", map[string]any{"name": "doubler", "enabled": true}); got["status"] != "active" {
		t.Fatalf("enable: %v", got)
	}
	if _, err := metaCall(t, a, "toggle_custom_tool", map[string]any{"name": "adder", "enabled": false}); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("toggle a person's tool: %v", err)
	}

	// delete_custom_tool: confirm, and never a person's tool.
	if _, err := metaCall(t, a, "delete_custom_tool", map[string]any{"name": "doubler"}); codeOf(err) != errdefs.InvalidRequest || !strings.Contains(err.Error(), "confirm") {
		t.Fatalf("delete without confirm: %v", err)
	}
	if _, err := metaCall(t, a, "delete_custom_tool", map[string]any{"name": "adder", "confirm": true}); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("delete a person's tool: %v", err)
	}
	if got := mustMeta(t, a, "delete_custom_tool", map[string]any{"name": "doubler", "confirm": true}); got["deleted"] != true {
		t.Fatalf("delete: %v", got)
	}
	if _, err := callTool(a, "doubler", map[string]int{"n": 1}); codeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("deleted tool: %v", err)
	}
	if _, err := callTool(c, "adder", map[string]int{"a": 1, "b": 2}); err != nil {
		t.Fatalf("the person's tool is still there: %v", err)
	}

	// Meta-tool calls are audited as the agent's; nested calls cannot reach them.
	ex := executionsOf(t, c, "tool=create_tool")
	if len(ex) < 3 || ex[0].CallerType != "llm" || ex[0].Worker != "maker" || ex[0].TokenID != added.TokenID {
		t.Fatalf("create_tool records: %+v", ex)
	}
	if out, err := callTool(a, "calls_meta", nil); err != nil || string(out.Result) != `"tool_not_found"` {
		t.Fatalf("nested meta call: %v %s", err, out.Result)
	}

	// A worker with meta_tools but not create offers only the readers, and
	// approval.tools can block one.
	writeFile(t, filepath.Join(dir, "reader.yaml"), "name: reader\ntools: [adder]\nagent_tools: {meta_tools: true}\napproval: {tools: {get_tool: blocked}}\n")
	readerAdded, err := addWorker(c, filepath.Join(dir, "reader.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	reader := *c
	reader.Token = readerAdded.Token
	if names := toolNames(mustMeta(t, &reader, "search_tools", map[string]string{"query": "adds"})); !slices.Equal(names, []string{"adder"}) {
		t.Fatalf("reader search: %v", names)
	}
	if _, err := metaCall(t, &reader, "create_tool", map[string]any{"name": "z", "description": "d", "code": "return 1"}); codeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("create_tool without agent_tools.create: %v", err)
	}
	if _, err := metaCall(t, &reader, "get_tool", map[string]string{"name": "adder"}); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("blocked get_tool: %v", err)
	}
	// A worker without meta_tools offers none.
	writeFile(t, filepath.Join(dir, "plain.yaml"), "name: plain\ntools: [adder]\n")
	plainAdded, err := addWorker(c, filepath.Join(dir, "plain.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plain := *c
	plain.Token = plainAdded.Token
	if _, err := metaCall(t, &plain, "list_custom_tools", nil); codeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("meta-tool of a worker without them: %v", err)
	}
}

// TestMetaToolApproval: a worker's approval.tools holds a meta-tool like
// any tool: under ask, create_tool parks for a person, who allows it over
// the API (as `toolcage approvals allow` does), and the agent's waiting
// call then makes the tool.
func TestMetaToolApproval(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "asker.yaml")
	writeFile(t, path, "name: asker\nagent_tools: {create: true, meta_tools: true}\napproval: {default: preApproved, tools: {create_tool: ask}}\n")
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := withToken(c, added.Token)
	args := map[string]any{"name": "halver", "description": "Halve a number", "code": "return args.n / 2"}

	// worker show says so, and a call that does not wait is told.
	var shown api.Worker
	if err := c.Do(ctx, "GET", "/v1/workers/asker", nil, &shown); err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(shown.Tools, func(wt api.WorkerTool) bool { return wt.Name == "create_tool" }); i < 0 || shown.Tools[i].Approval != "ask" {
		t.Fatalf("worker show: %+v", shown.Tools)
	}
	if _, err := callTool(noWait(agent), "create_tool", args); codeOf(err) != errdefs.ApprovalRequired {
		t.Fatalf("create_tool under ask, no wait: %v", err)
	}

	done := make(chan error, 1)
	go func() {
		out, err := callTool(agent, "create_tool", args)
		if err == nil && !strings.Contains(string(out.Result), `"status":"active"`) {
			err = fmt.Errorf("result %s", out.Result)
		}
		done <- err
	}()
	list := waitPending(t, c, 2)
	a := list.Approvals[1]
	if a.Tool != "create_tool" || a.Worker != "asker" || !strings.Contains(string(a.Arguments), `"halver"`) {
		t.Fatalf("approval %+v", a)
	}
	if err := c.Do(ctx, "GET", "/v1/tools/halver", nil, nil); codeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("halver before the approval: %v", err)
	}
	if err := c.Do(ctx, "POST", "/v1/approvals/"+a.ID+"/allow", api.ApprovalDecision{}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("allowed create_tool: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the allowed create_tool did not return")
	}
	if out, err := callTool(agent, "halver", map[string]int{"n": 8}); err != nil || string(out.Result) != "4" {
		t.Fatalf("halver: %v %+v", err, out)
	}
	if ex := executionsOf(t, c, "tool=create_tool"); len(ex) != 2 || ex[0].Outcome != "ok" || ex[1].ErrorCode != "approval_required" {
		t.Fatalf("create_tool records: %+v", ex)
	}
}
