package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// jsDef is a js tool definition calling code with args.
func jsDef(name, code string) string {
	return fmt.Sprintf(`{"name":%q,"description":"d","kind":"js","js":{"code":%q}}`, name, code)
}

func executionsOf(t *testing.T, c *api.Client, query string) []api.Execution {
	t.Helper()
	var ex api.ExecutionList
	if err := c.Do(context.Background(), "GET", "/v1/executions?"+query, nil, &ex); err != nil {
		t.Fatal(err)
	}
	return ex.Executions
}

// TestNestedCalls drives utils.callTool through a real daemon and real
// (sandboxed) executors: a nested call runs and is audited under its
// parent as the same caller; the depth bound holds at its edge; cycles
// are refused; a worker's agent reaches only its worker's tools through
// a nested call; a nested call that needs approval is refused when the
// caller does not wait.
func TestNestedCalls(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	create(t, c, jsTool) // adder
	create(t, c, jsDef("plus_one", `return await utils.callTool("adder", {a: args.a, b: 1})`))
	// c0 → c1 → … → c5: c_i returns "bottom" at args.stop, else what the
	// next returns, or "refused:<code>" when calling it is refused.
	for i := range 6 {
		create(t, c, jsDef(fmt.Sprintf("c%d", i), fmt.Sprintf(
			`if (args.stop === %d) return "bottom"; try { return await utils.callTool("c%d", args) } catch (e) { return "refused:" + e.code }`, i, i+1)))
	}
	create(t, c, jsDef("ping", `try { return await utils.callTool("pong") } catch (e) { return "ping got " + e.code }`))
	create(t, c, jsDef("pong", `try { return await utils.callTool("ping") } catch (e) { return "pong refused: " + e.message }`))
	create(t, c, jsDef("selfie", `try { return await utils.callTool("selfie") } catch (e) { return e.code }`))
	create(t, c, jsDef("calls_hidden", `try { return await utils.callTool("hidden") } catch (e) { return "refused:" + e.code }`))
	create(t, c, jsDef("hidden", `return "secret stuff"`))
	create(t, c, jsDef("lister", `return utils.listTools().map(t => t.name).sort()`))
	create(t, c, `{"name":"echo_ask","description":"d","kind":"js","approval":"ask","js":{"code":"return args"}}`)
	create(t, c, jsDef("calls_ask", `try { return await utils.callTool("echo_ask", {x: 1}) } catch (e) { return e.code }`))

	// A nested call runs, and its record names its parent and the caller.
	out, err := callTool(c, "plus_one", map[string]int{"a": 41})
	if err != nil || string(out.Result) != "42" {
		t.Fatalf("plus_one: %v %s", err, out.Result)
	}
	nested := executionsOf(t, c, "parent="+out.CallID)
	if len(nested) != 1 || nested[0].Tool != "adder" || nested[0].ParentCallID != out.CallID || nested[0].Outcome != "ok" ||
		string(nested[0].Arguments) != `{"a":41,"b":1}` {
		t.Fatalf("nested records: %+v", nested)
	}
	parent := executionsOf(t, c, "tool=plus_one")
	if len(parent) != 1 || parent[0].ParentCallID != "" || parent[0].CallerID != nested[0].CallerID || parent[0].CallerType != nested[0].CallerType {
		t.Fatalf("parent record %+v, nested %+v", parent, nested)
	}

	// Depth: c0 (depth 0) … c4 (depth 4) runs; c5 at depth 5 is refused.
	for _, tt := range []struct {
		stop int
		want string
	}{{4, `"bottom"`}, {5, `"refused:limit_exceeded"`}} {
		out, err := callTool(c, "c0", map[string]int{"stop": tt.stop})
		if err != nil || string(out.Result) != tt.want {
			t.Fatalf("chain to depth %d: %v %s, want %s", tt.stop, err, out.Result, tt.want)
		}
	}
	refused := executionsOf(t, c, "tool=c5")
	if len(refused) != 1 || refused[0].Outcome != "refused" || refused[0].ErrorCode != "limit_exceeded" || refused[0].Limit != "depth" ||
		!strings.Contains(refused[0].Error, "c0 → c1 → c2 → c3 → c4 → c5") {
		t.Fatalf("c5's record: %+v", refused)
	}
	// Each level's record points at the one above it.
	c4 := executionsOf(t, c, "tool=c4&limit=1")[0]
	if refused[0].ParentCallID != c4.ID {
		t.Errorf("c5's parent %q, want c4's call %q", refused[0].ParentCallID, c4.ID)
	}

	// Cycles: A → B → A and A → A are refused before anything runs.
	if out, err := callTool(c, "ping", nil); err != nil || !strings.Contains(string(out.Result), "pong refused: policy_denied: call cycle: ping → pong → ping") {
		t.Fatalf("ping: %v %s", err, out.Result)
	}
	if out, err := callTool(c, "selfie", nil); err != nil || string(out.Result) != `"policy_denied"` {
		t.Fatalf("selfie: %v %s", err, out.Result)
	}

	// A nested call that needs approval, for a caller that does not wait.
	if out, err := callTool(noWait(c), "calls_ask", nil); err != nil || string(out.Result) != `"approval_required"` {
		t.Fatalf("calls_ask: %v %s", err, out.Result)
	}

	// Through a worker, a nested call is its agent's: only the worker's
	// tools exist, and the record carries its token.
	dir := t.TempDir()
	path := filepath.Join(dir, "nest.yaml")
	writeFile(t, path, "name: nest\ntools: [calls_hidden, lister, plus_one, adder]\n")
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := *c
	agent.Token = added.Token
	if out, err := callTool(c, "calls_hidden", nil); err != nil || string(out.Result) != `"secret stuff"` {
		t.Fatalf("calls_hidden as a person: %v %s", err, out.Result)
	}
	if out, err := callTool(&agent, "calls_hidden", nil); err != nil || string(out.Result) != `"refused:tool_not_found"` {
		t.Fatalf("calls_hidden as the agent: %v %s", err, out.Result)
	}
	if out, err := callTool(&agent, "lister", nil); err != nil || string(out.Result) != `["adder","calls_hidden","lister","plus_one"]` {
		t.Fatalf("lister as the agent: %v %s", err, out.Result)
	}
	out, err = callTool(&agent, "plus_one", map[string]int{"a": 1})
	if err != nil || string(out.Result) != "2" {
		t.Fatalf("plus_one as the agent: %v %s", err, out.Result)
	}
	nested = executionsOf(t, c, "parent="+out.CallID)
	if len(nested) != 1 || nested[0].Worker != "nest" || nested[0].CallerType != "llm" || nested[0].TokenID != added.TokenID || nested[0].CallerID != "worker:nest" {
		t.Fatalf("the agent's nested record: %+v", nested)
	}
	// The agent can list its own calls' nested calls, and no one else's.
	if got := executionsOf(t, &agent, "parent="+out.CallID); len(got) != 1 {
		t.Errorf("agent's view of its nested calls: %+v", got)
	}
}

// TestNestedCallDepthConfig: js.max_call_depth sets the bound, checked at
// config load.
func TestNestedCallDepthConfig(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) { c.JS.MaxCallDepth = 1 })
	c := td.client
	create(t, c, jsTool)
	create(t, c, jsDef("plus_one", `return await utils.callTool("adder", {a: args.a, b: 1})`))
	create(t, c, jsDef("plus_two", `try { return await utils.callTool("plus_one", {a: args.a + 1}) } catch (e) { return e.message }`))
	if out, err := callTool(c, "plus_one", map[string]int{"a": 1}); err != nil || string(out.Result) != "2" {
		t.Fatalf("depth 1: %v %s", err, out.Result)
	}
	// plus_one's own call of adder is refused, so plus_one fails.
	if out, err := callTool(c, "plus_two", map[string]int{"a": 1}); err != nil ||
		!strings.Contains(string(out.Result), "tool_error: tool plus_one failed") || !strings.Contains(string(out.Result), "limit_exceeded") {
		t.Fatalf("depth 2 with a bound of 1: %v %s", err, out.Result)
	}
	for _, v := range []string{"0", "17"} {
		if _, err := LoadConfig("", map[string]any{"js.max_call_depth": v}); err == nil || !strings.Contains(err.Error(), "js.max_call_depth") {
			t.Errorf("js.max_call_depth %s: %v", v, err)
		}
	}
	if _, err := callTool(c, "no_such", nil); codeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("%v", err)
	}
}
