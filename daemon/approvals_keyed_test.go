package daemon

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// TestApprovalsKeyedByWorkerAndDefinition: `allow --always` approves one
// worker's calls of one definition. Tool-file tools are always version 1
// and two workers may each have a tool of one name: one worker's standing
// approval must not run the other's different tool, and editing the tool
// file voids it.
func TestApprovalsKeyedByWorkerAndDefinition(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	agents := map[string]*api.Client{}
	files := map[string]string{}
	for _, w := range []string{"wa", "wb"} {
		dir := t.TempDir()
		files[w] = filepath.Join(dir, "tools", "deploy.yaml")
		writeFile(t, files[w], "name: deploy\ndescription: d\nkind: js\napproval: ask\njs: {code: 'return \""+w+"\"'}\n")
		path := filepath.Join(dir, w+".yaml")
		writeFile(t, path, "name: "+w+"\ntool_files: [tools/*.yaml]\n")
		added, err := addWorker(c, path)
		if err != nil {
			t.Fatal(err)
		}
		agents[w] = withToken(c, added.Token)
	}
	args := map[string]string{"env": "prod"}
	id := parkAs(t, agents["wa"], "deploy", args)
	if err := c.Do(ctx, "POST", "/v1/approvals/"+id+"/allow", api.ApprovalDecision{Always: true}, nil); err != nil {
		t.Fatal(err)
	}
	if r, err := callTool(noWait(agents["wa"]), "deploy", args); err != nil || string(r.Result) != `"wa"` {
		t.Fatalf("wa's approved call: %v %s", err, r.Result)
	}
	// Another worker's tool of the same name, version and arguments.
	if r, err := callTool(noWait(agents["wb"]), "deploy", args); codeOf(err) != errdefs.ApprovalRequired {
		t.Fatalf("wa's approval ran wb's deploy: %v %s", err, r.Result)
	}
	// wa's tool file edited: still version 1, another definition.
	writeFile(t, files["wa"], "name: deploy\ndescription: d\nkind: js\napproval: ask\njs: {code: 'return \"edited\"'}\n")
	var last error
	var res string
	waitFor(t, "the edited tool file to load", func() bool {
		r, err := callTool(noWait(agents["wa"]), "deploy", args)
		last, res = err, string(r.Result)
		return res != `"wa"`
	})
	if codeOf(last) != errdefs.ApprovalRequired {
		t.Fatalf("the standing approval ran the edited tool file: %v %s", last, res)
	}
	// The person's own call of a catalog tool of that name is not wa's.
	create(t, c, `{"name":"deploy","description":"d","kind":"js","approval":"ask","js":{"code":"return 'catalog'"}}`)
	if r, err := callTool(noWait(c), "deploy", args); codeOf(err) != errdefs.ApprovalRequired {
		t.Fatalf("wa's approval ran the person's deploy: %v %s", err, r.Result)
	}
}
