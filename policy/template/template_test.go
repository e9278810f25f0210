package template

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/policy/shellsyntax"
)

func TestParseTemplateGood(t *testing.T) {
	tests := []struct {
		src     string
		vars    []string
		secrets []string
	}{
		{"", nil, nil},
		{"no placeholders at all", nil, nil},
		{"{{.name}}", []string{"name"}, nil},
		{"{{name}}", []string{"name"}, nil},
		{"{{ .name }}", []string{"name"}, nil},
		{"{{ name }}", []string{"name"}, nil},
		{"{{\t.name\t}}", []string{"name"}, nil},
		{"{{_}}", []string{"_"}, nil},
		{"{{A9_b}}", []string{"A9_b"}, nil},
		{"{{secret.API_KEY}}", nil, []string{"API_KEY"}},
		{"{{ secret.k }}", nil, []string{"k"}},
		{"{{secret}}", []string{"secret"}, nil}, // a plain argument named secret
		{"{{a}}{{b}}{{a}}", []string{"a", "b"}, nil},
		{"x {{b}} y {{secret.s}} {{a}} {{secret.s}} {{b}}", []string{"b", "a"}, []string{"s"}},
		{"}} stray closers }} are text", nil, nil},
		{"{{a}}}", []string{"a"}, nil},
		{`{"json": {"nested": 1}}`, nil, nil},
		{"unicode é {{x}} ü", []string{"x"}, nil},
	}
	for _, tt := range tests {
		tpl, err := Parse(tt.src)
		if err != nil {
			t.Errorf("ParseTemplate(%q): %v", tt.src, err)
			continue
		}
		if got := tpl.Vars(); !reflect.DeepEqual(got, tt.vars) {
			t.Errorf("ParseTemplate(%q).Vars() = %q, want %q", tt.src, got, tt.vars)
		}
		if got := tpl.Secrets(); !reflect.DeepEqual(got, tt.secrets) {
			t.Errorf("ParseTemplate(%q).Secrets() = %q, want %q", tt.src, got, tt.secrets)
		}
		if tpl.String() != tt.src {
			t.Errorf("String() = %q, want %q", tpl.String(), tt.src)
		}
	}
}

func TestParseTemplateBad(t *testing.T) {
	tests := []struct {
		src       string
		line, col int
		msg       string
	}{
		{"{{", 1, 1, "not closed"},
		{"abc {{name", 1, 5, "not closed"},
		{"a\nb {{x}} {{", 2, 9, "not closed"},
		{"{{}}", 1, 1, "bad placeholder"},
		{"{{ }}", 1, 1, "bad placeholder"},
		{"{{.}}", 1, 1, "bad placeholder"},
		{"{{..x}}", 1, 1, "bad placeholder"},
		{"x {{1abc}}", 1, 3, "bad placeholder"},
		{"{{a-b}}", 1, 1, "bad placeholder"},
		{"{{a b}}", 1, 1, "bad placeholder"},
		{"{{. a}}", 1, 1, "bad placeholder"},
		{"{{a.b}}", 1, 1, "bad placeholder"},
		{"{{.secret.x}}", 1, 1, "bad placeholder"},
		{"{{secret.}}", 1, 1, "bad placeholder"},
		{"{{secret.a.b}}", 1, 1, "bad placeholder"},
		{"{{secret. a}}", 1, 1, "bad placeholder"},
		{"{{Secret.a}}", 1, 1, "bad placeholder"},
		{"{{{x}}}", 1, 1, "bad placeholder"},
		{"{{ {{x}} }}", 1, 1, "bad placeholder"},
		{"{{x|upper}}", 1, 1, "bad placeholder"},
		{"{{x()}}", 1, 1, "bad placeholder"},
		{"{{$x}}", 1, 1, "bad placeholder"},
		{"{{\n.x}}", 1, 1, "bad placeholder"},
		{"{{ü}}", 1, 1, "bad placeholder"},
		{"{{ .ü_x }}", 1, 1, "bad placeholder"},
		{"line1\nline2\n  é {{bad name}}", 3, 5, "bad placeholder"},
		{"{{x}} ok then {{", 1, 15, "not closed"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.src)
		var te *Error
		if !errors.As(err, &te) {
			t.Errorf("ParseTemplate(%q) = %v, want a *TemplateError", tt.src, err)
			continue
		}
		if te.Line != tt.line || te.Column != tt.col || !strings.Contains(te.Msg, tt.msg) {
			t.Errorf("ParseTemplate(%q) = line %d col %d %q, want line %d col %d containing %q", tt.src, te.Line, te.Column, te.Msg, tt.line, tt.col, tt.msg)
		}
		if !strings.Contains(err.Error(), "line ") || !strings.Contains(err.Error(), "column ") {
			t.Errorf("error %q does not name the position", err)
		}
	}
}

func TestParseTemplateTooLarge(t *testing.T) {
	if _, err := Parse(strings.Repeat("a", MaxBytes+1)); err == nil {
		t.Fatal("an oversized template was accepted")
	}
}

func TestTemplatePlaceholders(t *testing.T) {
	tpl, err := Parse("a {{ .x }} b {{secret.k}}")
	if err != nil {
		t.Fatal(err)
	}
	want := []Placeholder{{Name: "x", Offset: 2, End: 10}, {Name: "k", Secret: true, Offset: 13, End: 25}}
	if got := tpl.Placeholders(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Placeholders() = %+v, want %+v", got, want)
	}
}

func TestRenderSinglePass(t *testing.T) {
	tpl, err := Parse("{{a}} and {{b}}")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tpl.Render(map[string]any{"a": "{{.b}}", "b": "{{secret.token}}"}, RenderOptions{
		Secrets: func(string) (string, error) { t.Fatal("a secret was looked up for a value"); return "", nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "{{.b}} and {{secret.token}}"; got != want {
		t.Fatalf("Render = %q, want %q (values must never be expanded again)", got, want)
	}
}

func TestRenderOptions(t *testing.T) {
	tpl, err := Parse("[{{a}}|{{b}}]")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Render(map[string]any{"a": "x"}, RenderOptions{})
	var me *MissingArgumentError
	if !errors.As(err, &me) || me.Name != "b" || err.Error() != `missing argument "b"` {
		t.Fatalf("missing b: %v", err)
	}
	_, err = tpl.Render(map[string]any{"a": "x", "b": nil}, RenderOptions{})
	if !errors.As(err, &me) {
		t.Fatalf("a JSON null must count as missing, got %v", err)
	}
	got, err := tpl.Render(map[string]any{"a": "x"}, RenderOptions{AllowMissing: true})
	if err != nil || got != "[x|]" {
		t.Fatalf("AllowMissing: %q, %v", got, err)
	}
	got, err = tpl.Render(map[string]any{"a": "x y", "b": "&"}, RenderOptions{Escape: func(s string) (string, error) {
		return strings.ToUpper(s) + "!", nil
	}})
	if err != nil || got != "[X Y!|&!]" {
		t.Fatalf("Escape applies to values only: %q, %v", got, err)
	}
	boom := errors.New("boom")
	_, err = tpl.Render(map[string]any{"a": "x", "b": "y"}, RenderOptions{Escape: func(string) (string, error) { return "", boom }})
	if !errors.Is(err, boom) {
		t.Fatalf("escape error lost: %v", err)
	}
}

func TestRenderSecrets(t *testing.T) {
	tpl, err := Parse("k={{secret.key}} again={{secret.key}} v={{v}}")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Render(map[string]any{"v": 1}, RenderOptions{})
	if !errors.Is(err, ErrSecretsUnavailable) || err.Error() != "secrets are not available" {
		t.Fatalf("nil lookup: %v", err)
	}
	calls := 0
	got, err := tpl.Render(map[string]any{"v": 1, "key": "not the secret"}, RenderOptions{Secrets: func(name string) (string, error) {
		calls++
		return "s3cr3t-" + name, nil
	}})
	if err != nil || got != "k=s3cr3t-key again=s3cr3t-key v=1" {
		t.Fatalf("Render = %q, %v", got, err)
	}
	if calls != 1 {
		t.Fatalf("secret looked up %d times, want once per render", calls)
	}
	denied := errors.New("denied")
	_, err = tpl.Render(map[string]any{"v": 1}, RenderOptions{Secrets: func(string) (string, error) { return "", denied }})
	if !errors.Is(err, denied) {
		t.Fatalf("lookup error lost: %v", err)
	}
}

func TestValueText(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{"plain", "plain"},
		{"", ""},
		{true, "true"},
		{false, "false"},
		{float64(3), "3"},
		{float64(-2.5), "-2.5"},
		{float64(1e21), "1000000000000000000000"},
		{float64(1e20), "100000000000000000000"},
		{float64(0.000001), "0.000001"},
		{float64(1e-7), "0.0000001"},
		{math.Copysign(0, -1), "0"},
		{float64(123456789012), "123456789012"},
		{float32(0.1), "0.1"},
		{json.Number("1e5"), "1e5"},
		{json.Number("42"), "42"},
		{42, "42"},
		{int64(-7), "-7"},
		{uint8(200), "200"},
		{[]any{"a", 1.0, true, nil}, `["a",1,true,null]`},
		{map[string]any{"b": 1.0, "a": "<&>"}, `{"a":"<&>","b":1}`},
		{[]string{"x"}, `["x"]`},
	}
	for _, tt := range tests {
		got, err := ValueText(tt.v)
		if err != nil || got != tt.want {
			t.Errorf("ValueText(%#v) = %q, %v; want %q", tt.v, got, err, tt.want)
		}
	}
	for _, bad := range []any{math.NaN(), math.Inf(1), float32(math.Inf(-1)), func() {}, map[bool]int{true: 1}} {
		if got, err := ValueText(bad); err == nil {
			t.Errorf("ValueText(%T) = %q, want an error", bad, got)
		}
	}
}

func TestValueJSON(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{"a\"b<", `"a\"b<"`},
		{float64(1e21), "1000000000000000000000"},
		{float64(2), "2"},
		{json.Number("1.5e3"), "1.5e3"},
		{nil, "null"},
		{[]any{1.0}, "[1]"},
	}
	for _, tt := range tests {
		got, err := ValueJSON(tt.v)
		if err != nil || string(got) != tt.want {
			t.Errorf("ValueJSON(%#v) = %s, %v; want %s", tt.v, got, err, tt.want)
		}
	}
	if _, err := ValueJSON(json.Number("1; rm")); err == nil {
		t.Error("ValueJSON accepted an invalid json.Number")
	}
}

func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{
		"", "{{x}}", "{{.x}}", "{{ .x }}", "{{secret.k}}", "{{", "}}", "{{{x}}}", "a{{b}}c{{secret.d}}e",
		"{{x", "{{.}}", "{{ secret.a }}{{a}}", "é{{ü}}", "{{a}}}}{{", "\x00{{a}}\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, err := Parse(s)
		if err != nil {
			var te *Error
			if !errors.As(err, &te) || te.Offset < 0 || te.Offset > len(s) || te.Line < 1 || te.Column < 1 {
				t.Fatalf("bad error for %q: %#v", s, err)
			}
			return
		}
		// The parts spell the source exactly.
		var b strings.Builder
		for _, p := range tpl.parts {
			if p.ph < 0 {
				b.WriteString(p.lit)
				continue
			}
			ph := tpl.phs[p.ph]
			if ph.Offset < 0 || ph.End > len(s) || ph.Offset >= ph.End {
				t.Fatalf("bad placeholder span %+v in %q", ph, s)
			}
			b.WriteString(s[ph.Offset:ph.End])
		}
		if b.String() != s {
			t.Fatalf("parts spell %q, want %q", b.String(), s)
		}
		// Literal text never holds a placeholder opener.
		for _, p := range tpl.parts {
			if p.ph < 0 && strings.Contains(p.lit, "{{") {
				t.Fatalf("literal %q holds {{ in %q", p.lit, s)
			}
		}
		// Names are unique and valid.
		seen := map[string]bool{}
		for _, v := range tpl.Vars() {
			if seen[v] || !shellsyntax.IsName(v) {
				t.Fatalf("Vars() = %q", tpl.Vars())
			}
			seen[v] = true
		}
		// Rendering is a single pass: values holding placeholders stay
		// literal, so rendering with each value "{{<name>}}" gives the
		// source back with every placeholder in canonical form.
		args := map[string]any{}
		for _, v := range tpl.Vars() {
			args[v] = "{{" + v + "}}"
		}
		got, err := tpl.Render(args, RenderOptions{Secrets: func(n string) (string, error) { return "{{secret." + n + "}}", nil }})
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(got)
		if err != nil {
			t.Fatalf("canonical form %q does not parse: %v", got, err)
		}
		if !reflect.DeepEqual(again.Vars(), tpl.Vars()) || !reflect.DeepEqual(again.Secrets(), tpl.Secrets()) {
			t.Fatalf("canonical form %q changed the names", got)
		}
	})
}
