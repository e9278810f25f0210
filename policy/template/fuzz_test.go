package template

import (
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRenderShell checks, for any template that compiles and any value:
//
//   - in argv mode, the number of argv elements does not depend on the
//     values, and every element is its word with each value inserted
//     verbatim (so a whole-word placeholder is exactly one element);
//   - in shell mode, the command is the template with each placeholder
//     replaced by the value as one single-quoted word, which unquotes back
//     to the value;
//   - printf '%s\n' {{x}} | cat renders so that the printf operand is
//     exactly the value (what sh would print).
func FuzzRenderShell(f *testing.F) {
	for _, s := range []struct{ cmd, v string }{
		{"echo {{x}}", "a b"},
		{"ls -la {{x}} | wc -l", "'; touch x; '"},
		{"echo pre{{x}}post {{y}}", "$(id)"},
		{`printf '%s\n' {{x}} > out`, "\n"},
		{"grep -e {{x}} -- {{y}}", "-v"},
		{"cat <<EOF; echo {{x}}\nbody\nEOF", "EOF"},
		{`echo "{{x}}"`, "x"},
		{"X={{x}} env", "`id`"},
		{"echo {{secret.k}} {{x}}", "\\"},
		{"a{{x}}b'c'\"d\"\\ e {{y}}{{x}}", "'\"'"},
		// Operand forms and verbs (issue 22).
		{"dig +short {{x}}", "a.example"},
		{"rsync -a -- {{x}} dst/", "./host:path"},
		{"ps -o {{x}} {{y}}", "1"},
		{"docker exec {{x}} ls -- {{y}}", "-u"},
		{"kubectl exec -n {{x}} pod -- ls {{y}}", "+x"},
	} {
		f.Add(s.cmd, s.v)
	}
	f.Fuzz(func(t *testing.T, cmd, v string) {
		if strings.IndexByte(v, 0) >= 0 {
			return
		}
		// The printf property, for every value.
		r, err := RenderShell(`printf '%s\n' {{x}} | cat`, map[string]any{"x": v}, ShellOptions{AllowDash: map[string]bool{"x": true}})
		if err != nil {
			t.Fatalf("printf template: %v", err)
		}
		words, err := testUnquote(strings.TrimSuffix(r.Command, " | cat"))
		if err != nil || len(words) != 3 || words[2] != v {
			t.Fatalf("printf operand for %q: %q, %v (command %q)", v, words, err, r.Command)
		}

		c, err := CompileShell(cmd)
		if err != nil {
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("CompileShell(%q) error is %T", cmd, err)
			}
			return
		}
		if strings.ContainsAny(cmd, "\uF8F0\uF8F1\uF8F2\uF8F3") {
			return
		}
		all := map[string]bool{}
		args, markers := map[string]any{}, map[string]any{}
		for i, name := range c.t.Vars() {
			args[name] = v
			// Distinct open and close runes: no marker can be read across
			// the end of one and the start of the next.
			markers[name] = "\uF8F0" + strconv.Itoa(i) + "\uF8F1"
			all[name] = true
		}
		secret := func(string) (string, error) { return v, nil }
		marker := func(n string) (string, error) { return "\uF8F2s" + n + "\uF8F3", nil }
		r, err = c.Render(args, ShellOptions{AllowDash: all, Secrets: secret})
		var ae *ArgumentError
		if errors.As(err, &ae) {
			// A value refused where it starts a word (curl's @file,
			// dig's @server, rsync's host:path): the properties are
			// about what renders.
			return
		}
		if err != nil {
			t.Fatalf("Render(%q, %q): %v", cmd, v, err)
		}
		m, err := c.Render(markers, ShellOptions{AllowDash: all, Secrets: marker})
		if err != nil {
			t.Fatalf("Render(%q, markers): %v", cmd, err)
		}
		replace := func(s string, quote bool) string {
			for _, name := range c.t.Vars() {
				mk, val := markers[name].(string), v
				if quote {
					mk, val = ShellQuote(mk), ShellQuote(val)
				}
				s = strings.ReplaceAll(s, mk, val)
			}
			for _, name := range c.t.Secrets() {
				mk, _ := marker(name)
				val := v
				if quote {
					mk, val = ShellQuote(mk), ShellQuote(val)
				}
				s = strings.ReplaceAll(s, mk, val)
			}
			return s
		}
		switch r.Mode {
		case ShellModeArgv:
			if len(r.Argv) != len(m.Argv) || len(r.Argv) == 0 {
				t.Fatalf("argv arity depends on values: %q vs %q", r.Argv, m.Argv)
			}
			for i := range r.Argv {
				if want := replace(m.Argv[i], false); r.Argv[i] != want {
					t.Fatalf("argv[%d] = %q, want %q (template %q)", i, r.Argv[i], want, cmd)
				}
			}
			// Every placeholder lands in some element.
			joined := strings.Join(m.Argv, "\x00")
			for _, name := range c.t.Vars() {
				if !strings.Contains(joined, markers[name].(string)) {
					t.Fatalf("argument %q lost from argv %q", name, m.Argv)
				}
			}
		case ShellModeShell:
			if want := replace(m.Command, true); r.Command != want {
				t.Fatalf("command %q, want %q", r.Command, want)
			}
		default:
			t.Fatalf("mode %q", r.Mode)
		}
	})
}

// FuzzRenderHTTP checks that rendering never panics and never moves the
// call: the rendered URL parses, with the template's scheme and host.
func FuzzRenderHTTP(f *testing.F) {
	for _, s := range []struct{ u, v string }{
		{"https://api.example.com/v1/{{x}}?q={{y}}", "a/../b"},
		{"https://api.example.com/{{x}}", "@evil.com"},
		{"http://h.example:8080/a/{{x}}/b?x={{x}}&y=1#f", "..%2f"},
		{"https://{{x}}/", "evil.com"},
		{"https://u@api.example.com/{{x}}", "\r\n"},
		{"https://api.example.com{{x}}", "/.evil.com"},
	} {
		f.Add(s.u, s.v)
	}
	f.Fuzz(func(t *testing.T, rawURL, v string) {
		args := map[string]any{}
		// The fixed template with every kind of place.
		fixed := HTTPSpec{
			Method:  "POST",
			URL:     "https://api.example.com/a/{{x}}/b?q={{x}}",
			Headers: map[string]string{"X-V": "{{x}}"},
			Body:    `{"v": {{x}}, "s": "<{{x}}>"}`,
		}
		r, err := RenderHTTP(fixed, map[string]any{"x": v}, nil)
		if err == nil {
			u, perr := url.Parse(r.URL)
			if perr != nil || u.Host != "api.example.com" || u.Scheme != "https" || u.Query().Get("q") != v {
				t.Fatalf("fixed template, value %q: URL %q (%v)", v, r.URL, perr)
			}
			if segs := strings.Split(u.EscapedPath(), "/"); len(segs) != 4 {
				t.Fatalf("value %q changed the path shape: %q", v, u.EscapedPath())
			}
			var body struct{ V, S string }
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatalf("value %q: body %s: %v", v, r.Body, err)
			}
			if utf8.ValidString(v) && (body.V != v || body.S != "<"+v+">") {
				t.Fatalf("value %q: body %s", v, r.Body)
			}
			if strings.ContainsAny(r.Headers["X-V"], "\r\n\x00") {
				t.Fatalf("header %q", r.Headers["X-V"])
			}
		}

		spec := HTTPSpec{Method: "GET", URL: rawURL, Params: map[string]string{"p": "{{x}}"}}
		c, err := CompileHTTP(spec)
		if err != nil {
			return
		}
		for _, name := range c.Vars() {
			args[name] = v
		}
		r, err = c.Render(args, func(string) (string, error) { return v, nil })
		if err != nil {
			return
		}
		u, err := url.Parse(r.URL)
		if err != nil {
			t.Fatalf("rendered URL %q does not parse: %v", r.URL, err)
		}
		if u.Host != c.url.base.Host || u.Scheme != c.url.base.Scheme {
			t.Fatalf("template %q, value %q: host %q, want %q", rawURL, v, u.Host, c.url.base.Host)
		}
	})
}
