package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
)

// A parked write_file, edit_file or delete_file shows the person the
// change against the file as it stands: a unified diff, "new file",
// "delete", binary files said so, a path out of the workspace refused as
// the call would be, and credentials in it scrubbed.
func TestApprovalShowsTheChange(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	dir := sandboxDir(t)
	repo := filepath.Join(dir, "repo")
	writeFile(t, filepath.Join(repo, "a.txt"), "one\ntwo\nthree\n")
	writeFile(t, filepath.Join(repo, "bin.dat"), "a\x00b")
	outside := filepath.Join(dir, "outside.txt")
	writeFile(t, outside, "host-only-text\n")
	if err := os.Symlink(outside, filepath.Join(repo, "leak")); err != nil {
		t.Fatal(err)
	}
	sandboxOwn(t, repo)
	path := filepath.Join(dir, "agent", "w.yaml")
	writeFile(t, path, "name: fs_change\nworkspace: ../repo\nreadonly: false\ntoolsets: {filesystem: {}}\n"+
		"approval: {tools: {write_file: ask, edit_file: ask}}\n")
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := withToken(c, added.Token)
	token := "ghp_" + strings.Repeat("Zq8vK2mXw9", 3) + "abcdef"
	for _, tt := range []struct {
		name, tool string
		args       map[string]any
		want       []string
		not        []string
	}{
		{"new file", "write_file", map[string]any{"path": "n.txt", "content": "hello\n"},
			[]string{"new file n.txt, 6 bytes\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+hello\n"}, nil},
		{"overwrite", "write_file", map[string]any{"path": "a.txt", "content": "one\n2\nthree\n"},
			[]string{"edit a.txt: +1 -1 lines\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"}, nil},
		{"edit", "edit_file", map[string]any{"path": "/workspace/a.txt", "find": "three", "replace": "3"},
			[]string{"edit a.txt: +1 -1 lines", "-three\n+3\n"}, nil},
		{"edit that cannot apply", "edit_file", map[string]any{"path": "a.txt", "find": "four", "replace": "4"},
			[]string{"edit_file: the change cannot be shown", "not in the file"}, nil},
		{"delete", "delete_file", map[string]any{"path": "a.txt"}, []string{"delete a.txt, 14 bytes\n--- a/a.txt\n+++ /dev/null\n"}, nil},
		{"binary", "write_file", map[string]any{"path": "bin.dat", "content": "new"}, []string{"edit bin.dat: binary file, 3 bytes → 3 bytes; not shown"}, nil},
		{"a link out", "write_file", map[string]any{"path": "leak", "content": "x"}, []string{"leads out of the workspace"}, []string{"host-only-text"}},
		{"a credential", "write_file", map[string]any{"path": "cfg.txt", "content": "token=" + token + "\n"}, []string{"new file cfg.txt"}, []string{token}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := parkAs(t, agent, tt.tool, tt.args)
			var list api.ApprovalList
			if err := c.Do(context.Background(), "GET", "/v1/approvals", nil, &list); err != nil {
				t.Fatal(err)
			}
			var got *api.Approval
			for i := range list.Approvals {
				if list.Approvals[i].ID == id {
					got = &list.Approvals[i]
				}
			}
			if got == nil {
				t.Fatalf("approval %s not listed", id)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Change, w) {
					t.Errorf("change %q lacks %q", got.Change, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got.Change, n) {
					t.Errorf("change %q shows %q", got.Change, n)
				}
			}
		})
	}
	// Parking changed nothing.
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Errorf("a.txt is %q", b)
	}
	if _, err := os.Stat(filepath.Join(repo, "n.txt")); !os.IsNotExist(err) {
		t.Errorf("n.txt: %v", err)
	}
}
