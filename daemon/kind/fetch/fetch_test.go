package fetch

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/netguard"
)

func build(t *testing.T, allowed []string, args string) (*kind.Request, error) {
	t.Helper()
	s := &Spec{AllowedDomains: allowed}
	s.Normalize()
	if err := s.Check(kind.Tool{}); err != nil {
		t.Fatal(err)
	}
	c, _ := s.Compile(kind.Tool{})
	req := &kind.Request{}
	env := &kind.Env{Guards: netguard.NewCache(4)}
	_, err := c.Build(context.Background(), &kind.Call{Env: env, Tool: kind.Tool{Name: "fetch_url"}, Args: json.RawMessage(args),
		Defaults: map[string]json.RawMessage{"method": json.RawMessage(`"GET"`)}}, req)
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
