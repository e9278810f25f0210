package sandbox

import (
	"bufio"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestPin: Pin refuses what CheckNoSymlinks refuses, and its FileID is
// the file's device and inode, the same through any path to it.
func TestPin(t *testing.T) {
	root := symlinkTree(t)
	for _, k := range []struct {
		path, want string
	}{
		{"real/sub", ""},
		{"real/sub/f", ""},
		{"link/sub", "symlink"},
		{"real/flink", "symlink"},
		{"missing", "no such file"},
	} {
		f, id, err := Pin(filepath.Join(root, k.path))
		if k.want != "" {
			if err == nil || !strings.Contains(err.Error(), k.want) {
				t.Errorf("%s: %v, want %q", k.path, err, k.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", k.path, err)
		}
		f.Close()
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(root, "link", strings.TrimPrefix(k.path, "real/")), &st); err != nil {
			t.Fatal(err)
		}
		if id != (FileID{Dev: uint64(st.Dev), Ino: st.Ino}) {
			t.Errorf("%s: %v, want the file's own device and inode (%d, %d)", k.path, id, st.Dev, st.Ino)
		}
		if again, err := PinID(filepath.Join(root, k.path)); err != nil || again != id {
			t.Errorf("%s pinned twice: %v %v, want %v", k.path, again, err, id)
		}
	}
}

// TestStatTarget: what a container's pid 1 reports for a mount target is
// the file at the path itself: a symlink there is not followed, so it
// never matches the directory it points to.
func TestStatTarget(t *testing.T) {
	root := symlinkTree(t)
	real, err := PinID(filepath.Join(root, "real"))
	if err != nil {
		t.Fatal(err)
	}
	if st := statTarget(filepath.Join(root, "real")); st.Err != "" || st.ID != real {
		t.Fatalf("statTarget(real) = %+v, want %v", st, real)
	}
	if st := statTarget(filepath.Join(root, "link")); st.Err == "" && st.ID == real {
		t.Fatalf("statTarget(link) = %+v: followed the symlink", st)
	}
	if st := statTarget(filepath.Join(root, "missing")); st.Err == "" {
		t.Fatalf("statTarget(missing) = %+v, want an error", st)
	}
}

// TestReadLineLimit: a control request over the cap is an error, not a
// buffer that grows with whatever the peer sends.
func TestReadLineLimit(t *testing.T) {
	for _, k := range []struct {
		in   string
		want string
		err  bool
	}{
		{"reset\n", "reset\n", false},
		{"stat " + strings.Repeat("x", maxControlLine-6) + "\n", "", false},
		{"stat " + strings.Repeat("x", maxControlLine) + "\n", "", true},
	} {
		got, err := readLine(bufio.NewReaderSize(strings.NewReader(k.in), 4096), maxControlLine)
		if (err != nil) != k.err || (k.want != "" && got != k.want) {
			t.Errorf("readLine(%d bytes) = %d bytes, %v", len(k.in), len(got), err)
		}
	}
}

// BenchmarkPinID: what a warm call with a mount pays before it is handed
// its executor (CheckReuse pins each source again).
func BenchmarkPinID(b *testing.B) {
	p := filepath.Join(symlinkTree(b), "real", "sub")
	for b.Loop() {
		if _, err := PinID(p); err != nil {
			b.Fatal(err)
		}
	}
}
