package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Whatever a token file holds, reading it gives a well-formed token or an
// error, never a panic, and never more than the token.
func FuzzReadTokenFile(f *testing.F) {
	good := "tcw_" + strings.Repeat("a2", 26)
	for _, s := range []string{good, good + "\n", "  " + good + "  \n", good + "x", "tcw_", "", "\x00", good + "\n" + good, strings.Repeat("z", 5000)} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		p := filepath.Join(dir, "t.token")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		tok, err := readTokenFile(p)
		if err != nil {
			return
		}
		if !tokenRE.MatchString(tok) || strings.TrimSpace(content) != tok {
			t.Fatalf("accepted %q as %q", content, tok)
		}
	})
}

// A token file written by worker add or rotate is 0600, replaced whole,
// and reads back; its directory is made 0700.
func TestWriteTokenFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	p := filepath.Join(dir, "w.token")
	tok := "tcw_" + strings.Repeat("b", 52)
	for range 2 { // the second write replaces the first
		if err := writeTokenFile(p, tok); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode: %v %v", st, err)
	}
	if dst, _ := os.Stat(dir); dst.Mode().Perm() != 0o700 {
		t.Fatalf("token dir mode %v", dst.Mode())
	}
	if got, err := readTokenFile(p); err != nil || got != tok {
		t.Fatalf("read back %q %v", got, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}
