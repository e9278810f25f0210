package fs

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/toolspec"
)

// TestSpecialFilesRefused: a FIFO (with no writer: an open for reading
// would wait for one), a socket and a device in the workspace are refused
// at once with a clear error by every operation that reads a file or a
// directory, never waited on until the timeout; search skips them; the
// regular neighbours still read.
func TestSpecialFilesRefused(t *testing.T) {
	ws, _ := setup(t)
	fifo := filepath.Join(ws, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(ws, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	special := map[string]string{"pipe": "named pipe", "sock": "socket"}
	// A device node, where this test may make one (root outside a user
	// namespace); /dev/null's numbers.
	if err := syscall.Mknod(filepath.Join(ws, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		special["null"] = "device"
	} else {
		t.Logf("no device node here (%v): FIFO and socket only", err)
	}
	run := func(c executors.FSCall) (any, error) {
		c.Root = ws
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		v, err := Run(ctx, &c)
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s %s took %s: waited on the file", c.Op, c.Path, d)
		}
		return v, err
	}
	for name, kind := range special {
		for _, k := range []executors.FSCall{
			{Op: toolspec.FSReadFile, Path: name},
			{Op: toolspec.FSEditFile, Path: name, Find: "a", Replace: "b"},
			{Op: toolspec.FSListFiles, Path: name},
		} {
			_, err := run(k)
			if errdefs.CodeOf(err) != errdefs.InvalidArguments || !strings.Contains(err.Error(), kind) {
				t.Errorf("%s %s: %v, want invalid_arguments naming a %s", k.Op, name, err, kind)
			}
		}
		// file_info describes it without opening it.
		if v, err := run(executors.FSCall{Op: toolspec.FSFileInfo, Path: name}); err != nil {
			t.Errorf("file_info %s: %v", name, err)
		} else {
			t.Logf("file_info %s: %+v", name, v)
		}
	}
	v, err := run(executors.FSCall{Op: toolspec.FSSearch, Path: ".", Pattern: "line"})
	if err != nil {
		t.Fatalf("search beside special files: %v", err)
	}
	if res := v.(searchResult); len(res.Matches) == 0 {
		t.Fatalf("search found nothing in README.md beside special files: %+v", res)
	}
	if v, err := run(executors.FSCall{Op: toolspec.FSReadFile, Path: "README.md"}); err != nil || !strings.Contains(v.(readResult).Content, "line one") {
		t.Fatalf("read_file README.md beside special files: %v %v", v, err)
	}
	if _, err := os.Stat(fifo); err != nil {
		t.Fatal(err)
	}
}

// TestSearchFileSwappedForFIFO: search picks files by their directory
// entry and then opens them; a regular file swapped for a FIFO between
// the two is skipped, not waited on.
func TestSearchFileSwappedForFIFO(t *testing.T) {
	ws, _ := setup(t)
	p := filepath.Join(ws, "src", "pkg", "a.go")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	done := make(chan error, 1)
	go func() {
		var res searchResult
		_, skipped, err := searchFile(context.Background(), root, "src/pkg/a.go", nil, &executors.FSCall{MaxReadBytes: 1 << 20, MaxMatches: 10}, &res)
		if err == nil && !skipped {
			err = os.ErrInvalid
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a FIFO in place of a file: %v, want it skipped", err)
		}
	case <-time.After(2 * time.Second):
		// Unblock the open so the goroutine ends.
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("search waited on a FIFO that took a file's name")
	}
}

// TestWalkNeverWaits: the walk under glob and search opens the
// directories its entries named through noWaitFS, so a name that is a
// FIFO by then is an error at once (the walk skips it), not a wait.
func TestWalkNeverWaits(t *testing.T) {
	ws, _ := setup(t)
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	done := make(chan error, 2)
	go func() {
		_, err := noWaitFS{root}.ReadDir("pipe")
		done <- err
		f, err := noWaitFS{root}.Open("pipe")
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	for i, want := range []bool{true, false} {
		select {
		case err := <-done:
			if (err != nil) != want {
				t.Fatalf("step %d: %v, want an error: %v", i, err, want)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("noWaitFS waited on a FIFO")
		}
	}
}
