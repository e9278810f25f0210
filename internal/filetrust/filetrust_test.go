package filetrust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
)

// other is a uid no test user has: root may chown to it, which is all a
// table of owners and modes needs (the second-user test of the worker
// files runs a real second user).
const other = 54321

// step builds one entry of a case's tree under a fresh directory.
type step struct {
	path  string // relative
	mode  os.FileMode
	sym   string // a symbolic link to this target
	owner int    // -1: the test's own
}

func TestCheck(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the owner table needs root (chown to another uid)")
	}
	f := func(p string, m os.FileMode) step { return step{path: p, mode: m, owner: -1} }
	d := func(p string, m os.FileMode) step { return step{path: p + "/", mode: m, owner: -1} }
	own := func(s step, uid int) step { s.owner = uid; return s }
	ln := func(p, target string) step { return step{path: p, sym: target, owner: -1} }
	for _, tt := range []struct {
		name   string
		tree   []step
		check  string
		owners []uint32 // nil: root alone
		fault  string   // "" for trusted; else the path at fault, relative
		reason string
	}{
		{name: "plain", tree: []step{d("a", 0o755), f("a/w.yaml", 0o644)}, check: "a/w.yaml"},
		{name: "private", tree: []step{d("a", 0o700), f("a/w.yaml", 0o600)}, check: "a/w.yaml"},
		{name: "file group-writable", tree: []step{d("a", 0o755), f("a/w.yaml", 0o664)}, check: "a/w.yaml", fault: "a/w.yaml", reason: "group"},
		{name: "file world-writable", tree: []step{d("a", 0o755), f("a/w.yaml", 0o646)}, check: "a/w.yaml", fault: "a/w.yaml", reason: "everyone"},
		{name: "file another's", tree: []step{d("a", 0o755), own(f("a/w.yaml", 0o644), other)}, check: "a/w.yaml", fault: "a/w.yaml", reason: "another user"},
		{name: "parent world-writable", tree: []step{d("a", 0o777), f("a/w.yaml", 0o644)}, check: "a/w.yaml", fault: "a", reason: "everyone"},
		{name: "parent group-writable", tree: []step{d("a", 0o775), f("a/w.yaml", 0o644)}, check: "a/w.yaml", fault: "a", reason: "group"},
		{name: "grandparent another's", tree: []step{own(d("a", 0o755), other), d("a/b", 0o755), f("a/b/w.yaml", 0o644)}, check: "a/b/w.yaml", fault: "a", reason: "another user"},
		{name: "sticky parent, own file", tree: []step{d("t", 0o1777), f("t/w.yaml", 0o644)}, check: "t/w.yaml"},
		{name: "sticky parent, another's file", tree: []step{d("t", 0o1777), own(f("t/w.yaml", 0o644), other)}, check: "t/w.yaml", fault: "t/w.yaml", reason: "another user"},
		{name: "sticky parent, another's link", tree: []step{d("t", 0o1777), d("a", 0o755), f("a/w.yaml", 0o644), own(ln("t/w.yaml", "../a/w.yaml"), other)},
			check: "t/w.yaml", fault: "t/w.yaml", reason: "another user in"},
		{name: "sticky parent, another's dir", tree: []step{d("t", 0o1777), own(d("t/x", 0o755), other), f("t/x/w.yaml", 0o644)},
			check: "t/x/w.yaml", fault: "t/x", reason: "another user in"},
		{name: "link to a good file", tree: []step{d("a", 0o755), f("a/w.yaml", 0o644), d("b", 0o755), ln("b/w.yaml", "../a/w.yaml")}, check: "b/w.yaml"},
		{name: "link to a file in an open dir", tree: []step{d("a", 0o777), f("a/w.yaml", 0o644), d("b", 0o755), ln("b/w.yaml", "../a/w.yaml")},
			check: "b/w.yaml", fault: "a", reason: "everyone"},
		{name: "link to a group-writable file", tree: []step{d("a", 0o755), f("a/w.yaml", 0o620), d("b", 0o755), ln("b/w.yaml", "../a/w.yaml")},
			check: "b/w.yaml", fault: "a/w.yaml", reason: "group"},
		{name: "link in an open dir", tree: []step{d("a", 0o755), f("a/w.yaml", 0o644), d("b", 0o777), ln("b/w.yaml", "../a/w.yaml")},
			check: "b/w.yaml", fault: "b", reason: "everyone"},
		{name: "dir link then dot-dot", tree: []step{d("a", 0o755), d("a/b", 0o755), f("a/w.yaml", 0o644), d("c", 0o777), d("l", 0o755), ln("l/b", "../a/b")},
			check: "l/b/../w.yaml"},
		{name: "dir checked itself", tree: []step{d("a", 0o755), d("a/tools", 0o777)}, check: "a/tools", fault: "a/tools", reason: "everyone"},
		{name: "setgid dir", tree: []step{d("a", 0o2755), f("a/w.yaml", 0o644)}, check: "a/w.yaml"},
		{name: "a user daemon: its own files", owners: []uint32{other, 0},
			tree: []step{own(d("a", 0o755), other), own(f("a/w.yaml", 0o644), other)}, check: "a/w.yaml"},
		{name: "a user daemon: root's file too", owners: []uint32{other, 0},
			tree: []step{own(d("a", 0o755), other), f("a/w.yaml", 0o644)}, check: "a/w.yaml"},
		{name: "a user daemon: another user's file", owners: []uint32{other, 0},
			tree: []step{own(d("a", 0o755), other), own(f("a/w.yaml", 0o644), other+1)}, check: "a/w.yaml", fault: "a/w.yaml", reason: "another user"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.owners != nil {
				// The temporary directory is root's: a user daemon's
				// test starts from a directory of its own.
				if err := os.Chown(root, other, -1); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range tt.tree {
				p := filepath.Join(root, s.path)
				var err error
				switch {
				case s.sym != "":
					err = os.Symlink(s.sym, p)
				case strings.HasSuffix(s.path, "/"):
					err = os.Mkdir(p, 0o700)
				default:
					err = os.WriteFile(p, []byte("name: x\n"), 0o600)
				}
				if err == nil && s.sym == "" {
					err = syscall.Chmod(p, uint32(s.mode)) // os.Chmod has its own sticky bit
				}
				if err == nil && s.owner >= 0 {
					err = os.Lchown(p, s.owner, -1)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			pol := Policy{Owners: []uint32{0}}
			if tt.owners != nil {
				pol.Owners = tt.owners
			}
			file := root + "/" + tt.check // uncleaned: "link/.." is the link's parent
			err := pol.Check("worker file", file)
			if tt.fault == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want a refusal of %s", err, tt.fault)
			}
			if errdefs.CodeOf(err) != errdefs.Forbidden {
				t.Errorf("code %s, want forbidden", errdefs.CodeOf(err))
			}
			if want := filepath.Join(root, tt.fault); e.Path != want {
				t.Errorf("at fault %s, want %s", e.Path, want)
			}
			msg := err.Error()
			for _, w := range []string{"worker file " + file, tt.reason, "owner ", "mode 0"} {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

// The lookup's own failures are errors, not refusals, and a loop ends.
func TestCheckLookupErrors(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink("b", filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(root, "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pol := ForProcess()
	for name, tt := range map[string]struct {
		path string
		want error
	}{
		"missing": {filepath.Join(root, "none"), os.ErrNotExist},
		"loop":    {filepath.Join(root, "a"), syscall.ELOOP},
		"notdir":  {filepath.Join(root, "f", "x"), syscall.ENOTDIR},
	} {
		err := pol.Check("tool file", tt.path)
		if !errors.Is(err, tt.want) || Is(err) {
			t.Errorf("%s: %v, want %v", name, err, tt.want)
		}
	}
}

func TestModeString(t *testing.T) {
	for _, tt := range []struct {
		mode uint32
		dir  bool
		want string
	}{
		{0o644, false, "-rw-r--r--"},
		{0o1777, true, "drwxrwxrwt"},
		{0o2755, true, "drwxr-sr-x"},
		{0o1776, true, "drwxrwxrwT"},
	} {
		if got := modeString(tt.mode, tt.dir); got != tt.want {
			t.Errorf("%04o: %s, want %s", tt.mode, got, tt.want)
		}
	}
}

// FuzzCheck walks made-up paths through a tree of links, dot-dots and
// open directories: never a panic, and a path it trusts is one whose
// resolved file the kernel finds, owned by a trusted user.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"a/w", "l/../a/w", "t/x", "loop", "a/w/x", "o/w", "l2/w", "./a//w", "../../etc/passwd"} {
		f.Add(s)
	}
	root := f.TempDir()
	for _, d := range []struct {
		p    string
		mode uint32
	}{{"a", 0o755}, {"o", 0o777}, {"t", 0o1777}} {
		if err := os.Mkdir(filepath.Join(root, d.p), 0o700); err != nil {
			f.Fatal(err)
		}
		if err := syscall.Chmod(filepath.Join(root, d.p), d.mode); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range []string{"a/w", "o/w", "t/x"} {
		if err := os.WriteFile(filepath.Join(root, p), nil, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{"l": "a", "l2": "o", "loop": "loop", "abs": root + "/a/w"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			f.Fatal(err)
		}
	}
	pol := ForProcess()
	f.Fuzz(func(t *testing.T, rel string) {
		if strings.ContainsRune(rel, 0) || len(rel) > 256 {
			return
		}
		p := root + "/" + rel
		err := pol.Check("file", p)
		if err != nil {
			return
		}
		real, rerr := filepath.EvalSymlinks(p)
		if rerr != nil {
			t.Fatalf("trusted %q, which does not resolve: %v", p, rerr)
		}
		var st syscall.Stat_t
		if err := syscall.Stat(real, &st); err != nil || !pol.trusted(st.Uid) || st.Mode&0o022 != 0 && st.Mode&syscall.S_ISVTX == 0 {
			t.Fatalf("trusted %q (%s): %+v %v", p, real, st, err)
		}
	})
}
