package daemon

import (
	"context"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

func adminActs(t *testing.T, c *api.Client) []api.AdminAct {
	t.Helper()
	var l api.AdminActList
	if err := c.Do(context.Background(), "GET", "/v1/admin-acts?limit=200", nil, &l); err != nil {
		t.Fatalf("admin acts: %v", err)
	}
	return l.AdminActs
}

// personOnlyActs is every person-only route with the act it is logged as.
var personOnlyActs = []struct {
	act, method, path, target string
	body                      any
}{
	{"approval.allow", "POST", "/v1/approvals/a123/allow", "a123", nil},
	{"approval.deny", "POST", "/v1/approvals/a123/deny", "a123", nil},
	{"tool.approve", "POST", "/v1/tools/adder/approve", "adder", nil},
	{"tool.reject", "POST", "/v1/tools/adder/reject", "adder", nil},
	{"secret.set", "PUT", "/v1/secrets/api_key", "api_key", api.SecretValue{Value: new("v")}},
	{"secret.list", "GET", "/v1/secrets", "", nil},
	{"secret.rm", "DELETE", "/v1/secrets/api_key", "api_key", nil},
	{"secret.rotate", "POST", "/v1/secrets/rotate", "", nil},
}

func TestPersonOnlyActs(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	create(t, c, jsTool)
	tok := registerRaw(t, td, "helper")
	agent := withToken(c, tok)
	agent.Session = "sess-9"
	narrowed := llm(c)
	for _, tt := range personOnlyActs {
		for _, who := range []struct {
			name string
			c    *api.Client
		}{{"token", agent}, {"person narrowed to llm", narrowed}} {
			err := who.c.Do(context.Background(), tt.method, tt.path, tt.body, nil)
			if ae := apiErr(t, err); ae.Code != errdefs.Forbidden || ae.Status != 403 {
				t.Fatalf("%s by %s: %+v", tt.act, who.name, ae)
			}
		}
		acts := adminActs(t, c)
		tokenAct, narrowedAct := acts[1], acts[0]
		if tokenAct.Act != tt.act || tokenAct.Target != tt.target || tokenAct.Outcome != "refused" || tokenAct.ErrorCode != "forbidden" ||
			tokenAct.CallerType != "llm" || tokenAct.CallerID != "worker:helper" || tokenAct.Worker != "helper" ||
			tokenAct.TokenID == "" || tokenAct.Session != "sess-9" {
			t.Errorf("%s by token recorded as %+v", tt.act, tokenAct)
		}
		if narrowedAct.Act != tt.act || narrowedAct.Outcome != "refused" || narrowedAct.CallerType != "llm" || narrowedAct.TokenID != "" {
			t.Errorf("%s by narrowed person recorded as %+v", tt.act, narrowedAct)
		}
	}
	// Nothing was done: the secret was never set.
	var sl api.SecretList
	if err := c.Do(context.Background(), "GET", "/v1/secrets", nil, &sl); err != nil || len(sl.Secrets) != 0 {
		t.Fatalf("secrets after refusals: %v %+v", err, sl)
	}
	// A person's acts are recorded too, done or failed.
	if err := c.Do(context.Background(), "PUT", "/v1/secrets/api_key", api.SecretValue{Value: new("v")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(context.Background(), "DELETE", "/v1/secrets/nope", nil, nil); codeOf(err) != errdefs.NotFound {
		t.Fatalf("rm of a missing secret: %v", err)
	}
	acts := adminActs(t, c)
	if a := acts[0]; a.Act != "secret.rm" || a.Target != "nope" || a.Outcome != "failed" || a.ErrorCode != "not_found" || a.CallerType != "user" {
		t.Errorf("failed rm recorded as %+v", a)
	}
	if a := acts[1]; a.Act != "secret.set" || a.Target != "api_key" || a.Outcome != "ok" || a.CallerType != "user" || a.TokenID != "" {
		t.Errorf("secret set recorded as %+v", a)
	}
	// A long target is kept bounded.
	long := strings.Repeat("a", 2000)
	if err := agent.Do(context.Background(), "DELETE", "/v1/secrets/"+long, nil, nil); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("long rm: %v", err)
	}
	if a := adminActs(t, c)[0]; a.Act != "secret.rm" || len(a.Target) > 520 || !strings.HasPrefix(a.Target, "aaaa") {
		t.Errorf("long target recorded as %d bytes", len(a.Target))
	}
	// An agent may not read the admin log either.
	if err := agent.Do(context.Background(), "GET", "/v1/admin-acts", nil, nil); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("admin log read by an agent: %v", err)
	}
}
