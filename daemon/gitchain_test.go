package daemon

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
)

// TestExecGitChain: the git chain end to end. A worker with the exec
// toolset on a writable git repository pre-approves git log, git diff
// and git status (and cp and tee). The agent's commands that would
// write the repository's configuration, hooks or other files programs
// run code from are not covered by those rules (asked or refused), and
// a pre-approved git status in a repository whose configuration already
// names a program does not run it: the settings a setting can switch
// off are switched off (repocode.Env), the others hold the call for a
// person. A shell tool holding filesystem runs git the same way. The
// everyday neighbours stay covered and unasked.
func TestExecGitChain(t *testing.T) {
	td := startDaemon(t, "", nil)
	dir := sandboxDir(t)
	repo := gitRepo(t, dir, "chain commit")
	writeFile(t, filepath.Join(dir, "agent", "tools", "git_status.yaml"), `name: git_status_tool
description: the workspace's status
kind: shell
permissions: [filesystem]
shell: {command: "git status --short", dir: /workspace}
`)
	path := filepath.Join(dir, "agent", "w.yaml")
	writeFile(t, path, `name: chain_agent
workspace: ../repo
readonly: false
tool_files: [tools/*.yaml]
toolsets:
  filesystem: {}
  exec:
    rules:
      - {pattern: "git log", approval: preApproved}
      - {pattern: "git diff", approval: preApproved}
      - {pattern: "git status", approval: preApproved}
      - {pattern: "cp", approval: preApproved}
      - {pattern: "tee", approval: preApproved}
      - {pattern: "ln", approval: preApproved}
approval: {tools: {write_file: preApproved, edit_file: preApproved}}
`)
	sandboxOwn(t, repo)
	added, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := noWait(withToken(td.client, added.Token))
	run := func(cmd string) (shellResult, error) {
		t.Helper()
		r, err := callTool(agent, "exec", map[string]any{"command": cmd})
		if err != nil {
			return shellResult{}, err
		}
		return shellOut(t, r), nil
	}
	ran := func(marker string) bool {
		_, err := os.Stat(filepath.Join(repo, marker))
		return err == nil
	}

	// Everyday neighbours: covered by the rules, unasked.
	for _, cmd := range []string{"git log --oneline", "git diff --stat", "git -c color.ui=never log", "git status -s"} {
		if out, err := run(cmd); err != nil || out.ExitCode != 0 {
			t.Errorf("%s: %+v %v", cmd, out, err)
		}
	}

	// Writing the repository's configuration, its hooks, or a file git,
	// make or npm run programs from: not what the rules cover.
	configPath := filepath.Join(repo, ".git", "config")
	config, err := os.ReadFile(configPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"git diff --output=.git/config",
		"git log --output=.git/config",
		"git -c color.ui=never diff --output=.git/config",
		"git log -p --output=.git/hooks/post-checkout",
		"git -c core.fsmonitor='touch /workspace/ran-c' status",
		"git config core.fsmonitor 'touch /workspace/ran-config'",
		"git config alias.x '!touch /workspace/ran-alias'",
		"cp README.md .git/config",
		"cp README.md .git/hooks/pre-commit",
		"tee .gitattributes < README.md",
		"cp README.md Makefile",
		"cp README.md package.json",
		"env -i git status",
		"ln -s .git/config notes.txt",
	} {
		_, err := run(cmd)
		if c := codeOf(err); c != errdefs.ApprovalRequired && c != errdefs.PolicyDenied {
			t.Errorf("%s: %v, want it asked or refused", cmd, err)
		}
	}
	// ... and through the filesystem toolset, pre-approved as it is.
	if r, err := callTool(agent, "write_file", map[string]any{"path": "notes.txt", "content": "plain notes\n"}); err != nil || r.IsError {
		t.Fatalf("write_file of an ordinary file: %+v %v", r, err)
	}
	for _, p := range []string{".git/config", "/workspace/.git/hooks/pre-commit", ".gitattributes", "Makefile", "sub/package.json"} {
		if _, err := callTool(agent, "write_file", map[string]any{"path": p, "content": "[core]\n\tfsmonitor = touch /workspace/ran-fs\n"}); codeOf(err) != errdefs.ApprovalRequired {
			t.Errorf("write_file %s: %v, want it held for a person", p, err)
		}
	}
	if now, _ := os.ReadFile(configPath); !bytes.Equal(now, config) {
		t.Errorf(".git/config was written:\n%s", now)
	}
	for _, f := range []string{".git/hooks/post-checkout", ".git/hooks/pre-commit", ".gitattributes", "Makefile", "package.json", "ran-c"} {
		if ran(f) {
			t.Errorf("%s was written", f)
		}
	}

}

// TestExecGitChainRead: the chain's other half. A repository whose
// configuration already names programs (the person put them there, or
// someone before): a pre-approved git status, and a shell tool's, does
// not run them. What a setting can switch off is switched off; what no
// setting does holds the call for a person.
func TestExecGitChainRead(t *testing.T) {
	td := startDaemon(t, "", nil)
	dir := sandboxDir(t)
	repo := gitRepo(t, dir, "chain commit")
	writeFile(t, filepath.Join(dir, "agent", "tools", "git_status.yaml"), `name: git_status_tool
description: the workspace's status
kind: shell
permissions: [filesystem]
shell: {command: "git status --short", dir: /workspace}
`)
	path := filepath.Join(dir, "agent", "w.yaml")
	writeFile(t, path, `name: chain_reader
workspace: ../repo
readonly: false
tool_files: [tools/*.yaml]
toolsets:
  exec:
    rules:
      - {pattern: "git log", approval: preApproved}
      - {pattern: "git diff", approval: preApproved}
      - {pattern: "git status", approval: preApproved}
`)
	configPath := filepath.Join(repo, ".git", "config")
	config, err := os.ReadFile(configPath)
	if err != nil {
		t.Fatal(err)
	}
	sandboxOwn(t, repo)
	added, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := noWait(withToken(td.client, added.Token))
	run := func(cmd string) (shellResult, error) {
		t.Helper()
		r, err := callTool(agent, "exec", map[string]any{"command": cmd})
		if err != nil {
			return shellResult{}, err
		}
		return shellOut(t, r), nil
	}
	ran := func(marker string) bool {
		_, err := os.Stat(filepath.Join(repo, marker))
		return err == nil
	}
	appendFile(t, configPath, "[core]\n\tfsmonitor = touch /workspace/ran-fsmonitor\n\thooksPath = .hooks\n"+
		"[alias]\n\tunused = !touch /workspace/ran-unused\n")
	writeFile(t, filepath.Join(repo, "new.txt"), "a new file\n")
	sandboxOwn(t, repo)
	out, err := run("git status -s")
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("git status in a repository whose config names programs: %+v %v", out, err)
	}
	r, err := callTool(withToken(td.client, added.Token), "git_status_tool", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := shellOut(t, r); out.ExitCode != 0 {
		t.Errorf("the shell tool's git status: %+v", out)
	}
	if ran("ran-fsmonitor") {
		t.Error("a pre-approved git status ran the repository's core.fsmonitor")
	}

	// What no setting switches off holds the call for a person.
	for _, tt := range []struct{ config, attrs, cmd, marker string }{
		{"[diff]\n\texternal = touch /workspace/ran-external\n", "", "git diff", "ran-external"},
		{"[filter \"x\"]\n\tclean = touch /workspace/ran-filter\n", "*.txt filter=x\n", "git status", "ran-filter"},
		{"[diff \"y\"]\n\ttextconv = touch /workspace/ran-textconv\n", "*.md diff=y\n", "git log -p", "ran-textconv"},
	} {
		if err := os.WriteFile(configPath, append(append([]byte{}, config...), tt.config...), 0o644); err != nil {
			t.Fatal(err)
		}
		if tt.attrs != "" {
			writeFile(t, filepath.Join(repo, ".gitattributes"), tt.attrs)
		}
		writeFile(t, filepath.Join(repo, "README.md"), "changed: "+tt.marker+"\n")
		sandboxOwn(t, repo)
		if _, err := run(tt.cmd); codeOf(err) != errdefs.ApprovalRequired {
			t.Errorf("%s with %q in the config: %v, want it held for a person", tt.cmd, tt.config, err)
		}
		if _, err := callTool(agent, "git_status_tool", nil); codeOf(err) != errdefs.ApprovalRequired {
			t.Errorf("the shell tool's git status with %q in the config: %v, want it held for a person", tt.config, err)
		}
		if ran(tt.marker) {
			t.Errorf("%s ran %s", tt.cmd, tt.marker)
		}
		os.Remove(filepath.Join(repo, ".gitattributes"))
	}
}

// TestShellGitInAPersonsRepo: a shell tool holding filesystem runs git
// in a workspace the sandbox's user does not own (a person's
// repository), as exec does: the git environment marks it safe.
func TestShellGitInAPersonsRepo(t *testing.T) {
	td := startDaemon(t, "", nil)
	dir := sandboxDir(t)
	gitRepo(t, dir, "the person's commit") // left owned by the test's user
	writeFile(t, filepath.Join(dir, "agent", "tools", "git_log.yaml"), `name: person_git_log
description: the workspace's history
kind: shell
permissions: [filesystem]
shell: {command: "git log --oneline", dir: /workspace}
`)
	path := filepath.Join(dir, "agent", "w.yaml")
	writeFile(t, path, "name: shell_git_agent\nworkspace: ../repo\ntool_files: [tools/*.yaml]\n")
	added, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := callTool(withToken(td.client, added.Token), "person_git_log", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := shellOut(t, r); out.ExitCode != 0 || !bytes.Contains([]byte(out.Stdout), []byte("the person's commit")) {
		t.Errorf("git log in a repository the sandbox does not own: %+v", out)
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
