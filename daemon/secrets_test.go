package daemon

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// secretValue is long and odd enough that finding it anywhere is a leak.
const secretValue = "tok-Zq8vK2mXw9rTj4LpNc7u"

func putSecret(t *testing.T, c *api.Client, name string, body any) {
	t.Helper()
	if err := c.Do(context.Background(), "PUT", "/v1/secrets/"+name, body, nil); err != nil {
		t.Fatalf("put secret %s: %v", name, err)
	}
}

func listSecrets(t *testing.T, c *api.Client) api.SecretList {
	t.Helper()
	var l api.SecretList
	if err := c.Do(context.Background(), "GET", "/v1/secrets", nil, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// noPlaintext fails if any file under dir holds the value.
func noPlaintext(t *testing.T, dir, value string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if strings.Contains(string(b), value) {
			t.Errorf("%s holds the secret in plaintext", p)
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walking %s: %v (%d files)", dir, err, n)
	}
}

func TestSecretsAPI(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	if fi, err := os.Stat(filepath.Join(td.cfg.DataDir, "secrets.key")); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	if l := listSecrets(t, c); len(l.Secrets) != 0 {
		t.Fatalf("fresh list: %+v", l)
	}
	v := secretValue
	putSecret(t, c, "api_token", api.SecretValue{Value: &v})
	putSecret(t, c, "svc", api.SecretValue{Service: &api.ServiceSecret{Fields: map[string]string{"api_key": "svc-key-123456", "user": "bob"}}})
	create(t, c, `{"name":"uses_token","description":"d","kind":"shell","secrets":["api_token"],
		"shell":{"command":"true","env":{"TOKEN":"{{secret.api_token}}"}}}`)

	var raw json.RawMessage
	if err := c.Do(context.Background(), "GET", "/v1/secrets", nil, &raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secretValue) || strings.Contains(string(raw), "svc-key") {
		t.Fatalf("list shows a value: %s", raw)
	}
	l := listSecrets(t, c)
	if len(l.Secrets) != 2 || l.Secrets[0].Name != "api_token" || len(l.Secrets[0].UsedBy) != 1 || l.Secrets[0].UsedBy[0] != "uses_token" ||
		l.Secrets[1].Name != "svc" || len(l.Secrets[1].UsedBy) != 0 || l.Secrets[0].CreatedAt.IsZero() {
		t.Fatalf("list: %+v", l)
	}

	// Bad requests.
	for _, body := range []string{`{}`, `{"value":"a","service":{}}`, `{"nope":1}`} {
		if err := c.Do(context.Background(), "PUT", "/v1/secrets/x", []byte(body), nil); codeOf(err) != errdefs.InvalidRequest {
			t.Errorf("PUT %s: %v", body, err)
		}
	}
	if err := c.Do(context.Background(), "PUT", "/v1/secrets/Bad-Name", api.SecretValue{Value: &v}, nil); codeOf(err) != errdefs.InvalidRequest {
		t.Errorf("bad name: %v", err)
	}
	if err := llm(c).Do(context.Background(), "PUT", "/v1/secrets/x", api.SecretValue{Value: &v}, nil); codeOf(err) != errdefs.Forbidden {
		t.Errorf("llm put: %v", err)
	}

	if err := c.Do(context.Background(), "DELETE", "/v1/secrets/svc", nil, nil); err != nil {
		t.Fatal(err)
	}
	err := c.Do(context.Background(), "DELETE", "/v1/secrets/svc", nil, nil)
	if ae := apiErr(t, err); ae.Code != errdefs.NotFound || ae.Status != http.StatusNotFound {
		t.Fatalf("second delete: %v", err)
	}
	if l := listSecrets(t, c); len(l.Secrets) != 1 {
		t.Fatalf("after delete: %+v", l)
	}
}

func TestSecretsInjected(t *testing.T) {
	var got atomic.Value
	got.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "Bearer "+secretValue {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		// A careless server echoes the credential back.
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true,"echo":"` + r.Header.Get("Authorization") + `"}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)

	td := startDaemon(t, "", func(c *Config) { c.HTTP.AllowPrivateHosts = []string{"localhost"} })
	c := td.client
	v := secretValue
	putSecret(t, c, "api_token", api.SecretValue{Value: &v})
	putSecret(t, c, "svc", api.SecretValue{Service: &api.ServiceSecret{Fields: map[string]string{"api_key": secretValue + "-svc"}, Entries: json.RawMessage(`[{"name":"a"}]`)}})

	create(t, c, `{"name":"env_token","description":"d","kind":"shell","secrets":["api_token"],
		"shell":{"command":"sh -c 'echo \"$TOKEN\"; printf %s \"$TOKEN\" | wc -c'","env":{"TOKEN":"{{secret.api_token}}"}}}`)
	create(t, c, `{"name":"echo_token","description":"d","kind":"shell","secrets":["api_token"],
		"shell":{"command":"echo {{secret.api_token}}"}}`)
	create(t, c, `{"name":"echo_svc","description":"d","kind":"shell","secrets":["svc"],
		"shell":{"command":"echo {{secret.svc}}"}}`)
	create(t, c, `{"name":"api","description":"d","kind":"http","secrets":["api_token"],"http":{"method":"GET",
		"url":"http://localhost:`+u.Port()+`/me","headers":{"Authorization":"Bearer {{secret.api_token}}"},"allowed_domains":["localhost"]}}`)

	r, err := callTool(c, "env_token", map[string]any{})
	if err != nil || r.IsError {
		t.Fatalf("env_token: %v %+v", err, r)
	}
	out := shellOut(t, r)
	if out.Stdout != "[REDACTED:secret:api_token]\n"+strconv.Itoa(len(secretValue))+"\n" {
		t.Fatalf("env_token stdout %q", out.Stdout)
	}
	r, err = callTool(c, "echo_token", map[string]any{})
	if err != nil || shellOut(t, r).Stdout != "[REDACTED:secret:api_token]\n" {
		t.Fatalf("echo_token: %v %+v", err, r)
	}
	r, err = callTool(c, "echo_svc", map[string]any{})
	if err != nil || shellOut(t, r).Stdout != "[REDACTED:secret:svc]\n" {
		t.Fatalf("echo_svc: %v %+v", err, r)
	}
	r, err = callTool(c, "api", map[string]any{})
	if err != nil || r.IsError {
		t.Fatalf("api: %v %+v", err, r)
	}
	if got.Load() != "Bearer "+secretValue {
		t.Fatalf("server got %q", got.Load())
	}
	if strings.Contains(string(r.Result), secretValue) || !strings.Contains(string(r.Result), "[REDACTED:secret:api_token]") {
		t.Fatalf("api result %s", r.Result)
	}

	// Rendering shows the placeholder's redaction, never the value.
	var rend json.RawMessage
	if err := c.Do(context.Background(), "POST", "/v1/tools/api/render", api.CallRequest{Arguments: mustJSON(map[string]any{})}, &rend); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(rend), secretValue) || !strings.Contains(string(rend), "Bearer [REDACTED:secret:api_token]") {
		t.Fatalf("render %s", rend)
	}

	// A secret the definition does not list is refused before anything runs.
	create(t, c, `{"name":"sneaky","description":"d","kind":"shell","secrets":["svc"],
		"shell":{"command":"echo {{secret.api_token}}"}}`)
	_, err = callTool(c, "sneaky", map[string]any{})
	if ae := apiErr(t, err); ae.Code != errdefs.PolicyDenied || !strings.Contains(ae.Message, `does not list under secrets`) {
		t.Fatalf("undeclared: %v", err)
	}
	// A listed secret that is not set says how to set it.
	create(t, c, `{"name":"unset","description":"d","kind":"shell","secrets":["missing_one"],
		"shell":{"command":"echo {{secret.missing_one}}"}}`)
	_, err = callTool(c, "unset", map[string]any{})
	if ae := apiErr(t, err); ae.Code != errdefs.InvalidRequest || !strings.Contains(ae.Message, "secret missing_one is not set; run toolcage secrets set missing_one") {
		t.Fatalf("unset: %v", err)
	}
	// An llm's dry run of an unsaved definition may use no secret.
	err = llm(c).Do(context.Background(), "POST", "/v1/tools/test", api.TestRequest{Definition: json.RawMessage(`{"name":"dry","description":"d","kind":"shell","secrets":["api_token"],
		"shell":{"command":"echo {{secret.api_token}}"}}`)}, nil)
	if codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("llm dry run: %v", err)
	}

	// The audit log holds no value.
	var ex api.ExecutionList
	if err := c.Do(context.Background(), "GET", "/v1/executions?limit=100", nil, &ex); err != nil {
		t.Fatal(err)
	}
	if len(ex.Executions) < 6 {
		t.Fatalf("executions: %d", len(ex.Executions))
	}
	for _, e := range ex.Executions {
		if strings.Contains(string(e.Arguments)+e.Error, secretValue) {
			t.Fatalf("audit record holds the value: %+v", e)
		}
	}

	// Nothing on disk holds the value: database, WAL, key file.
	td.stop()
	noPlaintext(t, td.cfg.DataDir, secretValue)
}

func TestSecretsKeyFileConfig(t *testing.T) {
	base := map[string]any{"data_dir": "/srv/tc"}
	cfg, err := LoadConfig("", base)
	if err != nil || cfg.Secrets.KeyFile != "/srv/tc/secrets.key" {
		t.Fatalf("default: %q %v", cfg.Secrets.KeyFile, err)
	}
	t.Setenv("TOOLCAGE_MASTER_KEY_FILE", "/keys/master")
	if cfg, err = LoadConfig("", base); err != nil || cfg.Secrets.KeyFile != "/keys/master" {
		t.Fatalf("TOOLCAGE_MASTER_KEY_FILE: %q %v", cfg.Secrets.KeyFile, err)
	}
	t.Setenv("TOOLCAGE_SECRETS_KEY_FILE", "/keys/secrets")
	if cfg, err = LoadConfig("", base); err != nil || cfg.Secrets.KeyFile != "/keys/secrets" {
		t.Fatalf("TOOLCAGE_SECRETS_KEY_FILE: %q %v", cfg.Secrets.KeyFile, err)
	}
}

func TestSecretsKeyFileLooseModeRefused(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "k")
	if err := os.WriteFile(key, make([]byte, 32), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig("", map[string]any{"socket": filepath.Join(dir, "s.sock"), "data_dir": dir,
		"executor.path": executorPath, "secrets.key_file": key})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("New with a 0644 key file: %v", err)
	}
}

// TestJSSecrets: a JavaScript tool reads its declared secrets through utils,
// never an undeclared one, and the values it returns come back redacted.
func TestJSSecrets(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	const key = "wk-7Hq2Lp9Xz4Rt6Vb1Nm3"
	if err := c.Do(ctx, "PUT", "/v1/secrets/weatherapi", []byte(`{"value":"`+key+`"}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "PUT", "/v1/secrets/mailsvc", []byte(`{"service":{"fields":{"base_url":"https://mail.example.com","user":"ada-9Qz"},"entries":[{"label":"work","fields":{"user":"bob-4Kx"}}]}}`), nil); err != nil {
		t.Fatal(err)
	}
	create(t, c, `{"name":"reads_secrets","description":"reads","kind":"js","secrets":["weatherapi","mailsvc"],
		"js":{"code":"return {len: utils.getApiKey('weatherapi').length, key: utils.getSecret('weatherapi'), base: utils.getFieldValue('mailsvc','base_url'), work: utils.getConfigEntry('mailsvc','work').user, other: utils.getApiKey('nothere') === undefined}"}}`)
	create(t, c, `{"name":"no_secrets","description":"reads","kind":"js","js":{"code":"return utils.getApiKey('weatherapi') === undefined"}}`)
	var raw json.RawMessage
	if err := c.Do(ctx, "POST", "/v1/tools/reads_secrets/call", api.CallRequest{}, &raw); err != nil {
		t.Fatal(err)
	}
	var resp api.CallResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(resp.Result, &v); err != nil {
		t.Fatal(err)
	}
	// Every field of a service counts as secret, so base_url is redacted too.
	if v["len"] != float64(len(key)) || v["base"] != "[REDACTED:secret:mailsvc_base_url]" || v["other"] != true {
		t.Fatalf("result %s", resp.Result)
	}
	if strings.Contains(string(raw), key) || strings.Contains(string(raw), "bob-4Kx") || !strings.Contains(string(raw), "[REDACTED:secret:weatherapi]") {
		t.Fatalf("secret values left the daemon: %s", raw)
	}
	r, err := callTool(c, "no_secrets", nil)
	if err != nil || string(r.Result) != "true" {
		t.Fatalf("a tool without declared secrets: %v %s", err, r.Result)
	}
}
