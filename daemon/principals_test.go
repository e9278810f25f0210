package daemon

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// The attacker here holds a worker token and nothing else. Each test is one
// class of attempt to do what only the worker's person may do; each asserts
// the refusal, its stable code, and that nothing changed.

// makerWorker registers a worker whose agent may make tools, and returns
// the agent's client.
func makerWorker(t *testing.T, td *testDaemon, name, extra string) *api.Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	writeFile(t, path, "name: "+name+"\nagent_tools: {create: true}\n"+extra)
	added, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	return withToken(td.client, added.Token)
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
