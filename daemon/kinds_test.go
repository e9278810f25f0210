package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

type shellResult struct {
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
}

func shellOut(t *testing.T, r api.CallResponse) shellResult {
	t.Helper()
	var s shellResult
	if err := json.Unmarshal(r.Result, &s); err != nil {
		t.Fatalf("shell result %s: %v", r.Result, err)
	}
	return s
}

func TestShellTools(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	canaryDir := t.TempDir()
	canary := filepath.Join(canaryDir, "CANARY")

	create(t, c, `{"name":"echo_it","description":"echo","kind":"shell",
		"parameters":{"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]},
		"shell":{"command":"echo {{.msg}}"}}`)
	create(t, c, `{"name":"shout","description":"upper","kind":"shell",
		"parameters":{"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]},
		"shell":{"command":"printf '%s\\n' {{.msg}} | tr a-z A-Z"}}`)
	create(t, c, `{"name":"clean","description":"removes a path","kind":"shell",
		"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},
		"shell":{"command":"rm -rf {{.path}}"}}`)
	create(t, c, `{"name":"wrapped","description":"a wrapped reboot","kind":"shell","shell":{"command":"env busybox sh -c 'reboot -f'"}}`)
	create(t, c, `{"name":"list_dir","description":"ls","kind":"shell",
		"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},
		"shell":{"command":"ls {{.path}}"}}`)
	create(t, c, `{"name":"greet_env","description":"env","kind":"shell",
		"parameters":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]},
		"shell":{"command":"echo \"$GREETING\"","env":{"GREETING":"hi {{.name}}"}}}`)
	create(t, c, `{"name":"fail","description":"exits 3","kind":"shell","shell":{"command":"sh -c 'exit 3'"}}`)
	create(t, c, `{"name":"slow","description":"sleeps","kind":"shell","limits":{"timeout":"200ms"},"shell":{"command":"sleep 5"}}`)

	injections := []string{
		"; touch " + canary, "$(touch " + canary + ")", "`touch " + canary + "`",
		"' ; touch " + canary + "; '", "x\ntouch " + canary, "&& touch " + canary,
	}
	for _, v := range injections {
		for _, tool := range []string{"echo_it", "shout"} {
			r, err := callTool(c, tool, map[string]any{"msg": v})
			if err != nil {
				t.Fatalf("%s %q: %v", tool, v, err)
			}
			out := shellOut(t, r)
			if tool == "echo_it" && out.Stdout != v+"\n" {
				t.Fatalf("echo_it %q printed %q", v, out.Stdout)
			}
		}
	}
	if _, err := os.Stat(canary); !os.IsNotExist(err) {
		t.Fatal("an injected argument ran: the canary file exists")
	}
	r, err := callTool(c, "shout", map[string]any{"msg": "abc"})
	if err != nil || shellOut(t, r).Stdout != "ABC\n" {
		t.Fatalf("shout: %v %s", err, r.Result)
	}

	// The deny rules judge the rendered command, wrappers unwrapped.
	_, err = callTool(c, "clean", map[string]any{"path": "/"})
	if codeOf(err) != errdefs.PolicyDenied || !strings.Contains(err.Error(), "destructive") {
		t.Fatalf("rm -rf /: %v", err)
	}
	if _, err := callTool(c, "wrapped", nil); codeOf(err) != errdefs.PolicyDenied || !strings.Contains(err.Error(), "system_control") {
		t.Fatalf("env busybox sh -c reboot: %v", err)
	}
	if r, err := callTool(c, "clean", map[string]any{"path": "/tmp/junk"}); err != nil || r.IsError {
		t.Fatalf("allowed rm: %v %+v", err, r)
	}
	// Option injection is refused.
	if _, err := callTool(c, "list_dir", map[string]any{"path": "--help"}); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("option injection: %v", err)
	}
	// Env values are rendered verbatim, and only the declared env exists.
	if r, err := callTool(c, "greet_env", map[string]any{"name": "$(id)"}); err != nil || shellOut(t, r).Stdout != "hi $(id)\n" {
		t.Fatalf("env: %v %s", err, r.Result)
	}
	// Exit codes and timeouts.
	r, err = callTool(c, "fail", nil)
	if err != nil || !r.IsError || shellOut(t, r).ExitCode != 3 {
		t.Fatalf("fail: %v %+v", err, r)
	}
	if _, err := callTool(c, "slow", nil); codeOf(err) != errdefs.Timeout {
		t.Fatalf("slow: %v", err)
	}

	// A placeholder inside quotes is refused when the tool is created.
	err = c.Do(context.Background(), "POST", "/v1/tools", []byte(`{"name":"quoted","description":"x","kind":"shell","shell":{"command":"echo \"Hello {{.name}}\""}}`), nil)
	if codeOf(err) != errdefs.InvalidDefinition {
		t.Fatalf("quoted placeholder: %v", err)
	}

	// Render shows exactly what would run and runs nothing.
	var rend Rendering
	if err := c.Do(context.Background(), "POST", "/v1/tools/echo_it/render", api.CallRequest{Arguments: mustJSON(map[string]any{"msg": "a b; c"})}, &rend); err != nil {
		t.Fatal(err)
	}
	if rend.Shell == nil || rend.Shell.Mode != "argv" || len(rend.Shell.Argv) != 2 || rend.Shell.Argv[1] != "a b; c" {
		t.Fatalf("render: %+v", rend.Shell)
	}
	if err := c.Do(context.Background(), "POST", "/v1/tools/clean/render", api.CallRequest{Arguments: mustJSON(map[string]any{"path": "/etc"})}, nil); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("render of a denied command: %v", err)
	}
}

func TestHTTPTools(t *testing.T) {
	var hits atomic.Int32
	var lastPath atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		lastPath.Store(r.URL.EscapedPath() + "?" + r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"city":%q,"days":%q,"temp_c":21.5}`, strings.TrimPrefix(r.URL.Path, "/forecast/"), r.URL.Query().Get("days"))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	def := `{"name":"weather","description":"forecast","kind":"http","http":{"method":"GET",
		"url":"http://localhost:` + port + `/forecast/{{city}}","params":{"days":"{{days}}"},"allowed_domains":["localhost"]}}`

	td := startDaemon(t, "", func(c *Config) { c.HTTP.AllowPrivateHosts = []string{"localhost"} })
	tool := create(t, td.client, def)
	if !strings.Contains(string(tool.Definition), `"city"`) {
		t.Fatalf("parameters were not generated from the template: %s", tool.Definition)
	}
	r, err := callTool(td.client, "weather", map[string]any{"city": "Paris", "days": "3"})
	if err != nil || r.IsError {
		t.Fatalf("call: %v %+v", err, r)
	}
	var v struct {
		Status int
		Body   map[string]any
	}
	if err := json.Unmarshal(r.Result, &v); err != nil || v.Status != 200 || v.Body["city"] != "Paris" || v.Body["days"] != "3" {
		t.Fatalf("result %s (%v)", r.Result, err)
	}
	// Values are escaped for where they land.
	if _, err := callTool(td.client, "weather", map[string]any{"city": "a/b?x=1", "days": "1&evil=1"}); err != nil {
		t.Fatal(err)
	}
	if got := lastPath.Load().(string); got != "/forecast/a%2Fb%3Fx=1?days=1%26evil%3D1" {
		t.Fatalf("server saw %q", got)
	}
	if _, err := callTool(td.client, "weather", map[string]any{"days": "1"}); codeOf(err) != errdefs.InvalidArguments {
		t.Fatalf("missing city: %v", err)
	}

	// Without allow_private_hosts the same tool may not reach loopback.
	before := hits.Load()
	td2 := startDaemon(t, "", nil)
	create(t, td2.client, def)
	if _, err := callTool(td2.client, "weather", map[string]any{"city": "Paris", "days": "3"}); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("loopback without permission: %v", err)
	}
	if hits.Load() != before {
		t.Fatal("the server was reached")
	}
	// A URL whose host is not in allowed_domains is refused at creation.
	bad := strings.Replace(def, `"allowed_domains":["localhost"]`, `"allowed_domains":["api.example.com"]`, 1)
	if err := td2.client.Do(context.Background(), "POST", "/v1/tools", []byte(strings.Replace(bad, "weather", "weather2", 1)), nil); codeOf(err) != errdefs.InvalidDefinition {
		t.Fatalf("host outside the allowlist: %v", err)
	}
}

func TestJSFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	td := startDaemon(t, "", func(c *Config) { c.HTTP.AllowPrivateHosts = []string{"localhost"} })
	create(t, td.client, `{"name":"fetcher","description":"fetches","kind":"js","permissions":["network"],
		"js":{"allowed_domains":["localhost"],"code":"const r = await fetch('http://localhost:`+u.Port()+`/hi'); return [r.ok, (await r.json()).path]"}}`)
	create(t, td.client, `{"name":"stray","description":"fetches elsewhere","kind":"js","permissions":["network"],
		"js":{"allowed_domains":["localhost"],"code":"try { await fetch('http://169.254.169.254/'); return 'reached' } catch (e) { return e.message }"}}`)
	create(t, td.client, `{"name":"offline","description":"no network","kind":"js","js":{"code":"return typeof fetch"}}`)
	if r, err := callTool(td.client, "fetcher", nil); err != nil || string(r.Result) != `[true,"/hi"]` {
		t.Fatalf("fetcher: %v %+v", err, r)
	}
	if r, err := callTool(td.client, "stray", nil); err != nil || !strings.Contains(string(r.Result), "network guard refused") {
		t.Fatalf("stray: %v %s", err, r.Result)
	}
	if r, err := callTool(td.client, "offline", nil); err != nil || string(r.Result) != `"undefined"` {
		t.Fatalf("offline: %v %s", err, r.Result)
	}
}

// TestCredentialsScrubbed: a credential a tool prints, logs, throws or is
// given never leaves the daemon or reaches the database.
func TestCredentialsScrubbed(t *testing.T) {
	data := t.TempDir()
	td := startDaemon(t, data, nil)
	const key = "sk-ant-api03-Zx9Qw2Er5Ty8Ui1Op4As7Df0Gh3Jk6Lz9Xc2Vb5Nm8Qw1Er4Ty7Ui0Op3As6Df9Gh2Jk5Lz8Xc1Vb4Nm7AA"
	create(t, td.client, `{"name":"leaky","description":"leaks","kind":"js","parameters":{"type":"object","properties":{"k":{"type":"string"}}},
		"js":{"code":"console.log('key is ' + args.k); return {token: args.k, note: 'Authorization: Bearer ' + args.k}"}}`)
	create(t, td.client, `{"name":"thrower2","description":"throws","kind":"js","parameters":{"type":"object","properties":{"k":{"type":"string"}}},
		"js":{"code":"throw new Error('bad key ' + args.k)"}}`)
	create(t, td.client, `{"name":"echo_key","description":"echo","kind":"shell","parameters":{"type":"object","properties":{"k":{"type":"string"}},"required":["k"]},
		"shell":{"command":"echo {{.k}}"}}`)
	var raw json.RawMessage
	for _, tool := range []string{"leaky", "thrower2", "echo_key"} {
		err := td.client.Do(context.Background(), "POST", "/v1/tools/"+tool+"/call", api.CallRequest{Arguments: mustJSON(map[string]any{"k": key})}, &raw)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if strings.Contains(string(raw), key) || !strings.Contains(string(raw), "[REDACTED:") {
			t.Fatalf("%s answered %s", tool, raw)
		}
	}
	if err := td.client.Do(context.Background(), "GET", "/v1/executions", nil, &raw); err != nil || strings.Contains(string(raw), key) {
		t.Fatalf("audit: %v %s", err, raw)
	}
	td.stop()
	// Nothing in the data dir holds the key: database, WAL, anything.
	filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), key) {
				t.Errorf("%s holds the key", p)
			}
		}
		return nil
	})
}

// A literal IP named in http.allow_private_hosts works like a name: the
// tool is accepted when it is made, and the daemon's list decides at the
// call.
func TestHTTPPrivateLiteralIP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`"pong"`)) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	def := `{"name":"ping","description":"pings","kind":"http","http":{"method":"GET",
		"url":"http://127.0.0.1:` + u.Port() + `/ping","allowed_domains":["127.0.0.1"]}}`
	td := startDaemon(t, "", func(c *Config) { c.HTTP.AllowPrivateHosts = []string{"127.0.0.1"} })
	create(t, td.client, def)
	if r, err := callTool(td.client, "ping", map[string]any{}); err != nil || r.IsError {
		t.Fatalf("call: %v %+v", err, r)
	}
	td2 := startDaemon(t, "", nil)
	create(t, td2.client, def)
	if _, err := callTool(td2.client, "ping", map[string]any{}); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("without allow_private_hosts: %v", err)
	}
	// The metadata address is refused when the tool is made.
	meta := strings.NewReplacer("127.0.0.1:"+u.Port(), "169.254.169.254", `["127.0.0.1"]`, `["169.254.169.254"]`, `"ping"`, `"meta"`).Replace(def)
	if err := td2.client.Do(context.Background(), "POST", "/v1/tools", []byte(meta), nil); codeOf(err) != errdefs.InvalidDefinition {
		t.Fatalf("metadata address: %v", err)
	}
}
