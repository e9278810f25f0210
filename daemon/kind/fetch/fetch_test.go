package fetch

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/netguard"
)

// build builds a call of a fetch tool that may send every method.
func build(t *testing.T, allowed []string, args string) (*kind.Request, error) {
	t.Helper()
	return buildWith(t, &Spec{AllowedDomains: allowed, Methods: slices.Clone(Methods)}, args)
}

func buildWith(t *testing.T, s *Spec, args string) (*kind.Request, error) {
	t.Helper()
	s.Normalize()
	if ps := s.Validate(kind.Tool{}); len(ps) != 0 {
		t.Fatal(ps)
	}
	if err := s.Check(kind.Tool{}); err != nil {
		t.Fatal(err)
	}
	c, _ := s.Compile(kind.Tool{})
	req := &kind.Request{}
	env := &kind.Env{Guards: netguard.NewCache(4)}
	_, err := c.Build(context.Background(), &kind.Call{Env: env, Tool: kind.Tool{Name: "fetch_url"}, Args: json.RawMessage(args),
		Defaults: map[string]json.RawMessage{"method": json.RawMessage(`"` + DefaultMethod(s.Methods) + `"`)}}, req)
	return req, err
}

func TestBuild(t *testing.T) {
	req, err := build(t, []string{"*"}, `{"url":"https://example.com/a?b=1","headers":{"Accept":"text/plain"}}`)
	if err != nil {
		t.Fatal(err)
	}
	h := req.HTTP
	if h == nil || h.Method != "GET" || h.URL != "https://example.com/a?b=1" || !h.TruncateBody || h.MaxResponseBytes != DefaultMaxResponseBytes ||
		h.AllowedDomains[0] != "*" || req.Permissions[0] != "network" || h.Body != nil {
		t.Fatalf("request %+v %+v", h, req)
	}
	req, err = build(t, []string{"api.example.com"}, `{"url":"https://api.example.com/","method":"post","body":"{}"}`)
	if err != nil || req.HTTP.Method != "POST" || string(req.HTTP.Body) != "{}" {
		t.Fatalf("post: %v %+v", err, req.HTTP)
	}
	refused := []struct {
		allowed []string
		args    string
		code    errdefs.Code
	}{
		{[]string{"api.example.com"}, `{"url":"https://other.example.com/"}`, errdefs.PolicyDenied},
		{[]string{"*"}, `{"url":"http://127.0.0.1/"}`, errdefs.PolicyDenied},
		{[]string{"*"}, `{"url":"http://169.254.169.254/latest/meta-data/"}`, errdefs.PolicyDenied},
		{[]string{"*"}, `{"url":"http://[fd00::1]/"}`, errdefs.PolicyDenied},
		{[]string{"*"}, `{"url":"gopher://example.com/"}`, errdefs.PolicyDenied},
		{[]string{"*"}, `{"url":"https://user:pw@example.com/"}`, errdefs.PolicyDenied},
		{[]string{"*"}, `{"url":"https://example.com/","method":"CONNECT"}`, errdefs.InvalidArguments},
		{[]string{"*"}, `{"url":"https://example.com/","headers":{"Host":"intranet"}}`, errdefs.PolicyDenied},
		{[]string{"*"}, `{"url":"https://example.com/","headers":{"transfer-encoding":"chunked"}}`, errdefs.PolicyDenied},
		{[]string{"*"}, `{"url":"https://example.com/","headers":{"X-A":"a\r\nX-B: b"}}`, errdefs.PolicyDenied},
		{[]string{"*"}, `{"url":"https://example.com/","headers":{"X A":"b"}}`, errdefs.PolicyDenied},
	}
	for _, tc := range refused {
		if _, err := build(t, tc.allowed, tc.args); errdefs.CodeOf(err) != tc.code {
			t.Errorf("%v %s: %v, want %s", tc.allowed, tc.args, err, tc.code)
		}
	}
}

// TestMethods: a block that names no methods allows GET and HEAD; the
// methods it names, in any case, are those a call may use, in any case; a
// method fetch_url knows but the block leaves out is forbidden, one it
// does not know a bad argument, both before any request is built.
func TestMethods(t *testing.T) {
	def := &Spec{AllowedDomains: []string{"*"}}
	def.Normalize()
	if !slices.Equal(def.Methods, DefaultMethods) || !slices.Equal(DefaultMethods, []string{"GET", "HEAD"}) {
		t.Fatalf("default methods %v", def.Methods)
	}
	for _, tc := range []struct {
		methods []string
		method  string
		want    string // the method sent, or "" when refused
		code    errdefs.Code
	}{
		{nil, "", "GET", ""},
		{nil, "get", "GET", ""},
		{nil, "Head", "HEAD", ""},
		{nil, "POST", "", errdefs.Forbidden},
		{nil, "options", "", errdefs.Forbidden},
		{nil, "DELETE", "", errdefs.Forbidden},
		{nil, "CONNECT", "", errdefs.InvalidArguments},
		{nil, "TRACE", "", errdefs.InvalidArguments},
		{nil, "G ET", "", errdefs.InvalidArguments},
		{[]string{"post"}, "", "POST", ""}, // no GET: the first allowed
		{[]string{"post"}, "Post", "POST", ""},
		{[]string{"post"}, "GET", "", errdefs.Forbidden},
		{[]string{"Get", "delete"}, "delete", "DELETE", ""},
		{[]string{"Get", "delete"}, "", "GET", ""},
		{[]string{"Get", "delete"}, "PUT", "", errdefs.Forbidden},
		{[]string{"OPTIONS"}, "options", "OPTIONS", ""},
	} {
		s := &Spec{AllowedDomains: []string{"*"}, Methods: slices.Clone(tc.methods)}
		args := `{"url":"https://example.com/"}`
		if tc.method != "" {
			args = `{"url":"https://example.com/","method":"` + tc.method + `"}`
		}
		req, err := buildWith(t, s, args)
		switch {
		case tc.code != "":
			if errdefs.CodeOf(err) != tc.code || req.HTTP != nil {
				t.Errorf("%v %q: %v (request %+v), want %s", tc.methods, tc.method, err, req.HTTP, tc.code)
			}
		case err != nil || req.HTTP.Method != tc.want:
			t.Errorf("%v %q: %v %+v, want %s", tc.methods, tc.method, err, req.HTTP, tc.want)
		}
	}
	// What the block may name.
	for _, tc := range []struct {
		methods []string
		problem string
	}{
		{[]string{"GET", "get"}, "GET is listed twice"},
		{[]string{"GET", "FETCH"}, `unknown method "FETCH"`},
		{[]string{"CONNECT"}, `unknown method "CONNECT"`},
		{[]string{""}, `unknown method ""`},
	} {
		s := &Spec{AllowedDomains: []string{"*"}, Methods: tc.methods}
		s.Normalize()
		ps := s.Validate(kind.Tool{})
		if len(ps) != 1 || ps[0].Field != "fetch.methods" || !strings.Contains(ps[0].Message, tc.problem) {
			t.Errorf("%v: %v, want %q", tc.methods, ps, tc.problem)
		}
	}
}

// FuzzCheckHeader: an accepted header has a token name the client does
// not own and a value with no line break.
func FuzzCheckHeader(f *testing.F) {
	for _, s := range [][2]string{{"Accept", "text/plain"}, {"Host", "x"}, {"X-A", "a\r\nb"}, {"", ""}, {"X\x00", "v"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		if checkHeader(name, value) != nil {
			return
		}
		if framing[strings.ToLower(name)] || strings.ContainsAny(value, "\r\n\x00") || name == "" || strings.ContainsAny(name, " :\r\n") {
			t.Fatalf("accepted %q: %q", name, value)
		}
	})
}
