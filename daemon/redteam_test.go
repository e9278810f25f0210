package daemon

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// Red-team of what only a person may do (branch redteam): an agent with a
// worker token tries every person-only route in other spellings and
// methods, lifts its own tools past approval through the tool routes, and
// claims a person's identity with headers. Each attempt must fail, and
// nothing it aimed at may change.
func TestRedTeamAgentCannotActAsPerson(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	ctx := context.Background()
	create(t, c, jsTool)
	path := filepath.Join(t.TempDir(), "maker.yaml")
	writeFile(t, path, "name: maker\ntools: [adder]\nagent_tools: {create: true}\n")
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	tok := added.Token
	other := registerRaw(t, td, "other")
	agent := withToken(c, tok)

	// Person-only routes in other spellings, methods and overrides. The
	// server may answer 403, 404, 405 or a redirect; never 2xx.
	bearer := http.Header{"Authorization": {"Bearer " + tok}}
	withHdr := func(k, v string) http.Header {
		h := bearer.Clone()
		h.Set(k, v)
		return h
	}
	attempts := []struct {
		method, path string
		hdr          http.Header
		body         string
	}{
		{"PUT", "/v1/secrets/pwned", bearer, `{"value":"x"}`},
		{"PUT", "/v1/secrets/pwned/", bearer, `{"value":"x"}`},
		{"PUT", "//v1/secrets/pwned", bearer, `{"value":"x"}`},
		{"PUT", "/v1//secrets/pwned", bearer, `{"value":"x"}`},
		{"PUT", "/v1/./secrets/pwned", bearer, `{"value":"x"}`},
		{"PUT", "/v1/x/../secrets/pwned", bearer, `{"value":"x"}`},
		{"PUT", "/V1/SECRETS/pwned", bearer, `{"value":"x"}`},
		{"PUT", "/v1/%73ecrets/pwned", bearer, `{"value":"x"}`},
		{"POST", "/v1/secrets/pwned", bearer, `{"value":"x"}`},
		{"POST", "/v1/secrets/pwned", withHdr("X-HTTP-Method-Override", "PUT"), `{"value":"x"}`},
		{"PATCH", "/v1/secrets/pwned", bearer, `{"value":"x"}`},
		{"GET", "/v1/secrets", bearer, ""},
		{"GET", "/v1/secrets/", bearer, ""},
		{"HEAD", "/v1/secrets", bearer, ""},
		{"GET", "/v1/secrets?caller=user", bearer, ""},
		{"POST", "/v1/secrets/rotate", bearer, ""},
		{"POST", "/v1/workers", bearer, `{"path":"` + path + `"}`},
		{"DELETE", "/v1/workers/other", bearer, ""},
		{"DELETE", "/v1/workers/other/", bearer, ""},
		{"DELETE", "/v1/workers/%6fther", bearer, ""},
		{"POST", "/v1/workers/other/token", bearer, ""},
		{"DELETE", "/v1/workers/other/token", bearer, ""},
		{"POST", "/v1/workers/maker/token", bearer, ""},
		{"POST", "/v1/ui/login", bearer, ""},
		{"GET", "/v1/admin-acts", bearer, ""},
		{"GET", "/v1/metrics", bearer, ""},
		{"GET", "/v1/metrics/", bearer, ""},
		{"GET", "/V1/METRICS", bearer, ""},
		{"GET", "/v1/%6detrics", bearer, ""},
		{"GET", "/v1/x/../metrics", bearer, ""},
		{"POST", "/v1/tools/adder/approve", bearer, ""},
		{"POST", "/v1/tools/adder/approve/", bearer, ""},
		{"POST", "/v1/tools/adder%2Fapprove", bearer, ""},
		{"POST", "/v1/approvals/x/allow", bearer, ""},
		{"PUT", "/v1/secrets/pwned", withHdr("Toolcage-Caller-Type", "user"), `{"value":"x"}`},
		{"PUT", "/v1/secrets/pwned", withHdr("Toolcage-Caller-Type", "USER"), `{"value":"x"}`},
		{"PUT", "/v1/secrets/pwned", withHdr("Toolcage-Caller-Type", " user"), `{"value":"x"}`},
		{"PUT", "/v1/secrets/pwned", withHdr("Toolcage-Caller-Id", "uid:0"), `{"value":"x"}`},
		{"PUT", "/v1/secrets/pwned", withHdr("Toolcage-Worker", "other"), `{"value":"x"}`},
		{"PUT", "/v1/secrets/pwned", withHdr("Toolcage-Worker", ""), `{"value":"x"}`},
		{"PUT", "/v1/secrets/pwned", withHdr("X-Forwarded-User", "root"), `{"value":"x"}`},
		{"PUT", "/v1/secrets/pwned", http.Header{"Authorization": {"bearer " + tok}}, `{"value":"x"}`},
		{"PUT", "/v1/secrets/pwned", http.Header{"Authorization": {"Bearer  " + tok}}, `{"value":"x"}`},
		{"PUT", "/v1/secrets/pwned", http.Header{"Authorization": {"Bearer " + tok + " "}}, `{"value":"x"}`},
		{"PUT", "/v1/secrets/pwned", http.Header{"Authorization": {"Bearer " + tok}, "authorization": {"Bearer " + other}}, `{"value":"x"}`},
		{"PUT", "/v1/secrets/pwned?token=", bearer, `{"value":"x"}`},
	}
	for _, a := range attempts {
		status, e := rawDo(t, td.cfg.Socket, a.method, a.path, a.hdr, a.body)
		if status < 300 {
			t.Errorf("%s %s %v: %d (%s)", a.method, a.path, a.hdr, status, e.Code)
		}
	}
	// Nothing happened: no secret, both workers and their tokens intact.
	var sl api.SecretList
	if err := c.Do(ctx, "GET", "/v1/secrets", nil, &sl); err != nil || len(sl.Secrets) != 0 {
		t.Fatalf("secrets after the attempts: %v %+v", err, sl)
	}
	for _, token := range []string{tok, other} {
		if err := withToken(c, token).Do(ctx, "GET", "/v1/health", nil, nil); err != nil {
			t.Fatalf("a token stopped working after the attempts: %v", err)
		}
	}

	// An agent's own tool stays pending whatever route it takes to lift it.
	pending := "name: lift\ndescription: d\nkind: shell\nshell: {command: \"echo hi\"}\n"
	var got api.Tool
	if err := agent.Do(ctx, "POST", "/v1/tools", []byte(pending), &got); err != nil || got.Status != "pending_approval" {
		t.Fatalf("agent tool: %v %+v", err, got)
	}
	for _, try := range []struct{ method, path, body string }{
		{"POST", "/v1/tools/lift/enable", ""},
		{"POST", "/v1/tools/lift/approve", ""},
		{"PATCH", "/v1/tools/lift", `{"status":"active"}`},
		{"PATCH", "/v1/tools/lift", `{"approval":"preApproved"}`},
		{"PATCH", "/v1/tools/lift", `{"created_by":"user"}`},
		{"PATCH", "/v1/tools/lift", `{"approved_version":1}`},
		{"PUT", "/v1/tools/lift", pending + "status: active\n"},
		{"PUT", "/v1/tools/lift", pending + "created_by: user\n"},
		{"PUT", "/v1/tools/lift", pending + "approval: preApproved\n"},
		{"POST", "/v1/tools/lift/rollback", `{"version":1}`},
		{"POST", "/v1/tools/lift/disable", ""},
		{"POST", "/v1/tools/lift/enable", ""},
	} {
		_ = agent.Do(ctx, try.method, try.path, []byte(try.body), nil)
		if err := c.Do(ctx, "GET", "/v1/tools/lift", nil, &got); err != nil {
			t.Fatal(err)
		}
		if got.Status == "active" || got.CreatedBy == "user" || got.ApprovedVersion != 0 {
			t.Fatalf("after %s %s %s: %+v", try.method, try.path, try.body, got)
		}
		if _, err := callTool(noWait(agent), "lift", nil); codeOf(err) != errdefs.ToolNotActive && codeOf(err) != errdefs.ToolNotFound && codeOf(err) != errdefs.Forbidden {
			t.Fatalf("after %s %s: call of the pending tool: %v", try.method, try.path, err)
		}
	}
	// A person's tool cannot be replaced, deleted or renamed over by the agent.
	for _, try := range []struct{ method, path, body string }{
		{"PUT", "/v1/tools/adder", "name: adder\ndescription: d\nkind: shell\nshell: {command: \"id\"}\n"},
		{"PATCH", "/v1/tools/adder", `{"js":{"code":"return 0"}}`},
		{"DELETE", "/v1/tools/adder?confirm=true", ""},
		{"POST", "/v1/tools", "name: adder\ndescription: d\nkind: js\njs: {code: return 0}\n"},
		{"POST", "/v1/tools", "name: ADDER\ndescription: d\nkind: js\njs: {code: return 0}\n"},
		{"POST", "/v1/tools/adder/rollback", `{"version":1}`},
	} {
		_ = agent.Do(ctx, try.method, try.path, []byte(try.body), nil)
	}
	if err := c.Do(ctx, "GET", "/v1/tools/adder", nil, &got); err != nil || got.Status != "active" || got.Version != 1 || got.CreatedBy != "user" || strings.Contains(string(got.Definition), "return 0") {
		t.Fatalf("person's tool after the agent's attempts: %v %+v", err, got)
	}
}
