package daemon

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
)

// TestOptionalTemplateParameters: a schema default fills an absent
// argument of a shell or http template; a placeholder a call may leave
// out with no default is refused when the tool is made, and the message
// says what to add.
func TestOptionalTemplateParameters(t *testing.T) {
	var seen = make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.URL.Path + " " + r.Header.Get("X-Units") + " " + r.URL.RawQuery
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	td := startDaemon(t, "", func(c *Config) { c.HTTP.AllowPrivateHosts = []string{"localhost"} })
	c := td.client

	// The seeds' dns_lookup, with echo standing in for dig.
	create(t, c, `{"name":"dns_lookup","description":"look up","kind":"shell",
		"parameters":{"type":"object","properties":{"domain":{"type":"string"},
			"record_type":{"type":"string","enum":["A","AAAA","MX"],"default":"A"}},"required":["domain"]},
		"shell":{"command":"echo {{.record_type}} {{.domain}}"}}`)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"domain": "example.com"}, "A example.com\n"},
		{map[string]any{"domain": "example.com", "record_type": "MX"}, "MX example.com\n"},
	} {
		r, err := callTool(c, "dns_lookup", tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if got := shellOut(t, r).Stdout; got != tc.want {
			t.Errorf("%v printed %q, want %q", tc.args, got, tc.want)
		}
	}
	// A value that is given still passes the schema.
	if _, err := callTool(c, "dns_lookup", map[string]any{"domain": "example.com", "record_type": "SRV"}); codeOf(err) != errdefs.InvalidArguments {
		t.Fatalf("a value outside the enum: %v", err)
	}

	create(t, c, `{"name":"forecast","description":"forecast","kind":"http",
		"parameters":{"type":"object","properties":{"city":{"type":"string","default":"Paris"},
			"units":{"type":"string","default":"metric"},"days":{"type":"string"}}},
		"http":{"method":"GET","url":"http://localhost:`+u.Port()+`/f/{{city}}","params":{"days":"{{days}}"},
			"headers":{"X-Units":"{{units}}"},"allowed_domains":["localhost"]}}`)
	if _, err := callTool(c, "forecast", map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "/f/Paris metric " {
		t.Errorf("server saw %q, want the defaults and no days", got)
	}
	if _, err := callTool(c, "forecast", map[string]any{"city": "Oslo", "units": "imperial", "days": "2"}); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "/f/Oslo imperial days=2" {
		t.Errorf("server saw %q", got)
	}

	refused := []struct{ name, def, field string }{
		{"shell word", `{"name":"r1","description":"x","kind":"shell",
			"parameters":{"type":"object","properties":{"domain":{"type":"string"},"record_type":{"type":"string"}},"required":["domain"]},
			"shell":{"command":"dig +short {{.record_type}} {{.domain}}"}}`, "record_type"},
		{"http path", `{"name":"r2","description":"x","kind":"http",
			"parameters":{"type":"object","properties":{"city":{"type":"string"}}},
			"http":{"method":"GET","url":"https://api.example.com/f/{{city}}","allowed_domains":["api.example.com"]}}`, "city"},
		{"http header", `{"name":"r3","description":"x","kind":"http",
			"parameters":{"type":"object","properties":{"city":{"type":"string"},"units":{"type":"string"}},"required":["city"]},
			"http":{"method":"GET","url":"https://api.example.com/f/{{city}}","headers":{"X-Units":"{{units}}"},"allowed_domains":["api.example.com"]}}`, "units"},
	}
	for _, tc := range refused {
		err := c.Do(context.Background(), "POST", "/v1/tools", []byte(tc.def), nil)
		if codeOf(err) != errdefs.InvalidDefinition || !strings.Contains(err.Error(), `add a "default"`) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v, want invalid_definition asking for a default of %s", tc.name, err, tc.field)
		}
	}
	// A default the property itself refuses is no default.
	err := c.Do(context.Background(), "POST", "/v1/tools", []byte(`{"name":"r4","description":"x","kind":"shell",
		"parameters":{"type":"object","properties":{"n":{"type":"integer","default":"ten"}}},
		"shell":{"command":"echo {{.n}}"}}`), nil)
	if codeOf(err) != errdefs.InvalidDefinition || !strings.Contains(err.Error(), "default") {
		t.Errorf("a default of the wrong type: %v", err)
	}
}
