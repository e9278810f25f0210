package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func deep(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }

// What a page shows of a value is bounded, at each edge: nested at the
// depth bound it is indented, one deeper it is one line; at the byte
// bound indented, one byte over it is cut, saying so.
func TestShownBounds(t *testing.T) {
	atDepth, overDepth := deep(maxShownDepth), deep(maxShownDepth+1)
	if got := prettyJSON(json.RawMessage(atDepth)); !strings.Contains(got, "\n") {
		t.Errorf("nested %d deep: not indented", maxShownDepth)
	}
	if got := prettyJSON(json.RawMessage(overDepth)); got != overDepth {
		t.Errorf("nested %d deep: %q, want the compact text", maxShownDepth+1, got)
	}
	pad := func(n int) string { return `{"a":"` + strings.Repeat("x", n-8) + `"}` }
	if got := prettyJSON(json.RawMessage(pad(maxShownArgs))); !strings.Contains(got, "\n") {
		t.Errorf("%d bytes: not indented", maxShownArgs)
	}
	over := prettyJSON(json.RawMessage(pad(maxShownArgs + 1)))
	if strings.Contains(over, "\n") || !strings.HasSuffix(over, "(1 more bytes left out here)") {
		t.Errorf("%d bytes: %q", maxShownArgs+1, over[len(over)-60:])
	}
	// The red team's argument: 18 KB nested 9,000 deep.
	attack := strings.Repeat("[", 9000) + strings.Repeat("]", 9000)
	for name, got := range map[string]string{"args": prettyJSON(json.RawMessage(attack)), "definition": definitionYAML(json.RawMessage(attack))} {
		if len(got) > len(attack)+100 {
			t.Errorf("%s: %d bytes shown of an %d-byte value", name, len(got), len(attack))
		}
	}
	// A deep definition is one line, not YAML.
	if got := definitionYAML(json.RawMessage(overDepth)); got != overDepth {
		t.Errorf("deep definition: %q", got)
	}
	if got := definitionYAML(json.RawMessage(`{"name":"t","kind":"js"}`)); got != "kind: js\nname: t\n" {
		t.Errorf("ordinary definition: %q", got)
	}
}

// FuzzShown: whatever an agent wrote, what a page shows of it is at most
// a small multiple of the bound, and a cut never splits a rune.
func FuzzShown(f *testing.F) {
	for _, s := range []string{`{}`, deep(30), `{"a":"é"}`, strings.Repeat("[", 100), `"\u00e9"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, bound := range []int{16, maxShownArgs} {
			got := indented([]byte(s), bound)
			if len(got) > 2*(maxShownDepth+1)*bound+100 {
				t.Fatalf("%d bytes shown of %d (bound %d)", len(got), len(s), bound)
			}
			if utf8.ValidString(s) && !utf8.ValidString(got) {
				t.Fatalf("a cut split a rune: %q", got)
			}
		}
	})
}
