package filediff

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestUnified(t *testing.T) {
	f := func(s string) File { return File{Data: []byte(s), Exists: true} }
	none := File{}
	for _, tt := range []struct {
		name     string
		old, new File
		want     string
	}{
		{"edit", f("a\nb\nc\n"), f("a\nB\nc\n"),
			"edit x.txt: +1 -1 lines\n--- a/x.txt\n+++ b/x.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"append", f("a\n"), f("a\nb\n"),
			"edit x.txt: +1 -0 lines\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1,2 @@\n a\n+b\n"},
		{"no final newline", f("a\nb"), f("a\nc"),
			"edit x.txt: +1 -1 lines\n--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"new file", none, f("hi\n"), "new file x.txt, 3 bytes\n--- /dev/null\n+++ b/x.txt\n@@ -0,0 +1 @@\n+hi\n"},
		{"new empty file", none, f(""), "new file x.txt, 0 bytes\n--- /dev/null\n+++ b/x.txt\n"},
		{"delete", f("a\nb\n"), none, "delete x.txt, 4 bytes\n--- a/x.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"same", f("a\n"), f("a\n"), "no change to x.txt (2 bytes)"},
		{"nothing", none, none, "no file x.txt, and none written"},
		{"binary", f("a\x00b"), f("a\x00c"), "edit x.txt: binary file, 3 bytes → 3 bytes; not shown"},
		{"not utf-8", f("a\n"), f("\xff\xfe\n"), "edit x.txt: binary file, 2 bytes → 3 bytes; not shown"},
		{"new binary", none, f("\x00"), "new file x.txt, 1 byte: binary file, 0 bytes → 1 byte; not shown"},
		{"over the cap", f(strings.Repeat("a", MaxInput+1)), f("b"),
			"edit x.txt, 262145 bytes → 1 byte; over the diff cap of 262144 bytes, not shown"},
		{"at the cap", f(strings.Repeat("a", MaxInput)), f("b"), ""},
		{"too many lines", f(strings.Repeat("a\n", MaxLines+1)), f("b"), "edit x.txt; over 20000 lines, not shown"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Unified("x.txt", tt.old, tt.new)
			if tt.want == "" {
				if !strings.HasPrefix(got, "edit x.txt: +1 -1 lines\n") {
					t.Errorf("got %.200q", got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// Far apart changes are separate hunks, each with its context.
func TestUnifiedHunks(t *testing.T) {
	var a, b []string
	for i := range 30 {
		a = append(a, "line "+string(rune('a'+i%26)))
	}
	b = append(b, a...)
	b[2], b[25] = "changed", "also"
	got := Unified("f", File{Data: []byte(strings.Join(a, "\n") + "\n"), Exists: true},
		File{Data: []byte(strings.Join(b, "\n") + "\n"), Exists: true})
	if n := strings.Count(got, "\n@@ "); n != 2 || !strings.Contains(got, "@@ -1,6 +1,6 @@") || !strings.Contains(got, "@@ -23,7 +23,7 @@") {
		t.Errorf("%d hunks:\n%s", n, got)
	}
}

// The output is capped at a line, and says so.
func TestUnifiedOutputCap(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", MaxInput/17)
	got := Unified("f", File{Exists: true, Data: []byte("x\n")}, File{Exists: true, Data: []byte(big)})
	if len(got) > MaxOutput+100 || !strings.HasSuffix(got, "over 65536 bytes\n") {
		t.Errorf("%d bytes, ends %q", len(got), got[len(got)-80:])
	}
	long := strings.Repeat("é", MaxInput/2-1)
	got = Unified("f", File{Exists: true, Data: []byte("x")}, File{Exists: true, Data: []byte(long)})
	if !utf8.ValidString(got) || len(got) > MaxOutput+100 {
		t.Errorf("one long line: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

func FuzzUnified(f *testing.F) {
	f.Add("a\nb\n", "a\nc\n", true, true)
	f.Add("", "x", false, true)
	f.Add("a\x00", "b", true, false)
	f.Fuzz(func(t *testing.T, a, b string, ae, be bool) {
		got := Unified("p", File{Data: []byte(a), Exists: ae}, File{Data: []byte(b), Exists: be})
		if got == "" || len(got) > MaxOutput+200 {
			t.Fatalf("%d bytes", len(got))
		}
		if ae && be && a != b && !binary([]byte(a)) && !binary([]byte(b)) && !strings.Contains(got, "@@") {
			t.Fatalf("a text edit with no hunk: %q", got)
		}
	})
}
