package fs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/toolspec"
)

const secret = "TOP SECRET host file"

// setup makes base/ws (the workspace) and base/outside/secret.txt, and
// returns the workspace.
func setup(t testing.TB) (ws, outside string) {
	t.Helper()
	base := t.TempDir()
	ws = filepath.Join(base, "ws")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{ws, outside, filepath.Join(ws, "src", "pkg")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(outside, "secret.txt"):     secret + "\n",
		filepath.Join(ws, "README.md"):           "line one\nline two\nline three\n",
		filepath.Join(ws, "src", "main.go"):      "package main\n\nfunc main() {\n\t// TODO: work\n}\n",
		filepath.Join(ws, "src", "pkg", "a.go"):  "package pkg\n// TODO: a\n// TODO: b\n",
		filepath.Join(ws, "src", "pkg", "b.txt"): "nothing\n",
		filepath.Join(ws, "bin.dat"):             "TODO\x00binary",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"out-link":    outside,
		"secret-link": filepath.Join(outside, "secret.txt"),
		"rel-out":     "../outside/secret.txt",
		"inside-link": "src/main.go",
		"src/up":      "../..",
		"loop":        "loop",
		"readme-link": "README.md",
		"abs-in-link": filepath.Join(ws, "README.md"),
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	return ws, outside
}

func run(t testing.TB, c toolspec.FSCall) (map[string]any, error) {
	t.Helper()
	v, err := Run(context.Background(), &c)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "TOP SECRET") {
		t.Fatalf("%s %s leaked the host file: %s", c.Op, c.Path, b)
	}
	return m, nil
}

func TestEscapesRefused(t *testing.T) {
	ws, outside := setup(t)
	paths := []string{
		"../outside/secret.txt",
		"src/../../outside/secret.txt",
		filepath.Join(outside, "secret.txt"), // absolute, outside
		"/etc/passwd",
		ws + "/../outside/secret.txt", // absolute under the root's spelling
		"out-link/secret.txt",
		"secret-link",
		"rel-out",
		"src/up/outside/secret.txt",
		"loop",
	}
	for _, op := range []string{toolspec.FSReadFile, toolspec.FSEditFile, toolspec.FSWriteFile, toolspec.FSDeleteFile, toolspec.FSFileInfo, toolspec.FSListFiles, toolspec.FSSearch} {
		for _, p := range paths {
			_, err := run(t, toolspec.FSCall{Op: op, Root: ws, Path: p, Find: "SECRET", Replace: "x", Content: "pwned", Pattern: "SECRET"})
			code := errdefs.CodeOf(err)
			switch {
			case err == nil && (op == toolspec.FSDeleteFile || op == toolspec.FSFileInfo || op == toolspec.FSWriteFile) && !strings.Contains(p, "/"):
				// A symlink inside the workspace is itself a file of it:
				// file_info describes it, delete_file removes the link,
				// write_file replaces the link with a file (the file it
				// pointed to is untouched: checked below).
				continue
			case err == nil:
				t.Errorf("%s %s: accepted", op, p)
			case code != errdefs.PolicyDenied && code != errdefs.NotFound && code != errdefs.InvalidArguments:
				t.Errorf("%s %s: %v (%s)", op, p, err, code)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != secret+"\n" {
		t.Fatalf("the host file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "secret.txt")); err != nil {
		t.Fatal("the host file was deleted")
	}
}

func TestSymlinksInsideFollowed(t *testing.T) {
	ws, _ := setup(t)
	for _, p := range []string{"readme-link", "./README.md", ws + "/README.md", "src/../README.md"} {
		m, err := run(t, toolspec.FSCall{Op: toolspec.FSReadFile, Root: ws, Path: p})
		if err != nil || m["content"] != "line one\nline two\nline three\n" {
			t.Errorf("read %s: %v %v", p, m, err)
		}
	}
	// An absolute symlink names a host path: it leads out, even when that
	// host path is the workspace's own.
	if _, err := run(t, toolspec.FSCall{Op: toolspec.FSReadFile, Root: ws, Path: "abs-in-link"}); errdefs.CodeOf(err) != errdefs.PolicyDenied {
		t.Errorf("absolute symlink: %v", err)
	}
	m, err := run(t, toolspec.FSCall{Op: toolspec.FSFileInfo, Root: ws, Path: "secret-link"})
	if err != nil || m["type"] != "symlink" {
		t.Errorf("file_info of a link: %v %v", m, err)
	}
}

// TestSwapRace swaps a directory of the workspace for a symlink leading
// out, over and over, while reading through it: no read ever reaches the
// host file, whatever the timing.
func TestSwapRace(t *testing.T) {
	ws, outside := setup(t)
	dir := filepath.Join(ws, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("inside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(ws, "d-real")
	link := filepath.Join(ws, "d-link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			// d is the real directory, then the symlink, then back.
			_ = os.Rename(dir, real)
			_ = os.Rename(link, dir)
			_ = os.Rename(dir, link)
			_ = os.Rename(real, dir)
		}
	}()
	var inside, refused int
	for i := 0; i < 3000; i++ {
		for _, op := range []string{toolspec.FSReadFile, toolspec.FSSearch, toolspec.FSEditFile} {
			m, err := run(t, toolspec.FSCall{Op: op, Root: ws, Path: "d/secret.txt", Pattern: ".", Find: "zzz", Replace: "y"})
			if err != nil {
				refused++
				continue
			}
			if op == toolspec.FSReadFile && m["content"] == "inside\n" {
				inside++
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("reads inside: %d, refused or missing: %d", inside, refused)
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != secret+"\n" {
		t.Fatalf("the host file changed: %q", b)
	}
}

func TestReadOnly(t *testing.T) {
	ws, _ := setup(t)
	for _, op := range []string{toolspec.FSWriteFile, toolspec.FSEditFile, toolspec.FSDeleteFile} {
		_, err := run(t, toolspec.FSCall{Op: op, Root: ws, ReadOnly: true, Path: "README.md", Content: "x", Find: "line one", Replace: "x"})
		if errdefs.CodeOf(err) != errdefs.PolicyDenied || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("%s on a read-only workspace: %v", op, err)
		}
	}
	for _, op := range []string{toolspec.FSReadFile, toolspec.FSGlob, toolspec.FSSearch, toolspec.FSFileInfo} {
		pattern := "*.md"
		if op == toolspec.FSSearch {
			pattern = "line"
		}
		if _, err := run(t, toolspec.FSCall{Op: op, Root: ws, ReadOnly: true, Path: "README.md", Pattern: pattern}); err != nil {
			t.Errorf("%s on a read-only workspace: %v", op, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "README.md")); !strings.HasPrefix(string(b), "line one") {
		t.Fatal("a read-only workspace was written")
	}
}

func TestReadFile(t *testing.T) {
	ws, _ := setup(t)
	tests := []struct {
		start, end, cap int64
		content         string
		truncated, eof  bool
		wantErr         errdefs.Code
	}{
		{0, 0, 0, "line one\nline two\nline three\n", false, true, ""},
		{2, 2, 0, "line two\n", false, false, ""},
		{2, 0, 0, "line two\nline three\n", false, true, ""},
		{3, 9, 0, "line three\n", false, true, ""},
		{1, 3, 0, "line one\nline two\nline three\n", false, false, ""},
		// The read cap at its edge: exactly fits, one byte short.
		{0, 0, 29, "line one\nline two\nline three\n", false, true, ""},
		{0, 0, 28, "line one\nline two\nline three", true, false, ""},
		{0, 0, 9, "line one\n", true, false, ""},
		{4, 0, 0, "", false, false, errdefs.InvalidArguments},
		{3, 2, 0, "", false, false, errdefs.InvalidArguments},
		{-1, 0, 0, "", false, false, errdefs.InvalidArguments},
	}
	for _, tt := range tests {
		m, err := run(t, toolspec.FSCall{Op: toolspec.FSReadFile, Root: ws, Path: "README.md", StartLine: tt.start, EndLine: tt.end, MaxReadBytes: tt.cap})
		if tt.wantErr != "" {
			if errdefs.CodeOf(err) != tt.wantErr {
				t.Errorf("lines %d-%d: %v, want %s", tt.start, tt.end, err, tt.wantErr)
			}
			continue
		}
		if err != nil || m["content"] != tt.content || m["truncated"] != tt.truncated || m["eof"] != tt.eof {
			t.Errorf("lines %d-%d cap %d: %v %v", tt.start, tt.end, tt.cap, m, err)
		}
	}
	for _, p := range []string{"missing.txt", "src", ""} {
		if _, err := run(t, toolspec.FSCall{Op: toolspec.FSReadFile, Root: ws, Path: p}); err == nil {
			t.Errorf("read %q accepted", p)
		}
	}
	if _, err := run(t, toolspec.FSCall{Op: toolspec.FSReadFile, Root: ws, Path: "missing.txt"}); errdefs.CodeOf(err) != errdefs.NotFound {
		t.Errorf("missing file: %v", err)
	}
}

func TestWriteAndEdit(t *testing.T) {
	ws, _ := setup(t)
	// The write cap at its edge.
	if _, err := run(t, toolspec.FSCall{Op: toolspec.FSWriteFile, Root: ws, Path: "new/dir/f.txt", Content: "12345", MaxWriteBytes: 5}); err != nil {
		t.Fatalf("write at the cap: %v", err)
	}
	_, err := run(t, toolspec.FSCall{Op: toolspec.FSWriteFile, Root: ws, Path: "new/dir/g.txt", Content: "123456", MaxWriteBytes: 5})
	if errdefs.CodeOf(err) != errdefs.LimitExceeded || errdefs.LimitOf(err) != errdefs.LimitFileSize {
		t.Fatalf("write over the cap: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "new/dir/g.txt")); err == nil {
		t.Fatal("a write over the cap left a file")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "new/dir/f.txt")); string(b) != "12345" {
		t.Fatalf("written: %q", b)
	}
	if _, err := run(t, toolspec.FSCall{Op: toolspec.FSWriteFile, Root: ws, Path: "src", Content: "x"}); err == nil {
		t.Fatal("write over a directory accepted")
	}

	// edit_file: exactly once, or refused.
	m, err := run(t, toolspec.FSCall{Op: toolspec.FSEditFile, Root: ws, Path: "README.md", Find: "line two", Replace: "LINE 2"})
	if err != nil || m["replaced"] != float64(1) {
		t.Fatalf("edit: %v %v", m, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "README.md")); string(b) != "line one\nLINE 2\nline three\n" {
		t.Fatalf("edited: %q", b)
	}
	for _, tt := range []struct{ find, want string }{
		{"line", "occurs 2 times"},
		{"absent", "not in the file"},
		{"", "find is empty"},
	} {
		_, err := run(t, toolspec.FSCall{Op: toolspec.FSEditFile, Root: ws, Path: "README.md", Find: tt.find, Replace: "x"})
		if errdefs.CodeOf(err) != errdefs.InvalidArguments || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("edit find %q: %v, want %q", tt.find, err, tt.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "README.md")); string(b) != "line one\nLINE 2\nline three\n" {
		t.Fatalf("a refused edit changed the file: %q", b)
	}
	// The cap holds for the edited file too, at its edge.
	if _, err := run(t, toolspec.FSCall{Op: toolspec.FSEditFile, Root: ws, Path: "new/dir/f.txt", Find: "5", Replace: "6", MaxWriteBytes: 5}); err != nil {
		t.Fatalf("edit at the cap: %v", err)
	}
	if _, err := run(t, toolspec.FSCall{Op: toolspec.FSEditFile, Root: ws, Path: "new/dir/f.txt", Find: "6", Replace: "67", MaxWriteBytes: 5}); errdefs.CodeOf(err) != errdefs.LimitExceeded {
		t.Fatalf("edit over the cap: %v", err)
	}
	// No temporary files are left behind.
	des, _ := os.ReadDir(filepath.Join(ws, "new/dir"))
	if len(des) != 1 {
		t.Fatalf("left in new/dir: %v", des)
	}
}

func TestListGlobSearchDeleteInfo(t *testing.T) {
	ws, _ := setup(t)
	m, err := run(t, toolspec.FSCall{Op: toolspec.FSListFiles, Root: ws, Path: "src"})
	if err != nil || len(m["entries"].([]any)) != 3 {
		t.Fatalf("list src: %v %v", m, err)
	}
	m, err = run(t, toolspec.FSCall{Op: toolspec.FSListFiles, Root: ws, MaxMatches: 2})
	if err != nil || len(m["entries"].([]any)) != 2 || m["truncated"] != true {
		t.Fatalf("list capped: %v %v", m, err)
	}
	m, err = run(t, toolspec.FSCall{Op: toolspec.FSGlob, Root: ws, Pattern: "**/*.go"})
	if err != nil || len(m["entries"].([]any)) != 2 {
		t.Fatalf("glob **/*.go: %v %v", m, err)
	}
	m, err = run(t, toolspec.FSCall{Op: toolspec.FSGlob, Root: ws, Pattern: "*.md"})
	if err != nil || len(m["entries"].([]any)) != 1 {
		t.Fatalf("glob *.md: %v %v", m, err)
	}
	for _, p := range []string{"../*", "/etc/*", "[", ""} {
		if _, err := run(t, toolspec.FSCall{Op: toolspec.FSGlob, Root: ws, Pattern: p}); err == nil {
			t.Errorf("glob %q accepted", p)
		}
	}
	m, err = run(t, toolspec.FSCall{Op: toolspec.FSSearch, Root: ws, Pattern: "TODO: [ab]"})
	if err != nil || len(m["matches"].([]any)) != 2 {
		t.Fatalf("search: %v %v", m, err)
	}
	m, err = run(t, toolspec.FSCall{Op: toolspec.FSSearch, Root: ws, Pattern: "TODO", MaxMatches: 2})
	if err != nil || len(m["matches"].([]any)) != 2 || m["truncated"] != true {
		t.Fatalf("search capped: %v %v", m, err)
	}
	m, err = run(t, toolspec.FSCall{Op: toolspec.FSSearch, Root: ws, Pattern: "TODO"})
	if err != nil || len(m["matches"].([]any)) != 3 || m["skipped"] != float64(1) {
		t.Fatalf("search skips binary files: %v %v", m, err)
	}
	if _, err := run(t, toolspec.FSCall{Op: toolspec.FSSearch, Root: ws, Pattern: "(unclosed"}); errdefs.CodeOf(err) != errdefs.InvalidArguments {
		t.Fatalf("bad regexp: %v", err)
	}
	if _, err := run(t, toolspec.FSCall{Op: toolspec.FSDeleteFile, Root: ws, Path: "src"}); errdefs.CodeOf(err) != errdefs.InvalidArguments {
		t.Fatalf("delete a directory: %v", err)
	}
	if _, err := run(t, toolspec.FSCall{Op: toolspec.FSDeleteFile, Root: ws, Path: "src/pkg/b.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, "src/pkg/b.txt")); err == nil {
		t.Fatal("not deleted")
	}
	m, err = run(t, toolspec.FSCall{Op: toolspec.FSFileInfo, Root: ws, Path: "README.md"})
	if err != nil || m["type"] != "file" || m["size"] != float64(29) {
		t.Fatalf("file_info: %v %v", m, err)
	}
	if _, err := run(t, toolspec.FSCall{Op: "chmod", Root: ws, Path: "README.md"}); errdefs.CodeOf(err) != errdefs.InvalidRequest {
		t.Fatalf("unknown op: %v", err)
	}
}

func TestExecuteOutputCap(t *testing.T) {
	ws, _ := setup(t)
	e := New()
	req := &executors.Request{Kind: executors.KindFS, FS: &toolspec.FSCall{Op: toolspec.FSReadFile, Root: ws, Path: "README.md"}}
	if _, err := e.Execute(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	req.Limits.OutputBytes = 20
	if _, err := e.Execute(context.Background(), req); errdefs.CodeOf(err) != errdefs.LimitExceeded {
		t.Fatalf("over the output cap: %v", err)
	}
}

// FuzzReadPath: whatever path is asked for, nothing outside the workspace
// is read (run fails the test when the host file's text comes back).
func FuzzReadPath(f *testing.F) {
	for _, s := range []string{"README.md", "../outside/secret.txt", "out-link/secret.txt", "src/up/outside/secret.txt", "/etc/passwd", "rel-out", "./././README.md", "src/../../outside/secret.txt", "a\x00b"} {
		f.Add(s)
	}
	ws, _ := setup(f)
	f.Fuzz(func(t *testing.T, p string) {
		for _, op := range []string{toolspec.FSReadFile, toolspec.FSSearch, toolspec.FSFileInfo} {
			_, _ = run(t, toolspec.FSCall{Op: op, Root: ws, Path: p, Pattern: "SECRET"})
		}
	})
}
