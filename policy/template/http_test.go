package template

import (
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func testSecrets(name string) (string, error) { return "s-" + name, nil }

func TestRenderHTTPPathEscaping(t *testing.T) {
	tests := []struct {
		value any
		want  string
	}{
		{"Tokyo", "https://api.example.com/v1/Tokyo/forecast"},
		{"São Paulo", "https://api.example.com/v1/S%C3%A3o%20Paulo/forecast"},
		{"a/b", "https://api.example.com/v1/a%2Fb/forecast"},
		{`a\b`, "https://api.example.com/v1/a%5Cb/forecast"},
		{"a?b#c", "https://api.example.com/v1/a%3Fb%23c/forecast"},
		{"a;b,c", "https://api.example.com/v1/a%3Bb%2Cc/forecast"},
		{"%2e%2e", "https://api.example.com/v1/%252e%252e/forecast"},
		{"...", "https://api.example.com/v1/.../forecast"},
		{".hidden", "https://api.example.com/v1/.hidden/forecast"},
		{"@evil.com", "https://api.example.com/v1/@evil.com/forecast"},
		{"{{.other}}", "https://api.example.com/v1/%7B%7B.other%7D%7D/forecast"},
		{42.0, "https://api.example.com/v1/42/forecast"},
		{"\r\nHost: x", "https://api.example.com/v1/%0D%0AHost:%20x/forecast"},
	}
	spec := HTTPSpec{Method: "GET", URL: "https://api.example.com/v1/{{city}}/forecast"}
	for _, tt := range tests {
		r, err := RenderHTTP(spec, map[string]any{"city": tt.value}, nil)
		if err != nil {
			t.Errorf("city %q: %v", tt.value, err)
			continue
		}
		if r.URL != tt.want {
			t.Errorf("city %q: URL %q, want %q", tt.value, r.URL, tt.want)
		}
	}
}

func TestRenderHTTPPathSegmentsRefused(t *testing.T) {
	tests := []struct {
		url  string
		args map[string]any
	}{
		{"https://h.example/files/{{p}}", map[string]any{"p": ".."}},
		{"https://h.example/files/{{p}}", map[string]any{"p": "."}},
		{"https://h.example/files/{{p}}/x", map[string]any{"p": ""}},
		{"https://h.example/files/{{a}}{{b}}", map[string]any{"a": ".", "b": "."}},
		{"https://h.example/files/{{p}}", map[string]any{"p": "../../admin"}},
		{"https://h.example/files/{{p}}", map[string]any{"p": `..\..\admin`}},
		{"https://h.example/files/{{p}}", map[string]any{"p": "a/./b"}},
		{"https://h.example/files/{{p}}", map[string]any{}},
		{"https://h.example/files/%2e{{p}}", map[string]any{"p": "."}},
	}
	for _, tt := range tests {
		r, err := RenderHTTP(HTTPSpec{Method: "GET", URL: tt.url}, tt.args, nil)
		var ae *ArgumentError
		var me *MissingArgumentError
		if !errors.As(err, &ae) && !errors.As(err, &me) {
			t.Errorf("%s %v = %+v, %v; want a refusal", tt.url, tt.args, r, err)
		}
	}
}

func TestRenderHTTPQueryEscaping(t *testing.T) {
	tests := []struct {
		value string
		want  string
	}{
		{"rain", "https://h.example/s?q=rain&lang=en"},
		{"a&b=c", "https://h.example/s?q=a%26b%3Dc&lang=en"},
		{"a+b c", "https://h.example/s?q=a%2Bb+c&lang=en"},
		{"#frag", "https://h.example/s?q=%23frag&lang=en"},
		{"100%", "https://h.example/s?q=100%25&lang=en"},
		{"x\r\ny", "https://h.example/s?q=x%0D%0Ay&lang=en"},
		{"é/?", "https://h.example/s?q=%C3%A9%2F%3F&lang=en"},
	}
	for _, tt := range tests {
		r, err := RenderHTTP(HTTPSpec{Method: "GET", URL: "https://h.example/s?q={{q}}&lang=en"}, map[string]any{"q": tt.value}, nil)
		if err != nil || r.URL != tt.want {
			t.Errorf("q %q: %v %v, want %q", tt.value, r, err, tt.want)
			continue
		}
		u, err := url.Parse(r.URL)
		if err != nil || u.Query().Get("q") != tt.value || u.Query().Get("lang") != "en" || u.Host != "h.example" {
			t.Errorf("q %q: parsed %v %v", tt.value, u, err)
		}
	}
}

func TestRenderHTTPQueryParams(t *testing.T) {
	spec := HTTPSpec{
		Method: "get",
		URL:    "https://api.weather.com/forecast/{{city}}?fmt=json&key={{k}}#top",
		Params: map[string]string{"days": "{{duration}}", "units": "metric", "a b": "x {{city}} y", "opt": "{{maybe}}"},
	}
	r, err := RenderHTTP(spec, map[string]any{"city": "Tokyo", "duration": 3.0, "k": "a&b"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "https://api.weather.com/forecast/Tokyo?fmt=json&key=a%26b&a+b=x+Tokyo+y&days=3&units=metric#top"
	if r.Method != "GET" || r.URL != want || r.Body != nil || r.Headers != nil {
		t.Fatalf("got %+v\nwant URL %s", r, want)
	}
	// Optional arguments: a missing one drops its pair or parameter.
	r, err = RenderHTTP(spec, map[string]any{"city": "Tokyo"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "https://api.weather.com/forecast/Tokyo?fmt=json&a+b=x+Tokyo+y&units=metric#top"; r.URL != want {
		t.Fatalf("URL %s, want %s", r.URL, want)
	}
	// DELETE and HEAD put params in the query too.
	for _, m := range []string{"DELETE", "HEAD"} {
		r, err := RenderHTTP(HTTPSpec{Method: m, URL: "https://h.example/x", Params: map[string]string{"id": "{{id}}"}}, map[string]any{"id": "7 8"}, nil)
		if err != nil || r.URL != "https://h.example/x?id=7+8" || r.Body != nil {
			t.Errorf("%s: %+v %v", m, r, err)
		}
	}
}

func TestRenderHTTPHostPlaceholdersRefused(t *testing.T) {
	for _, u := range []string{
		"https://{{host}}/x",
		"https://{{host}}",
		"https://api.{{domain}}/x",
		"https://api.example.com{{path}}",
		"https://api.example.com{{path}}/x",
		"https://api.example.com:{{port}}/x",
		"https://{{user}}@api.example.com/x",
		"https://u:{{secret.pw}}@api.example.com/x",
		"{{scheme}}://api.example.com/x",
		"http{{s}}://api.example.com/x",
		"{{url}}",
		"{{base}}/v1/x",
		"https://api.example.com/x#{{frag}}",
		"ftp://api.example.com/x",
		"api.example.com/{{x}}",
		"https:///{{x}}",
		"https://api.example.com\\{{x}}",
		"https://api.example.com/%{{x}}",
		"https://api.example.com/%4{{x}}",
		"https://api.example.com/a b/{{x}}",
	} {
		err := ValidateHTTP(HTTPSpec{Method: "GET", URL: u})
		var he *HTTPError
		if !errors.As(err, &he) || he.Field != "url" {
			t.Errorf("ValidateHTTPTemplate(%q) = %v, want a url error", u, err)
		}
		if _, err := RenderHTTP(HTTPSpec{Method: "GET", URL: u}, map[string]any{"host": "evil.com", "x": "1", "path": "@evil.com"}, testSecrets); err == nil {
			t.Errorf("RenderHTTP(%q) rendered", u)
		}
	}
	// The error names the placeholder's position.
	err := ValidateHTTP(HTTPSpec{Method: "GET", URL: "https://api.example.com:{{port}}/x"})
	var te *Error
	if !errors.As(err, &te) || te.Column != 25 || !strings.Contains(te.Msg, "host") {
		t.Errorf("position: %v", err)
	}
}

func TestRenderHTTPHeaders(t *testing.T) {
	spec := HTTPSpec{Method: "GET", URL: "https://h.example/x", Headers: map[string]string{
		"Authorization": "Bearer {{secret.token}}",
		"X-Request":     "{{req}}",
		"Accept":        "application/json",
	}}
	r, err := RenderHTTP(spec, map[string]any{"req": "a\tb {{.x}} é"}, testSecrets)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Authorization": "Bearer s-token", "X-Request": "a\tb {{.x}} é", "Accept": "application/json"}
	if !reflect.DeepEqual(r.Headers, want) {
		t.Fatalf("headers %q, want %q", r.Headers, want)
	}
	for _, v := range []string{"a\r\nX-Evil: 1", "a\nb", "a\rb", "a\x00b", "a\x7fb", "a\x1bb", "a\u0085b", "a\u2028b", "a\u2029b", "\xff"} {
		_, err := RenderHTTP(spec, map[string]any{"req": v}, testSecrets)
		var ae *ArgumentError
		if !errors.As(err, &ae) || ae.Name != "req" {
			t.Errorf("header value %q: %v, want refused", v, err)
		}
	}
	// A secret holding a line break is refused too.
	_, err = RenderHTTP(spec, map[string]any{"req": "ok"}, func(string) (string, error) { return "x\r\nEvil: 1", nil })
	var ae *ArgumentError
	if !errors.As(err, &ae) || ae.Name != "secret.token" {
		t.Errorf("secret with CRLF: %v", err)
	}
	// Missing header arguments are required.
	_, err = RenderHTTP(spec, nil, testSecrets)
	var me *MissingArgumentError
	if !errors.As(err, &me) || me.Name != "req" {
		t.Errorf("missing header argument: %v", err)
	}
	for name, value := range map[string]string{
		"X-A":               "literal\r\nInjected: 1",
		"X-B":               "tab\tok but \x01 not",
		"Bad Name":          "x",
		"X-C:":              "x",
		"":                  "x",
		"X-{{n}}":           "x",
		"Host":              "evil.com",
		"content-length":    "0",
		"Transfer-Encoding": "chunked",
		"Connection":        "close",
	} {
		err := ValidateHTTP(HTTPSpec{Method: "GET", URL: "https://h.example/", Headers: map[string]string{name: value}})
		var he *HTTPError
		if !errors.As(err, &he) || !strings.HasPrefix(he.Field, "headers.") {
			t.Errorf("header %q: %q = %v, want refused", name, value, err)
		}
	}
	err = ValidateHTTP(HTTPSpec{Method: "GET", URL: "https://h.example/", Headers: map[string]string{"X-A": "1", "x-a": "2"}})
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate header: %v", err)
	}
}

func TestRenderHTTPJSONParams(t *testing.T) {
	spec := HTTPSpec{Method: "POST", URL: "https://h.example/items", Params: map[string]string{
		"count":  "{{n}}",
		"flag":   "{{f}}",
		"label":  "item {{name}}",
		"tags":   "{{tags}}",
		"raw":    "{{ .name }}",
		"opt":    "{{missing}}",
		"fixed":  "v",
		"token":  "{{secret.t}}",
		"nested": "{{obj}}",
	}}
	args := map[string]any{"n": 12.0, "f": true, "name": "a\"b<", "tags": []any{"x", 1.0}, "obj": map[string]any{"k": nil}}
	r, err := RenderHTTP(spec, args, testSecrets)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"count":12,"fixed":"v","flag":true,"label":"item a\"b<","nested":{"k":null},"raw":"a\"b<","tags":["x",1],"token":"s-t"}`
	if string(r.Body) != want || r.URL != "https://h.example/items" || r.Headers["Content-Type"] != "application/json" {
		t.Fatalf("got %+v\nbody %s\nwant %s", r, r.Body, want)
	}
	// The author's Content-Type wins, whatever its case.
	spec.Headers = map[string]string{"content-type": "application/vnd.api+json"}
	r, err = RenderHTTP(spec, args, testSecrets)
	if err != nil || len(r.Headers) != 1 || r.Headers["content-type"] != "application/vnd.api+json" {
		t.Fatalf("content type: %+v %v", r, err)
	}
	// No params, no body.
	r, err = RenderHTTP(HTTPSpec{Method: "PUT", URL: "https://h.example/x"}, nil, nil)
	if err != nil || r.Body != nil || r.Headers != nil {
		t.Fatalf("no params: %+v %v", r, err)
	}
}

func TestRenderHTTPBodyTemplate(t *testing.T) {
	spec := HTTPSpec{
		Method: "POST",
		URL:    "https://h.example/q",
		Params: map[string]string{"v": "{{ver}}"},
		Body:   `{"query": {{q}}, "greeting": "hello {{name}}!", "n": {{n}}, "opt": {{maybe}}, "{{key}}": [{{n}}, "{{maybe}}"]}`,
	}
	args := map[string]any{"q": "a\"b\\c\n", "name": "\"}, \"admin\": true, \"x\": {\"", "n": 2.5, "key": "k\"", "ver": "1"}
	r, err := RenderHTTP(spec, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(r.Body, &got); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	want := map[string]any{
		"query":    "a\"b\\c\n",
		"greeting": "hello \"}, \"admin\": true, \"x\": {\"!",
		"n":        2.5,
		"opt":      nil,
		"k\"":      []any{2.5, ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("body %s\ngot  %#v\nwant %#v", r.Body, got, want)
	}
	if r.URL != "https://h.example/q?v=1" || r.Headers["Content-Type"] != "application/json" {
		t.Fatalf("with a body template, params go to the query: %+v", r)
	}
	for _, body := range []string{
		`{"a": "\{{x}}"}`,
		`{"a": x{{x}}}`,
		`{"a": {{x}}{{y}}}`,
		`{"a": -{{x}}}`,
		`{{{x}}: 1}`,
		`{ {{x}}: 1}`,
		`{"a": {{x}}`,
		`not json {{x}}`,
		`{"a": "{{x}}}`,
		`{"a": {{bad name}}}`,
	} {
		err := ValidateHTTP(HTTPSpec{Method: "POST", URL: "https://h.example/", Body: body})
		var he *HTTPError
		if !errors.As(err, &he) || he.Field != "body" {
			t.Errorf("body %q: %v, want refused", body, err)
		}
	}
	if err := ValidateHTTP(HTTPSpec{Method: "GET", URL: "https://h.example/", Body: `{}`}); err == nil {
		t.Error("a GET body was accepted")
	}
	_, err = RenderHTTP(HTTPSpec{Method: "POST", URL: "https://h.example/", Body: `{"n": {{n}}}`}, map[string]any{"n": json.Number("1;x")}, nil)
	if err == nil {
		t.Error("an invalid json.Number was placed in a body")
	}
}

func TestRenderHTTPSecrets(t *testing.T) {
	spec := HTTPSpec{Method: "GET", URL: "https://h.example/{{secret.tenant}}/x?key={{secret.key}}"}
	if _, err := RenderHTTP(spec, nil, nil); !errors.Is(err, ErrSecretsUnavailable) {
		t.Fatalf("nil secrets: %v", err)
	}
	denied := errors.New("denied")
	if _, err := RenderHTTP(spec, nil, func(string) (string, error) { return "", denied }); !errors.Is(err, denied) {
		t.Fatalf("lookup error: %v", err)
	}
	r, err := RenderHTTP(spec, map[string]any{"tenant": "not used"}, func(n string) (string, error) { return n + "/&", nil })
	if err != nil || r.URL != "https://h.example/tenant%2F&/x?key=key%2F%26" {
		t.Fatalf("%+v %v", r, err)
	}
	c, _ := CompileHTTP(spec)
	if !reflect.DeepEqual(c.Secrets(), []string{"tenant", "key"}) || len(c.Vars()) != 0 {
		t.Fatalf("Secrets %q Vars %q", c.Secrets(), c.Vars())
	}
}

func TestRenderHTTPMethods(t *testing.T) {
	for _, m := range []string{"", "TRACE", "CONNECT", "GET /x", "OPTIONS"} {
		err := ValidateHTTP(HTTPSpec{Method: m, URL: "https://h.example/"})
		var he *HTTPError
		if !errors.As(err, &he) || he.Field != "method" {
			t.Errorf("method %q: %v", m, err)
		}
	}
	r, err := RenderHTTP(HTTPSpec{Method: " patch ", URL: "https://h.example/"}, nil, nil)
	if err != nil || r.Method != "PATCH" {
		t.Errorf("patch: %+v %v", r, err)
	}
	for _, p := range []map[string]string{{"": "x"}, {"a{{b}}": "x"}} {
		if err := ValidateHTTP(HTTPSpec{Method: "GET", URL: "https://h.example/", Params: p}); err == nil {
			t.Errorf("params %q accepted", p)
		}
	}
}

func TestGenerateParameters(t *testing.T) {
	tests := []struct {
		spec HTTPSpec
		want string
	}{
		{
			HTTPSpec{Method: "GET", URL: "https://api.weather.com/forecast/{{city}}", Params: map[string]string{"days": "{{duration}}", "units": "metric"}},
			`{"type":"object","properties":{"city":{"type":"string"},"duration":{"type":"string"}},"required":["city"]}`,
		},
		{
			HTTPSpec{Method: "POST", URL: "https://h.example/{{a}}/{{b}}/{{a}}?q={{q}}", Params: map[string]string{"p": "{{b}} {{p}}"},
				Headers: map[string]string{"X-Z": "{{z}}", "X-A": "{{h}} {{secret.s}}"}, Body: `{"x": {{body}}}`},
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"body":{"type":"string"},"h":{"type":"string"},"p":{"type":"string"},"q":{"type":"string"},"z":{"type":"string"}},"required":["a","b","h","z"]}`,
		},
		{
			HTTPSpec{Method: "GET", URL: "https://h.example/static"},
			`{"type":"object","properties":{}}`,
		},
	}
	for _, tt := range tests {
		got, err := GenerateParameters(tt.spec)
		if err != nil || string(got) != tt.want {
			t.Errorf("GenerateParameters(%+v) =\n\t%s, %v\nwant\n\t%s", tt.spec, got, err, tt.want)
		}
		if !json.Valid(got) {
			t.Errorf("invalid JSON %s", got)
		}
	}
	if _, err := GenerateParameters(HTTPSpec{Method: "GET", URL: "https://{{h}}/"}); err == nil {
		t.Error("GenerateParameters accepted a host placeholder")
	}
}

func TestHTTPRenderingJSON(t *testing.T) {
	b, _ := json.Marshal(&HTTPRendering{Method: "POST", URL: "https://h/", Headers: map[string]string{"A": "b"}, Body: []byte(`{}`)})
	if string(b) != `{"method":"POST","url":"https://h/","headers":{"A":"b"},"body":"e30="}` {
		t.Fatalf("%s", b)
	}
}
