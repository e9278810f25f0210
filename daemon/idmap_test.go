package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors/sandbox"
	"github.com/toolcage/toolcage/internal/testutil"
)

// TestWorkspaceInAUsersHome: a root daemon (as toolcage.service runs it),
// a second user's repository in their 0700 home, owned by them, as the
// worker's writable workspace. In both isolations read_file reads it,
// write_file and a shell tool write it (the host files are the user's);
// under the process sandbox a shell tool with filesystem runs git log in
// it and exec commits to it (the executor image has no git).
func TestWorkspaceInAUsersHome(t *testing.T) {
	u := testutil.NewUser(t)
	repo := filepath.Join(u.Home, "repo")
	u.Run(t, u.Home, "mkdir", "repo")
	u.Run(t, repo, "sh", "-c", "echo hello from the workspace > README.md")
	u.Run(t, repo, "git", "init", "-q", "-b", "main")
	u.Run(t, repo, "git", "config", "user.name", "Repo Owner")
	u.Run(t, repo, "git", "config", "user.email", "owner@example.com")
	u.Run(t, repo, "git", "add", "README.md")
	u.Run(t, repo, "git", "commit", "-q", "-m", "the owner's commit")

	dir := sandboxDir(t)
	wdir := filepath.Join(dir, "agent")
	writeFile(t, filepath.Join(wdir, "tools", "git_log.yaml"), "name: git_log\ndescription: the log\nkind: shell\npermissions: [filesystem]\nshell: {command: \"cd /workspace && git log --oneline\"}\n")
	writeFile(t, filepath.Join(wdir, "tools", "touch_ws.yaml"), "name: touch_ws\ndescription: writes the workspace\nkind: shell\npermissions: [filesystem]\nshell: {command: \"mkdir -p /workspace/touched && touch /workspace/touched/$(hostname)\"}\n")
	path := filepath.Join(wdir, "w.yaml")
	writeFile(t, path, "name: home_agent\nworkspace: "+repo+"\nreadonly: false\ntool_files: [tools/*.yaml]\n"+
		"toolsets:\n  filesystem: {}\n  exec:\n    rules:\n      - {pattern: \"git add\", approval: preApproved}\n      - {pattern: \"git commit\", approval: preApproved}\n"+
		"approval: {tools: {write_file: preApproved}}\n")

	daemons := map[string]*testDaemon{
		"process": startDaemon(t, "", nil),
		"docker":  startDockerDaemon(t, func(c *Config) { c.Isolation = "docker" }),
	}
	for _, iso := range []string{"process", "docker"} {
		td := daemons[iso]
		t.Run(iso, func(t *testing.T) {
			added, err := addWorker(td.client, path)
			if err != nil {
				t.Fatal(err)
			}
			agent := noWait(withToken(td.client, added.Token))
			r, err := callTool(agent, "read_file", map[string]any{"path": "README.md"})
			if err != nil || r.IsError || !strings.Contains(string(r.Result), "hello from the workspace") {
				t.Fatalf("read_file: %v %s", err, r.Result)
			}
			name := "by-" + iso + ".txt"
			r, err = callTool(agent, "write_file", map[string]any{"path": name, "content": iso + "\n"})
			if err != nil || r.IsError {
				t.Fatalf("write_file: %v %s", err, r.Result)
			}
			if r, err := callTool(agent, "touch_ws", nil); err != nil || shellOut(t, r).ExitCode != 0 {
				t.Fatalf("a shell tool writing the workspace: %v %s", err, r.Result)
			}
			if out := u.Run(t, repo, "find", ".", "!", "-user", u.Name, "-o", "!", "-group", u.Name); out != "" {
				t.Errorf("files in the workspace not the owner's after write_file and a shell tool:\n%s", out)
			}
			if iso == "docker" {
				return
			}
			r, err = callTool(agent, "git_log", nil)
			if err != nil {
				t.Fatal(err)
			}
			if out := shellOut(t, r); out.ExitCode != 0 || !strings.Contains(out.Stdout, "the owner's commit") {
				t.Fatalf("git log in a shell tool: %+v", out)
			}
			for _, cmd := range []string{"git add " + name, "git commit -q -m by-agent-" + iso} {
				r, err := callTool(agent, "exec", map[string]any{"command": cmd})
				if err != nil {
					t.Fatalf("%s: %v", cmd, err)
				}
				if out := shellOut(t, r); out.ExitCode != 0 {
					t.Fatalf("%s: %+v", cmd, out)
				}
			}
			// The owner sees the agent's commit, and owns what it wrote.
			if log := u.Run(t, repo, "git", "log", "--format=%s"); !strings.Contains(log, "by-agent-"+iso) {
				t.Fatalf("the owner's git log: %q", log)
			}
			if out := u.Run(t, repo, "find", ".", "!", "-user", u.Name, "-o", "!", "-group", u.Name); out != "" {
				t.Errorf("files in .git not the owner's after the agent's commit:\n%s", out)
			}
		})
	}
}

// TestWorkspaceRefusedWhereItCannotBeMapped: a workspace on a file system
// that cannot be idmapped, owned by another user, is refused when the
// worker is added, with the path, its owner and mode and what to do, and
// no call fails later on an executor start.
func TestWorkspaceRefusedWhereItCannotBeMapped(t *testing.T) {
	u := testutil.NewUser(t)
	ws := t.TempDir()
	os.Chmod(ws, 0o755)
	if err := syscall.Mount("ramfs", ws, "ramfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0700"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Unmount(ws, syscall.MNT_DETACH) })
	if err := os.Chown(ws, u.UID, u.GID); err != nil {
		t.Fatal(err)
	}
	dir := sandboxDir(t)
	path := filepath.Join(dir, "agent", "w.yaml")
	writeFile(t, path, "name: ramfs_agent\nworkspace: "+ws+"\nreadonly: false\ntoolsets: {filesystem: {}}\n")
	td := startDaemon(t, "", nil)
	_, err := addWorker(td.client, path)
	if codeOf(err) != errdefs.Forbidden {
		t.Fatalf("worker add: %v, want %s", err, errdefs.Forbidden)
	}
	for _, want := range []string{"workspace: " + ws, "owner " + u.Name, "mode 0700", "on ramfs", "idmapped mounts", fmt.Sprintf("run the daemon as uid %d", u.UID)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	// Owned by the sandbox's user it is accepted; handed to the user
	// after, a call is refused with the same words, not a failed start.
	if err := os.Chown(ws, sandbox.DefaultHostID, sandbox.DefaultHostID); err != nil {
		t.Fatal(err)
	}
	added, err := addWorker(td.client, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(ws, u.UID, u.GID); err != nil {
		t.Fatal(err)
	}
	_, err = callTool(noWait(withToken(td.client, added.Token)), "list_files", map[string]any{"path": "."})
	if codeOf(err) != errdefs.PolicyDenied || !strings.Contains(err.Error(), "owner "+u.Name) || strings.Contains(err.Error(), "handshake") {
		t.Fatalf("a call after the workspace changed owner: %v, want %s naming the owner", err, errdefs.PolicyDenied)
	}
}
