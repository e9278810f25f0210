package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// symlinkTree makes root/real/sub/f, root/link → real and root/real/flink
// → sub, and returns root with its own symlinks resolved.
func symlinkTree(t testing.TB) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "real", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "real", "sub", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"link": "real", "real/flink": "sub"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCheckNoSymlinks(t *testing.T) {
	root := symlinkTree(t)
	for _, k := range []struct {
		path, want string // want: "" or a part of the error
	}{
		{"real", ""},
		{"real/sub", ""},
		{"real/sub/f", ""},
		{"link", "symlink"},
		{"link/sub", "symlink"},
		{"real/flink", "symlink"},
		{"real/flink/f", "symlink"},
		{"missing", "no such file"},
	} {
		err := CheckNoSymlinks(filepath.Join(root, k.path))
		if k.want == "" && err != nil || k.want != "" && (err == nil || !strings.Contains(err.Error(), k.want)) {
			t.Errorf("%s: %v, want %q", k.path, err, k.want)
		}
	}
}

// FuzzCheckNoSymlinks: a path CheckNoSymlinks accepts resolves to itself.
func FuzzCheckNoSymlinks(f *testing.F) {
	for _, s := range []string{"real", "link/sub", "real/flink/f", "real/../link", "real/./sub//f", "", "..", "real/sub/f/"} {
		f.Add(s)
	}
	root := symlinkTree(f)
	f.Fuzz(func(t *testing.T, rel string) {
		p := filepath.Join(root, rel)
		if CheckNoSymlinks(p) != nil {
			return
		}
		if got, err := filepath.EvalSymlinks(p); err != nil || got != filepath.Clean(p) {
			t.Fatalf("%q accepted, but it resolves to %q (%v)", p, got, err)
		}
	})
}
