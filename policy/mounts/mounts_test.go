package mounts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGuardCheck(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "home", "u", ".local", "share", "toolcage")
	sock := filepath.Join(root, "run", "toolcage", "toolcage.sock")
	repo := filepath.Join(root, "home", "u", "repo")
	workerFile := filepath.Join(root, "home", "u", "agents", "w.yaml")
	for _, d := range []string{data, filepath.Dir(sock), repo, filepath.Dir(workerFile)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(workerFile, []byte("name: w\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Symlinks that reach the data dir and the repo another way.
	linkToData := filepath.Join(root, "home", "u", "innocent")
	if err := os.Symlink(data, linkToData); err != nil {
		t.Fatal(err)
	}
	linkToShare := filepath.Join(root, "share-link")
	if err := os.Symlink(filepath.Join(root, "home", "u", ".local"), linkToShare); err != nil {
		t.Fatal(err)
	}
	// A forbidden path written through a symlink is caught by its target.
	g := Guard{Forbidden: []string{filepath.Join(linkToShare, "share", "toolcage"), sock}, NoWrite: []string{workerFile}}

	tests := []struct {
		name     string
		path     string
		writable bool
		want     string // "" accepted, else part of the error
	}{
		{"repo", repo, true, ""},
		{"repo read-only", repo, false, ""},
		{"root", "/", false, `"/" can never be mounted`},
		{"home", filepath.Join(root, "home"), false, "holds the daemon's own"},
		{"user home", filepath.Join(root, "home", "u"), false, "holds the daemon's own"},
		{"data dir", data, false, "is the daemon's own"},
		{"inside data dir", filepath.Join(data), false, "is the daemon's own"},
		{"symlink to data dir", linkToData, false, "is the daemon's own"},
		{"socket dir", filepath.Dir(sock), false, "holds the daemon's own"},
		{"socket", sock, false, "daemon's own"},
		{"worker file dir, writable", filepath.Dir(workerFile), true, "only be mounted read-only"},
		{"worker file dir, read-only", filepath.Dir(workerFile), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.path
			if r, err := Resolve(p); err == nil {
				p = r
			}
			err := g.Check(p, tt.writable)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Check(%s) = %v, want accepted", p, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Check(%s) = %v, want %q", p, err, tt.want)
			}
		})
	}
	// The real /home, as a daemon with its data dir in a home would see it.
	hg := Guard{Forbidden: []string{"/home/someone/.local/share/toolcage"}}
	if err := hg.Check("/home", false); err == nil {
		t.Error("/home accepted while it holds the data dir")
	}
	if err := hg.Check("/home/someone/src", false); err != nil {
		t.Errorf("a sibling of the data dir refused: %v", err)
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	got, err := Resolve(link)
	if err != nil || got != real {
		t.Fatalf("Resolve(link) = %q, %v; want %q", got, err, real)
	}
	for _, p := range []string{"", filepath.Join(dir, "missing"), "a\x00b"} {
		if _, err := Resolve(p); err == nil {
			t.Errorf("Resolve(%q) accepted", p)
		}
	}
}

func TestCheckTarget(t *testing.T) {
	for _, ok := range []string{"/srv/data", "/home/u/src", "/opt/x", "/var/tmp/x"} {
		if err := CheckTarget(ok); err != nil {
			t.Errorf("CheckTarget(%s) = %v", ok, err)
		}
	}
	for _, bad := range []string{"/", "/tmp/x", "/usr", "/etc/passwd", "/workspace", "/workspace/sub", "/work", "/work/wt", "relative", "/a/../b", "/proc/1"} {
		if err := CheckTarget(bad); err == nil {
			t.Errorf("CheckTarget(%s) accepted", bad)
		}
	}
}

// FuzzGuardCheck: whatever clean absolute path is asked for, Check never
// accepts one that is, lies under or lies above a forbidden path.
func FuzzGuardCheck(f *testing.F) {
	for _, s := range []string{"/", "/home", "/home/u/.local/share/toolcage", "/home/u/.local/share/toolcage/x", "/home/u/src", "/run/tc/s.sock", "/run", "/srv/x/../y"} {
		f.Add(s, false)
	}
	forbidden := []string{"/home/u/.local/share/toolcage", "/run/tc/s.sock"}
	g := Guard{Forbidden: forbidden, NoWrite: []string{"/home/u/agents/w.yaml"}}
	f.Fuzz(func(t *testing.T, p string, writable bool) {
		err := g.Check(p, writable)
		if err != nil {
			return
		}
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
			t.Fatalf("Check accepted %q", p)
		}
		for _, fb := range forbidden {
			if within(p, fb) || within(fb, p) {
				t.Fatalf("Check accepted %q, which overlaps %s", p, fb)
			}
		}
		if writable && within("/home/u/agents/w.yaml", p) {
			t.Fatalf("Check accepted %q writable, which holds the worker file", p)
		}
	})
}

// NoWriteIn: a writable mount may neither hold nor lie in one of its
// directories; a read-only one may do both.
func TestGuardNoWriteIn(t *testing.T) {
	g := Guard{}.WithDirs("/srv/agent/tools")
	for _, tt := range []struct {
		src      string
		writable bool
		ok       bool
	}{
		{"/srv/agent/tools", true, false},
		{"/srv/agent/tools/b", true, false},
		{"/srv/agent", true, false},
		{"/srv", true, false},
		{"/srv/agent/tools2", true, true},
		{"/srv/agent/notes", true, true},
		{"/srv/agent/tools/b", false, true},
		{"/srv", false, true},
	} {
		if err := g.Check(tt.src, tt.writable); (err == nil) != tt.ok {
			t.Errorf("Check(%s, writable %v): %v, want ok %v", tt.src, tt.writable, err, tt.ok)
		}
	}
	if g2 := g.WithDirs("/x"); len(g.NoWriteIn) != 1 || len(g2.NoWriteIn) != 2 {
		t.Errorf("WithDirs changed its receiver: %v %v", g.NoWriteIn, g2.NoWriteIn)
	}
}
