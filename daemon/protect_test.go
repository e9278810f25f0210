package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// protectWorker registers a worker with the exec toolset (git
// pre-approved) and a shell tool holding filesystem on a writable git
// repository, with the given protect: line, and returns the agent's
// client and the repository. The repository's README.md has an
// uncommitted change.
func protectWorker(t *testing.T, td *testDaemon, name, protect string) (*api.Client, string) {
	t.Helper()
	dir := sandboxDir(t)
	repo := gitRepo(t, dir, "protected commit")
	writeFile(t, filepath.Join(dir, "agent", "tools", "reset.yaml"), "name: "+name+"_reset\n"+`description: puts the workspace back to its last commit
kind: shell
permissions: [filesystem]
shell: {command: "git reset -q --hard", dir: /workspace}
`)
	path := filepath.Join(dir, "agent", "w.yaml")
	writeFile(t, path, "name: "+name+"\n"+`workspace: ../repo
readonly: false
`+protect+`
tool_files: [tools/*.yaml]
toolsets:
  exec:
    rules:
      - {pattern: "git", approval: preApproved}
approval: {tools: {`+name+`_reset: preApproved}}
`)
	writeFile(t, filepath.Join(repo, "README.md"), "the agent's unsaved work\n")
	sandboxOwn(t, repo)
	added, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	return withToken(td.client, added.Token), repo
}

func readmeOf(t *testing.T, repo string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestProtectWorkspace is issue 24's item 3 end to end: in a writable
// workspace an exec call of git reset --hard, pre-approved by the
// worker's git rule, parks for a person and runs once allowed; a shell
// tool holding filesystem whose command destroys work parks too; the
// everyday git of the same rule runs unasked. protect: blocked refuses
// both, protect: off runs them.
func TestProtectWorkspace(t *testing.T) {
	td := startDaemon(t, "", nil)
	ctx := context.Background()
	agent, repo := protectWorker(t, td, "protect_ask", "")

	for _, cmd := range []string{"git status --short", "git log --oneline", "git diff --stat", "git stash list"} {
		r, err := callTool(noWait(agent), "exec", map[string]any{"command": cmd})
		if err != nil || shellOut(t, r).ExitCode != 0 {
			t.Fatalf("everyday %q: %+v %v", cmd, r, err)
		}
	}

	// Parked: the agent hears approval_required, nothing ran.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"exec", map[string]any{"command": "git reset --hard"}},
		{"exec", map[string]any{"command": "sh -c 'git clean -fdx' && git status"}},
		{"protect_ask_reset", map[string]any{}},
	} {
		_, err := callTool(noWait(agent), c.tool, c.args)
		if ae := apiErr(t, err); ae.Code != errdefs.ApprovalRequired || ae.ApprovalID == "" {
			t.Fatalf("%s %v: %+v, want it parked for a person", c.tool, c.args, ae)
		}
	}
	if got := readmeOf(t, repo); got != "the agent's unsaved work\n" {
		t.Fatalf("README.md changed before anyone allowed it: %q", got)
	}

	// A person allows the waiting call; it runs.
	done := make(chan error, 1)
	go func() {
		r, err := callTool(agent, "exec", map[string]any{"command": "git reset --hard"})
		if err == nil && shellOut(t, r).ExitCode != 0 {
			err = errdefs.Errorf(errdefs.Internal, "exit %d: %s", shellOut(t, r).ExitCode, shellOut(t, r).Stderr)
		}
		done <- err
	}()
	list := waitPending(t, td.client, 4)
	a := list.Approvals[3]
	if !strings.Contains(string(a.Arguments), "git reset --hard") {
		t.Fatalf("pending approval %+v", a)
	}
	var got api.Approval
	if err := td.client.Do(ctx, "POST", "/v1/approvals/"+a.ID+"/allow", api.ApprovalDecision{}, &got); err != nil || got.Status != "allowed" {
		t.Fatalf("allow: %+v %v", got, err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the allowed git reset --hard: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the allowed call did not return")
	}
	if got := readmeOf(t, repo); got != "hello from the workspace\n" {
		t.Errorf("README.md after the allowed reset: %q", got)
	}

	// protect: blocked refuses; protect: off runs.
	blocked, repo := protectWorker(t, td, "protect_blocked", "protect: blocked")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"exec", map[string]any{"command": "git reset --hard"}},
		{"protect_blocked_reset", map[string]any{}},
	} {
		_, err := callTool(noWait(blocked), c.tool, c.args)
		if ae := apiErr(t, err); ae.Code != errdefs.PolicyDenied || !strings.Contains(ae.Message, "protect: blocked") {
			t.Errorf("protect: blocked, %s: %+v, want it refused", c.tool, ae)
		}
	}
	if r, err := callTool(noWait(blocked), "exec", map[string]any{"command": "git status"}); err != nil || shellOut(t, r).ExitCode != 0 {
		t.Errorf("protect: blocked, git status: %+v %v", r, err)
	}
	if got := readmeOf(t, repo); got != "the agent's unsaved work\n" {
		t.Errorf("protect: blocked: README.md %q", got)
	}

	off, repo := protectWorker(t, td, "protect_off", "protect: off")
	if r, err := callTool(noWait(off), "protect_off_reset", map[string]any{}); err != nil || shellOut(t, r).ExitCode != 0 {
		t.Fatalf("protect: off, shell tool: %+v %v", r, err)
	}
	if got := readmeOf(t, repo); got != "hello from the workspace\n" {
		t.Errorf("protect: off: README.md after the reset %q", got)
	}
	writeFile(t, filepath.Join(repo, "README.md"), "more work\n")
	sandboxOwn(t, repo)
	if r, err := callTool(noWait(off), "exec", map[string]any{"command": "git reset --hard"}); err != nil || shellOut(t, r).ExitCode != 0 {
		t.Fatalf("protect: off, exec: %+v %v", r, err)
	}
	if got := readmeOf(t, repo); got != "hello from the workspace\n" {
		t.Errorf("protect: off: README.md after the exec reset %q", got)
	}
}
