package mcp

import (
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/catalog"
)

// The annotation rule, row by row: kind (and HTTP method) first, then
// each permission widening it.
func TestAnnotations(t *testing.T) {
	const (
		js    = `"kind":"js","js":{"code":"return 1","allowed_domains":["api.example.com"]}`
		shell = `"kind":"shell","shell":{"command":"uptime"}`
	)
	http := func(method string) string {
		return `"kind":"http","http":{"method":"` + method + `","url":"https://api.example.com/x","allowed_domains":["api.example.com"]}`
	}
	tests := []struct {
		block string
		perms string
		// readOnly, destructive, openWorld
		want [3]bool
	}{
		{js, ``, [3]bool{true, false, false}},
		{js, `"secrets"`, [3]bool{true, false, false}},
		{js, `"network"`, [3]bool{false, true, true}}, // fetch can send a DELETE
		{js, `"email"`, [3]bool{false, false, true}},
		{js, `"filesystem"`, [3]bool{false, true, false}},
		{js, `"database"`, [3]bool{false, true, false}},
		{js, `"scheduling"`, [3]bool{false, true, false}},
		{js, `"network","filesystem"`, [3]bool{false, true, true}},
		{shell, ``, [3]bool{false, true, false}},
		{shell, `"shell"`, [3]bool{false, true, false}},
		{shell, `"network"`, [3]bool{false, true, true}},
		{http("GET"), ``, [3]bool{true, false, true}},
		{http("get"), ``, [3]bool{true, false, true}},
		{http("HEAD"), ``, [3]bool{true, false, true}},
		{http("GET"), `"secrets"`, [3]bool{true, false, true}},
		{http("GET"), `"network"`, [3]bool{false, false, true}},
		{http("POST"), ``, [3]bool{false, false, true}},
		{http("PUT"), ``, [3]bool{false, true, true}},
		{http("PATCH"), ``, [3]bool{false, true, true}},
		{http("DELETE"), ``, [3]bool{false, true, true}},
		{http("POST"), `"filesystem"`, [3]bool{false, true, true}},
	}
	for _, tt := range tests {
		src := `{"name":"t","description":"d",` + tt.block + `,"permissions":[` + tt.perms + `]}`
		def, err := catalog.Parse([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		a := Annotations(def)
		got := [3]bool{a.ReadOnlyHint, *a.DestructiveHint, *a.OpenWorldHint}
		if got != tt.want {
			t.Errorf("%s\n  readOnly/destructive/openWorld = %v, want %v", src, got, tt.want)
		}
		if a.IdempotentHint {
			t.Errorf("%s: idempotentHint set", src)
		}
		if a.ReadOnlyHint && *a.DestructiveHint {
			t.Errorf("%s: read-only and destructive at once", src)
		}
	}
}

// A block whose kind does not tell its effects, or a permission the rule
// does not know, counts as the worst.
func TestAnnotationsUnknownIsWorst(t *testing.T) {
	odd, err := catalog.Parse([]byte(`{"name":"odd","description":"d","kind":"js","js":{"code":"return 1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	odd.Permissions = []string{"teleport"}
	for _, def := range []*catalog.Definition{{Name: "nospec", Kind: "js"}, odd} {
		a := Annotations(def)
		if a.ReadOnlyHint || !*a.DestructiveHint || !*a.OpenWorldHint {
			t.Errorf("%s: %+v, want the worst", def.Name, a)
		}
	}
}

func TestRenderValue(t *testing.T) {
	for in, want := range map[string]string{
		`"plain text"`: "plain text", `"a\nb"`: "a\nb", `5`: "5", `null`: "null",
		`{ "a" : [1, 2] }`: `{"a":[1,2]}`, `true`: "true", `not json`: "not json",
	} {
		if got := renderValue([]byte(in)); got != want {
			t.Errorf("renderValue(%s) = %q, want %q", in, got, want)
		}
	}
}

// Whatever a tool returns, the text rendering is made without a panic, a
// string comes out as itself, and JSON comes out compact.
func FuzzRenderValue(f *testing.F) {
	for _, s := range []string{`"x"`, `1`, `{"a":1}`, `[1, "two", null]`, `"\u00e9\ud83d\ude00"`, `{`, ``, `"unterminated`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := renderValue([]byte(in))
		var s string
		if err := jsonUnmarshalString(in, &s); err == nil && strings.HasPrefix(strings.TrimSpace(in), `"`) && out != s {
			t.Fatalf("string %q rendered %q", s, out)
		}
		if strings.ContainsAny(in, "\n") && !strings.HasPrefix(strings.TrimSpace(in), `"`) && isJSON(in) && strings.Contains(out, "\n") {
			t.Fatalf("JSON %q not compacted: %q", in, out)
		}
	})
}
