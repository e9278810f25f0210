package main

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolcage/toolcage/daemon"
	"github.com/toolcage/toolcage/daemon/api"
)

const cliSecret = "cli-Hk3vQ9pWz7mYx2RtL5sN"

func TestSecretsCLI(t *testing.T) {
	t.Parallel()
	var auth atomic.Value
	auth.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"seen":"` + r.Header.Get("Authorization") + `"}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	ld := launchDaemon(t, func(c *daemon.Config) { c.HTTP.AllowPrivateHosts = []string{"localhost"} })
	sock := ld.socket

	// The value comes from stdin, one trailing newline dropped.
	r := tcIn(t, sock, cliSecret+"\n", "secrets", "set", "api_token")
	if r.code != exitOK || r.out != "Set secret api_token\n" {
		t.Fatalf("set: %v", r)
	}
	wantExit(t, tcIn(t, sock, "", "secrets", "set", "empty_one"), exitUsage, "stdin was empty")
	wantExit(t, tcIn(t, sock, "x", "secrets", "set", "a", cliSecret), exitUsage, "give one secret NAME")
	wantExit(t, tcIn(t, sock, "x", "secrets", "set"), exitUsage, "missing the secret NAME")
	wantExit(t, tcIn(t, sock, "value", "secrets", "set", "Bad-Name"), exitUsage, "must match")

	createTool(t, sock, `name: env_token
description: prints the token length
kind: shell
secrets: [api_token]
shell:
  command: "sh -c 'echo \"$TOKEN\"; printf %s \"$TOKEN\" | wc -c'"
  env:
    TOKEN: "{{secret.api_token}}"
`)
	createTool(t, sock, `name: whoami
description: calls an API with the token
kind: http
secrets: [api_token]
http:
  method: GET
  url: "http://localhost:`+u.Port()+`/me"
  headers:
    Authorization: "Bearer {{secret.api_token}}"
  allowed_domains: [localhost]
`)
	createTool(t, sock, `name: undeclared
description: uses a secret it does not list
kind: shell
shell:
  command: "echo {{secret.api_token}}"
`)
	createTool(t, sock, `name: needs_unset
description: lists a secret nobody set
kind: shell
secrets: [not_yet]
shell:
  command: "echo {{secret.not_yet}}"
`)

	r = mustOK(t, sock, "call", "env_token")
	if strings.Contains(r.out+r.err, cliSecret) || !strings.Contains(r.out, "[REDACTED:secret:api_token]") || !strings.Contains(r.out, "24") {
		t.Fatalf("env_token: %v", r)
	}
	r = mustOK(t, sock, "call", "whoami")
	if auth.Load() != "Bearer "+cliSecret {
		t.Fatalf("server saw %q", auth.Load())
	}
	if strings.Contains(r.out+r.err, cliSecret) || !strings.Contains(r.out, "Bearer [REDACTED:secret:api_token]") {
		t.Fatalf("whoami: %v", r)
	}
	r = mustOK(t, sock, "tools", "render", "whoami")
	if strings.Contains(r.out, cliSecret) {
		t.Fatalf("render shows the value: %v", r)
	}
	wantExit(t, tc(t, sock, "call", "undeclared"), exitRefused, "does not list under secrets", "policy_denied")
	wantExit(t, tc(t, sock, "call", "needs_unset"), exitUsage, "secret not_yet is not set; run toolcage secrets set not_yet")

	r = mustOK(t, sock, "secrets", "list")
	if !regexp.MustCompile(`(?m)^NAME\s+CREATED\s+UPDATED\s+USED_BY\n(api_token)\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+env_token,whoami\n$`).MatchString(r.out) {
		t.Fatalf("list: %q", r.out)
	}
	r = mustOK(t, sock, "secrets", "list", "--json")
	l := decodeStrict[api.SecretList](t, r.out)
	if len(l.Secrets) != 1 || l.Secrets[0].Name != "api_token" || strings.Join(l.Secrets[0].UsedBy, ",") != "env_token,whoami" {
		t.Fatalf("list --json: %v", r)
	}

	// Nothing the daemon answered, audited or stored holds the value.
	r = mustOK(t, sock, "audit", "--json")
	if strings.Contains(r.out, cliSecret) {
		t.Fatalf("audit holds the value: %s", r.out)
	}
	err := filepath.WalkDir(ld.dataDir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), cliSecret) {
			t.Errorf("%s holds the secret in plaintext", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	r = mustOK(t, sock, "secrets", "rm", "api_token")
	if r.out != "Removed secret api_token\n" {
		t.Fatalf("rm: %v", r)
	}
	wantExit(t, tc(t, sock, "secrets", "rm", "api_token"), exitFailure, `no secret named "api_token"`, "not_found")
	wantExit(t, tc(t, sock, "call", "env_token"), exitUsage, "secret api_token is not set")
	if r := mustOK(t, sock, "secrets", "list", "--json"); decodeStrict[api.SecretList](t, r.out).Secrets == nil ||
		len(decodeStrict[api.SecretList](t, r.out).Secrets) != 0 {
		t.Fatalf("list after rm: %v", r)
	}
}
