package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
			if codeOf(err) != errdefs.InvalidDefinition || !strings.Contains(err.Error(), "built-in toolset") {
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
	if _, err := addWorker(c, path); codeOf(err) != errdefs.InvalidDefinition || !strings.Contains(err.Error(), "built-in toolset") {
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
