package fs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/toolspec"
)

func TestPreview(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	for name, body := range map[string]string{"a.txt": "one\ntwo\n", "big": string(make([]byte, 100))} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		call      executors.FSCall
		code      errdefs.Code
		old, new  string
		oldExists bool
		newExists bool
	}{
		{name: "write over", call: executors.FSCall{Op: toolspec.FSWriteFile, Path: "a.txt", Content: "x\n"}, old: "one\ntwo\n", new: "x\n", oldExists: true, newExists: true},
		{name: "write new", call: executors.FSCall{Op: toolspec.FSWriteFile, Path: "sub/n.txt", Content: "n"}, new: "n", newExists: true},
		{name: "absolute spelling", call: executors.FSCall{Op: toolspec.FSWriteFile, Path: "/workspace/a.txt", Content: "y"}, old: "one\ntwo\n", new: "y", oldExists: true, newExists: true},
		{name: "edit", call: executors.FSCall{Op: toolspec.FSEditFile, Path: "a.txt", Find: "two", Replace: "2"}, old: "one\ntwo\n", new: "one\n2\n", oldExists: true, newExists: true},
		{name: "edit not found", call: executors.FSCall{Op: toolspec.FSEditFile, Path: "a.txt", Find: "three"}, code: errdefs.InvalidArguments},
		{name: "delete", call: executors.FSCall{Op: toolspec.FSDeleteFile, Path: "a.txt"}, old: "one\ntwo\n", oldExists: true},
		{name: "delete missing", call: executors.FSCall{Op: toolspec.FSDeleteFile, Path: "none"}, code: errdefs.NotFound},
		{name: "link out", call: executors.FSCall{Op: toolspec.FSWriteFile, Path: "out", Content: "x"}, code: errdefs.PolicyDenied},
		{name: "dot-dot out", call: executors.FSCall{Op: toolspec.FSEditFile, Path: "../x", Find: "a"}, code: errdefs.PolicyDenied},
		{name: "outside spelled absolute", call: executors.FSCall{Op: toolspec.FSWriteFile, Path: "/etc/passwd", Content: "x"}, code: errdefs.PolicyDenied},
		{name: "a directory", call: executors.FSCall{Op: toolspec.FSDeleteFile, Path: "dir"}, code: errdefs.InvalidArguments},
		{name: "over the limit", call: executors.FSCall{Op: toolspec.FSWriteFile, Path: "big", Content: "x"}, code: errdefs.LimitExceeded},
		{name: "a read", call: executors.FSCall{Op: toolspec.FSReadFile, Path: "a.txt"}, code: errdefs.InvalidRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.call
			c.Root = "/workspace"
			ch, err := Preview(ws, &c, 64)
			if tt.code != "" {
				if errdefs.CodeOf(err) != tt.code {
					t.Fatalf("err %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(ch.Old) != tt.old || string(ch.New) != tt.new || ch.OldExists != tt.oldExists || ch.NewExists != tt.newExists {
				t.Errorf("got %+v", ch)
			}
		})
	}
	// Nothing changed.
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "one\ntwo\n" {
		t.Errorf("a.txt is %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "sub")); !os.IsNotExist(err) {
		t.Errorf("sub: %v", err)
	}
}
