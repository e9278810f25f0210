package termsafe

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// attacks are agent-written texts that a terminal would obey rather than
// show: each must come out of Line with no unsafe character left.
var attacks = []struct{ name, in, line string }{
	{"CSI color", "\x1b[31mred\x1b[0m", `\u001b[31mred\u001b[0m`},
	{"CSI erase line", "harmless\x1b[2K\x1b[1Gdanger", `harmless\u001b[2K\u001b[1Gdanger`},
	{"OSC title", "\x1b]0;owned\x07", `\u001b]0;owned\u0007`},
	{"OSC 8 link", "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", `\u001b]8;;https://evil.example/\u001b\click\u001b]8;;\u001b\`},
	{"C1 CSI", "a\u009b31mb", `a\u009b31mb`},
	{"C1 OSC", "\u009d0;t\u009c", `\u009d0;t\u009c`},
	{"bare CR", "js\rshell", `js\rshell`},
	{"backspace", "shell\b\b\b\b\bjs   ", `shell\b\b\b\b\bjs   `},
	{"RLO", "tool\u202egnp.exe", `tool\u202egnp.exe`},
	{"LRE PDF", "\u202aa\u202c", `\u202aa\u202c`},
	{"isolates", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},
	{"zero width", "p\u200ba\u200cy\u200d\u2060\ufeff", `p\u200ba\u200cy\u200d\u2060\ufeff`},
	{"newline forges a row", "ok\nrm_all   js   active", `ok\nrm_all   js   active`},
	{"tab shifts a column", "a\tb", `a\tb`},
	{"DEL", "a\x7fb", `a\u007fb`},
	{"NUL", "a\x00b", `a\u0000b`},
	{"line separator", "a\u2028b\u2029c", `a\u2028b\u2029c`},
	{"tag characters", "hi\U000e0041\U000e0042", `hi\udb40\udc41\udb40\udc42`},
	{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
	{"soft hyphen", "pay\u00adpal", `pay\u00adpal`},
	{"ALM and LRM", "\u061c\u200e\u200f", `\u061c\u200e\u200f`},
}

// everyday texts pass unchanged.
var everyday = []string{
	"", "Look up DNS records for a domain", "Network", "git log --oneline -5",
	"café naïve façade", "日本語のテキスト", "emoji 🙂 ok", "path C:\\Users\\ada", `quote "x" and 'y'`,
	"a < b && c > d", "100% done", "[REDACTED:secret:api_key]", "mixed עברית text", "€ £ ¥",
}

func TestLine(t *testing.T) {
	for _, tt := range attacks {
		got := Line(tt.in)
		if got != tt.line {
			t.Errorf("%s: Line(%q) = %q, want %q", tt.name, tt.in, got, tt.line)
		}
		if Needs(got) || !Needs(tt.in) {
			t.Errorf("%s: Needs(in)=%v Needs(out)=%v", tt.name, Needs(tt.in), Needs(got))
		}
	}
	for _, s := range everyday {
		if got := Line(s); got != s || Needs(s) {
			t.Errorf("everyday %q changed: %q", s, got)
		}
	}
}

func TestText(t *testing.T) {
	if got, want := Text("line 1\n\tline 2\r\n\x1b[2J"), "line 1\n\tline 2\\r\n\\u001b[2J"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}

func TestJSON(t *testing.T) {
	for _, tt := range attacks {
		v := map[string]string{"k" + tt.in: tt.in}
		raw, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got := JSON(raw)
		if !utf8.Valid(got) || (utf8.Valid([]byte(tt.in)) && !json.Valid(got)) {
			t.Fatalf("%s: not JSON: %s", tt.name, got)
		}
		for _, r := range string(got) {
			if r != '\n' && Unsafe(r) {
				t.Errorf("%s: %q left in %s", tt.name, r, got)
			}
		}
		if !utf8.ValidString(tt.in) {
			continue
		}
		var back map[string]string
		if err := json.Unmarshal(got, &back); err != nil || back["k"+tt.in] != tt.in {
			t.Errorf("%s: JSON changed the value: %s → %v %v", tt.name, got, back, err)
		}
	}
	plain := []byte("{\n  \"a\": \"café\"\n}")
	if got := JSON(plain); string(got) != string(plain) {
		t.Errorf("plain JSON changed: %s", got)
	}
}

// FuzzLine: whatever goes in, Line's output holds no unsafe character,
// is valid UTF-8, leaves safe text alone and is idempotent; Text's holds
// none but tab and newline; Chat's no markup; Writer's is Text's however
// the text is cut; JSON keeps a JSON string's value.
func FuzzLine(f *testing.F) {
	for _, tt := range attacks {
		f.Add(tt.in)
	}
	for _, s := range everyday {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := Line(s)
		if !utf8.ValidString(l) {
			t.Fatalf("Line(%q) = %q: not UTF-8", s, l)
		}
		for _, r := range l {
			if Unsafe(r) {
				t.Fatalf("Line(%q) = %q holds %U", s, l, r)
			}
		}
		if Line(l) != l {
			t.Fatalf("Line not idempotent on %q", s)
		}
		if !Needs(s) && l != s {
			t.Fatalf("Line changed safe %q to %q", s, l)
		}
		for _, r := range Text(s) {
			if Unsafe(r) && r != '\n' && r != '\t' {
				t.Fatalf("Text(%q) holds %U", s, r)
			}
		}
		c := Chat(s)
		if strings.ContainsAny(c, "<>") || strings.ContainsFunc(c, Unsafe) {
			t.Fatalf("Chat(%q) = %q", s, c)
		}
		var sb strings.Builder
		w := NewWriter(&sb)
		w.Write([]byte(s[:len(s)/2]))
		w.Write([]byte(s[len(s)/2:]))
		w.Flush()
		if utf8.ValidString(s) && sb.String() != Text(s) {
			t.Fatalf("Writer in two pieces: %q, want %q", sb.String(), Text(s))
		}
		if !utf8.ValidString(s) {
			return
		}
		raw, _ := json.Marshal(s)
		j := JSON(raw)
		var back string
		if err := json.Unmarshal(j, &back); err != nil || back != s {
			t.Fatalf("JSON(%s) = %s: %q %v", raw, j, back, err)
		}
		if strings.ContainsFunc(string(j), Unsafe) {
			t.Fatalf("JSON(%s) = %s holds an unsafe character", raw, j)
		}
	})
}

// TestChat: chat markup in agent text is shown, not obeyed.
func TestChat(t *testing.T) {
	for in, want := range map[string]string{
		"<!channel> deploy":             "&lt;!channel&gt; deploy",
		"<@U024BE7LH> look":             "&lt;\\@U024BE7LH&gt; look",
		"<https://evil.example|docs>":   "&lt;https://evil.example\\|docs&gt;",
		"@everyone @here":               "\\@everyone \\@here",
		"[click](https://evil.example)": "\\[click\\]\\(https://evil.example\\)",
		"**bold** _it_ ~x~ `code` # h":  "\\*\\*bold\\*\\* \\_it\\_ \\~x\\~ \\`code\\` \\# h",
		"a\nb \u202e":                   `a\\nb \\u202e`, // Line's escapes, their backslash escaped
		"plain words, 3 of them":        "plain words, 3 of them",
	} {
		if got := Chat(in); got != want {
			t.Errorf("Chat(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriter: text written in pieces comes out as Text of the whole, a
// character split between writes included.
func TestWriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	in := "ok é \u202e\x1b[31m 日本 🙂 end\n"
	for i := 0; i < len(in); i++ {
		if _, err := w.Write([]byte(in[i : i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), Text(in); got != want {
		t.Errorf("byte by byte: %q, want %q", got, want)
	}
	b.Reset()
	w.Write([]byte("cut \xe6\x97"))
	w.Flush()
	if got := b.String(); got != `cut \xe6\x97` {
		t.Errorf("a cut character at the end: %q", got)
	}
}
