package scrub

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
)

// TestKnownOnly: a known-values-only scrubber finds the values in every
// form the full scrubber knows them in, and nothing a rule would find.
func TestKnownOnly(t *testing.T) {
	const v = "kv-Tq9Lm2Xz7Rb4Wn8Pc1"
	s := KnownOnly(map[string]string{"k": v})
	for _, tt := range []struct {
		name, text string
		carries    bool
	}{
		{"raw", "x " + v + " y", true},
		{"upper", strings.ToUpper(v), true},
		{"base64", base64.StdEncoding.EncodeToString([]byte(v)), true},
		{"hex", hex.EncodeToString([]byte(v)), true},
		{"query", url.QueryEscape(v), true},
		{"json escape", `{"a":"` + strings.ReplaceAll(v, "-", `\u002d`) + `"}`, true},
		{"folded", v[:9] + "\n" + v[9:], true},
		{"in a url", "https://h.example/p?q=" + v, true},
		// A rule's match, not a known value: kept.
		{"aws key", "AKIAIOSFODNN7EXAMPLQ", false},
		{"password", "password=hunter2hunter2", false},
		{"github token", "ghp_" + strings.Repeat("aB3", 12), false},
		{"plain", "select * from notes where id = 4", false},
		{"part", v[:5], false},
		{"empty", "", false},
		{"marker", "[REDACTED:secret:k]", false},
	} {
		if got := s.Scrub(tt.text) != tt.text; got != tt.carries {
			t.Errorf("%s: %q carries the value: %v, want %v (%q)", tt.name, tt.text, got, tt.carries, s.Scrub(tt.text))
		}
	}
	if none := KnownOnly(nil); none.Scrub(v) != v {
		t.Error("KnownOnly(nil) redacted something")
	}
}

// FuzzKnownOnly: whatever surrounds it, a known value's raw form never
// survives, and the scrubber is idempotent.
func FuzzKnownOnly(f *testing.F) {
	const v = "kv-Tq9Lm2Xz7Rb4Wn8Pc1"
	s := KnownOnly(map[string]string{"k": v})
	for _, seed := range []string{"", "plain text", v, "a" + v + "b", "%6B%76" + v, `\u006bv-`, "[REDACTED:x]"} {
		f.Add(seed, 0)
	}
	f.Fuzz(func(t *testing.T, text string, at int) {
		if len(text) > 4096 {
			return
		}
		at = min(max(at, 0), len(text))
		in := text[:at] + v + text[at:]
		out := s.Scrub(in)
		if strings.Contains(strings.ToLower(out), strings.ToLower(v)) {
			t.Fatalf("the value survived: %q → %q", in, out)
		}
		if again := s.Scrub(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", in, out, again)
		}
	})
}

// TestForgedMarker: only a marker the scrubber writes shields what it
// holds. "[REDACTED:" + a secret + "]" written by a tool is a secret
// like any, known value or rule match; real markers stay as they are.
func TestForgedMarker(t *testing.T) {
	const v = "kv-Tq9Lm2Xz7Rb4Wn8Pc1"
	s, err := New(map[string]string{"k": v}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		"x [REDACTED:" + v + "] y",
		"[REDACTED:0" + v + "]",
		"[REDACTED:secret:" + v + "]",
		"[REDACTED:aws:AKIAIOSFODNN7EXAMPLQ]",
		"Cookie: session=[REDACTED:" + v + "]",
	} {
		out := s.Scrub(in)
		if strings.Contains(out, v) || strings.Contains(out, "AKIAIOSFODNN7EXAMPLQ") {
			t.Errorf("%q → %q: the secret hid in a forged marker", in, out)
		}
		if again := s.Scrub(out); again != out {
			t.Errorf("%q → %q → %q: not idempotent", in, out, again)
		}
	}
	for _, in := range []string{"[REDACTED:secret:k]", "[REDACTED:cookie]", "a [REDACTED:private-key] b"} {
		if out := s.Scrub(in); out != in {
			t.Errorf("a real marker changed: %q → %q", in, out)
		}
	}
}
