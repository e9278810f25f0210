package worker

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/mounts"
)

func TestParseWorkspace(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"repo/README":         "hi\n",
		"agents/notadir":      "x\n",
		"agents/tools/t.yaml": "name: t\ndescription: mounts\nkind: shell\npermissions: [filesystem]\nmounts: [{path: /srv}]\nshell: {command: ls}\n",
	})
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "repo"), filepath.Join(dir, "agents", "repo-link")); err != nil {
		t.Fatal(err)
	}
	parse := func(content string) (*Worker, error) {
		return Parse(filepath.Join(dir, "agents", "w.yaml"), []byte(content))
	}

	w, err := parse("name: w\nworkspace: ../repo\n")
	if err != nil {
		t.Fatal(err)
	}
	if w.Workspace != filepath.Join(real, "repo") || !w.ReadOnly {
		t.Fatalf("workspace %q readonly %v; want %s, read-only by default", w.Workspace, w.ReadOnly, filepath.Join(real, "repo"))
	}
	// Symlinks are resolved: what was checked is what is mounted.
	w, err = parse("name: w\nworkspace: ./repo-link\nreadonly: false\n")
	if err != nil {
		t.Fatal(err)
	}
	if w.Workspace != filepath.Join(real, "repo") || w.ReadOnly {
		t.Fatalf("workspace %q readonly %v", w.Workspace, w.ReadOnly)
	}
	if w.ProtectMode() != policy.ProtectAsk {
		t.Fatalf("protect %q, want ask by default", w.ProtectMode())
	}
	for _, mode := range []string{policy.ProtectAsk, policy.ProtectBlocked, policy.ProtectOff} {
		w, err := parse("name: w\nworkspace: ../repo\nreadonly: false\nprotect: " + mode + "\n")
		if err != nil || w.ProtectMode() != mode {
			t.Fatalf("protect: %s: %q, %v", mode, w.ProtectMode(), err)
		}
	}
	if w, err := parse("name: w\nworkspace: ../repo\nprotect: blocked\n"); err != nil || w.ProtectMode() != "" {
		t.Fatalf("read-only workspace: protect mode %q, %v; want none", w.ProtectMode(), err)
	}
	w, err = parse("name: w\nmounts: [{path: ../repo}, {path: " + filepath.Join(real, "repo") + ", readonly: false}]\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Mounts) != 2 || w.Mounts[0].Path != filepath.Join(real, "repo") || !w.Mounts[0].ReadOnly || w.Mounts[1].ReadOnly {
		t.Fatalf("mounts %+v", w.Mounts)
	}

	bad := []struct {
		content, want string
	}{
		{"name: w\nworkspace: ./missing\n", "workspace: "},
		{"name: w\nworkspace: ./notadir\n", "is not a directory"},
		{"name: w\nworkspace: \"\"\n", "workspace: is empty"},
		{"name: w\nworkspace: 3\n", "workspace: want a string"},
		{"name: w\nreadonly: false\n", "there is no workspace"},
		{"name: w\nprotect: off\n", "protect: says what becomes"},
		{"name: w\nworkspace: ../repo\nreadonly: false\nprotect: maybe\n", `protect: unknown value "maybe" (want ask, blocked or off)`},
		{"name: w\nworkspace: ../repo\nreadonly: false\nprotect: true\n", "protect: want a string"},
		{"name: w\nworkspace: ../repo\nreadonly: maybe\n", "readonly: want true or false"},
		{"name: w\nworkspace: /\n", `"/" can never be mounted`},
		// A writable workspace may not hold the worker's own file.
		{"name: w\nworkspace: .\nreadonly: false\n", "only be mounted read-only"},
		{"name: w\nworkspace: ..\nreadonly: false\n", "only be mounted read-only"},
		{"name: w\nmounts: [{path: ./missing}]\n", "mounts[0].path"},
		{"name: w\nmounts: [{readonly: true}]\n", "mounts[0].path: is required"},
		{"name: w\nmounts: [{path: ., readonly: false}]\n", "only be mounted read-only"},
		{"name: w\nmounts: {path: .}\n", "want a list"},
	}
	for _, tt := range bad {
		_, err := parse(tt.content)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.content, err, tt.want)
		}
	}
	// A read-only workspace may hold the worker's file.
	if _, err := parse("name: w\nworkspace: .\n"); err != nil {
		t.Errorf("read-only workspace holding the worker file: %v", err)
	}
}

// TestCheckMountsDaemonPaths: the daemon's own paths, given by the daemon
// when it registers a worker, are refused however they are reached.
func TestCheckMountsDaemonPaths(t *testing.T) {
	dir := writeFiles(t, map[string]string{"data/toolcage.db": "x", "repo/a": "x"})
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(real, "data")
	if err := os.Symlink(data, filepath.Join(dir, "link-to-data")); err != nil {
		t.Fatal(err)
	}
	g := mounts.Guard{Forbidden: []string{data}}
	for _, ws := range []string{"./link-to-data", "./data", ".", "./repo"} {
		w, err := Parse(filepath.Join(dir, "w.yaml"), []byte("name: w\nworkspace: "+ws+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		err = w.CheckMounts(g)
		if ws == "./repo" {
			if err != nil {
				t.Errorf("%s: %v", ws, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "daemon's own") {
			t.Errorf("workspace %s: %v, want refused as the daemon's own", ws, err)
		}
	}
}

// ToolFileDirs: each pattern's directories up to the first with glob
// syntax, absolute beside the worker file.
func TestToolFileDirs(t *testing.T) {
	w := &Worker{Path: "/srv/agent/w.yaml", ToolFiles: []string{"tools/*.yaml", "more/*/x.yaml", "a/b/[cd]/*/y.yaml", "./z.yaml"}}
	got := w.ToolFileDirs()
	want := []string{"/srv/agent/tools", "/srv/agent/more", "/srv/agent/a/b", "/srv/agent"}
	if !slices.Equal(got, want) {
		t.Errorf("ToolFileDirs = %v, want %v", got, want)
	}
}
