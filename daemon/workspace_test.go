package daemon

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/sandbox"
	"github.com/toolcage/toolcage/policy/mounts"
)

// sandboxDir makes a directory the sandbox's user can reach and own: a
// root daemon's sandboxes run as uid 65534, so the directory and what is
// made in it are chowned to it (sandboxOwn); t.TempDir's parents are 0700.
func sandboxDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tc-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// sandboxOwn hands dir (recursively) to the sandbox's user when the
// daemon runs as root; otherwise the sandbox runs as the daemon's uid.
func sandboxOwn(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, sandbox.DefaultHostID, sandbox.DefaultHostID)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// gitRepo makes a git repository with one commit in dir/repo.
func gitRepo(t *testing.T, dir, message string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed; scripts/deps.sh installs it")
	}
	repo := filepath.Join(dir, "repo")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, "README.md"), "hello from the workspace\n")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "README.md"},
		{"-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "-q", "-m", message},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return repo
}

// TestWorkspaceGitLog: a shell tool holding filesystem, in a worker whose
// workspace is a real git repository, runs git log there and sees the
// commit; one without filesystem sees no /workspace; the workspace is
// read-only unless the worker says otherwise.
func TestWorkspaceGitLog(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	dir := sandboxDir(t)
	repo := gitRepo(t, dir, "first commit in the workspace")
	sandboxOwn(t, repo)
	wdir := filepath.Join(dir, "agent")
	writeFile(t, filepath.Join(wdir, "tools", "git_log.yaml"), `name: git_log
description: the workspace's history
kind: shell
permissions: [filesystem]
shell: {command: "git log --oneline", dir: /workspace}
`)
	writeFile(t, filepath.Join(wdir, "tools", "grep_todo.yaml"), `name: grep_hello
description: grep in the workspace
kind: shell
permissions: [filesystem]
shell: {command: "grep -rn hello .", dir: /workspace}
`)
	writeFile(t, filepath.Join(wdir, "tools", "touch_it.yaml"), `name: touch_it
description: write into the workspace
kind: shell
permissions: [filesystem]
shell: {command: "touch /workspace/new-file"}
`)
	writeFile(t, filepath.Join(wdir, "tools", "no_fs.yaml"), `name: no_fs
description: looks for the workspace without the permission
kind: shell
shell: {command: "ls -la /workspace"}
`)
	path := filepath.Join(wdir, "w.yaml")
	writeFile(t, path, "name: repo_agent\nworkspace: ../repo\ntool_files: [tools/*.yaml]\n")
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := withToken(c, added.Token)

	r, err := callTool(agent, "git_log", nil)
	if err != nil {
		t.Fatal(err)
	}
	out := shellOut(t, r)
	if out.ExitCode != 0 || !strings.Contains(out.Stdout, "first commit in the workspace") {
		t.Fatalf("git log in the workspace: %+v", out)
	}
	r, err = callTool(agent, "grep_hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := shellOut(t, r); out.ExitCode != 0 || !strings.Contains(out.Stdout, "README.md:1:hello from the workspace") {
		t.Fatalf("grep in the workspace: %+v", out)
	}
	r, err = callTool(agent, "touch_it", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := shellOut(t, r); out.ExitCode == 0 || !strings.Contains(out.Stderr, "Read-only") {
		t.Fatalf("write into a read-only workspace: %+v", out)
	}
	if _, err := os.Stat(filepath.Join(repo, "new-file")); err == nil {
		t.Fatal("a read-only workspace was written")
	}
	r, err = callTool(agent, "no_fs", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := shellOut(t, r); out.ExitCode == 0 || !strings.Contains(out.Stderr, "No such file") {
		t.Fatalf("a tool without filesystem sees the workspace: %+v", out)
	}

	// readonly: false: the same tool writes it (the worker file reloads).
	writeFile(t, path, "name: repo_agent\nworkspace: ../repo\nreadonly: false\ntool_files: [tools/*.yaml]\n")
	waitFor(t, "the writable workspace", func() bool {
		r, err := callTool(agent, "touch_it", nil)
		return err == nil && shellOut(t, r).ExitCode == 0
	})
	if _, err := os.Stat(filepath.Join(repo, "new-file")); err != nil {
		t.Fatalf("the writable workspace was not written: %v", err)
	}
}

// TestWorkspaceForbiddenPaths: a workspace or mount reaching the daemon's
// own files is refused when the worker or tool is loaded, through a
// symlink too, and "/" and the data dir's parents with them.
func TestWorkspaceForbiddenPaths(t *testing.T) {
	// Outside /tmp, so that a tool mount of it is judged by the guard,
	// not refused for overlapping the sandbox's own /tmp.
	dir, err := os.MkdirTemp("/var/tmp", "tc-forbid-")
	if err != nil {
		t.Skip("no /var/tmp:", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	td := startDaemon(t, filepath.Join(dir, "data"), nil)
	c := td.client
	if err := os.Symlink(td.cfg.DataDir, filepath.Join(dir, "innocent")); err != nil {
		t.Fatal(err)
	}
	for i, ws := range []string{"./innocent", td.cfg.DataDir, filepath.Dir(td.cfg.DataDir), "/", filepath.Dir(td.cfg.Socket)} {
		path := filepath.Join(dir, "w"+string(rune('a'+i))+".yaml")
		writeFile(t, path, "name: w"+string(rune('a'+i))+"\nworkspace: "+ws+"\n")
		_, err := addWorker(c, path)
		if code := codeOf(err); err == nil || (code != errdefs.Forbidden && code != errdefs.InvalidDefinition) ||
			!strings.Contains(err.Error(), "mounted") {
			t.Errorf("workspace %s: %v, want refused", ws, err)
		}
	}
	// A tool's own mounts: refused for the daemon's paths and through a link.
	mountTool := func(name, path string) string {
		return `{"name":"` + name + `","description":"m","kind":"shell","permissions":["filesystem"],"mounts":[{"path":"` + path + `"}],"shell":{"command":"ls"}}`
	}
	for _, p := range []string{filepath.Join(dir, "innocent"), td.cfg.DataDir, "/home"} {
		err := c.Do(context.Background(), "POST", "/v1/tools", []byte(mountTool("m", p)), nil)
		if p == "/home" && !strings.HasPrefix(td.cfg.DataDir, "/home/") {
			continue // /home holds nothing of this daemon's here
		}
		if codeOf(err) != errdefs.Forbidden {
			t.Errorf("tool mount %s: %v, want forbidden", p, err)
		}
	}
	for _, p := range []string{"/", "/tmp/x", "/workspace"} {
		if err := c.Do(context.Background(), "POST", "/v1/tools", []byte(mountTool("m", p)), nil); codeOf(err) != errdefs.InvalidDefinition {
			t.Errorf("tool mount %s: %v, want invalid_definition", p, err)
		}
	}
	if err := c.Do(context.Background(), "POST", "/v1/tools", []byte(`{"name":"m","description":"m","kind":"shell","mounts":[{"path":"/srv"}],"shell":{"command":"ls"}}`), nil); codeOf(err) != errdefs.InvalidDefinition ||
		!strings.Contains(err.Error(), "filesystem") {
		t.Errorf("mounts without filesystem: %v", err)
	}
	// The sandbox's own reserved paths are the same list the guard keeps.
	for _, r := range mounts.Reserved() {
		if err := (sandbox.Config{Binds: []sandbox.Bind{{Source: "/x", Target: r}}}).Validate(); err == nil {
			t.Errorf("mounts reserves %s, which the sandbox does not", r)
		}
	}
}

// TestToolMountsAndGrants: a person's tool mounts a host path at its own
// path; an agent's tool may mount only inside what its worker grants.
func TestToolMountsAndGrants(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	// Not under /tmp: the sandbox's own /tmp would hide it.
	base, err := os.MkdirTemp("/var/tmp", "tc-mount-")
	if err != nil {
		t.Skip("no /var/tmp:", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(base, "data")
	writeFile(t, filepath.Join(data, "notes.txt"), "mounted notes\n")
	os.Chmod(data, 0o755)
	os.Chmod(filepath.Join(data, "notes.txt"), 0o644)
	sandboxOwn(t, data)
	create(t, c, `{"name":"read_notes","description":"m","kind":"shell","permissions":["filesystem"],"mounts":[{"path":"`+data+`"}],"shell":{"command":"cat `+data+`/notes.txt"}}`)
	r, err := callTool(c, "read_notes", nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := shellOut(t, r); out.ExitCode != 0 || out.Stdout != "mounted notes\n" {
		t.Fatalf("tool mount: %+v", out)
	}

	wdir := t.TempDir()
	path := filepath.Join(wdir, "maker.yaml")
	writeFile(t, path, "name: maker\nagent_tools: {create: true}\nmounts: [{path: "+data+"}]\n")
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := withToken(c, added.Token)
	mk := func(name, mount string) error {
		return agent.Do(context.Background(), "POST", "/v1/tools", []byte(`{"name":"`+name+`","description":"m","kind":"shell","permissions":["filesystem"],"mounts":[`+mount+`],"shell":{"command":"ls"}}`), nil)
	}
	if err := mk("inside_grant", `{"path":"`+data+`"}`); err != nil {
		t.Fatalf("a mount the worker grants: %v", err)
	}
	if err := mk("writable", `{"path":"`+data+`","readonly":false}`); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("a writable mount of a read-only grant: %v", err)
	}
	if err := mk("outside", `{"path":"`+base+`"}`); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("a mount outside the grant: %v", err)
	}
}

// TestWorkspaceTokenDirForbidden: the directory the CLI keeps worker token
// files in (the config directory's toolcage/) is never mounted, nor its
// parents; a sibling is.
func TestWorkspaceTokenDirForbidden(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "tc-tokdir-")
	if err != nil {
		t.Skip("no /var/tmp:", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg := filepath.Join(dir, "cfg")
	t.Setenv("XDG_CONFIG_HOME", cfg)
	writeFile(t, filepath.Join(cfg, "toolcage", "workers", "ops.token"), "tcw_x\n")
	if err := os.MkdirAll(filepath.Join(dir, "project"), 0o755); err != nil {
		t.Fatal(err)
	}
	td := startDaemon(t, filepath.Join(dir, "data"), nil)
	for i, tt := range []struct {
		ws      string
		refused bool
	}{
		{filepath.Join(cfg, "toolcage", "workers"), true},
		{filepath.Join(cfg, "toolcage"), true},
		{cfg, true},
		{filepath.Join(dir, "project"), false},
	} {
		name := "t" + string(rune('a'+i))
		path := filepath.Join(dir, name+".yaml")
		writeFile(t, path, "name: "+name+"\nworkspace: "+tt.ws+"\n")
		_, err := addWorker(td.client, path)
		if refused := err != nil; refused != tt.refused || (refused && codeOf(err) != errdefs.Forbidden) {
			t.Errorf("workspace %s: %v, want refused %v", tt.ws, err, tt.refused)
		}
	}
}
