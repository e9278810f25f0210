package main

import (
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
)

func TestAuditAdmin(t *testing.T) {
	t.Parallel()
	sock := startDaemon(t)
	mustOK(t, sock, "secrets", "list")
	wantExit(t, tcIn(t, sock, "v\n", "--caller-type", "llm", "secrets", "set", "api_token"), exitRefused, "only a person may set secrets (forbidden)")

	l := decodeStrict[api.AdminActList](t, mustOK(t, sock, "audit", "--admin", "--json").out)
	if len(l.AdminActs) != 2 {
		t.Fatalf("admin acts: %+v", l)
	}
	refused, listed := l.AdminActs[0], l.AdminActs[1]
	if refused.Act != "secret.set" || refused.Target != "api_token" || refused.Outcome != "refused" || refused.CallerType != "llm" {
		t.Errorf("refused set: %+v", refused)
	}
	if listed.Act != "secret.list" || listed.Outcome != "ok" || listed.CallerType != "user" {
		t.Errorf("list: %+v", listed)
	}
	out := mustOK(t, sock, "audit", "--admin").out
	for _, want := range []string{"ACT", "secret.set", "api_token", "refused", "forbidden", "secret.list", "user:uid:"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	wantExit(t, runCLI(t, "", "--socket", sock, "audit", "--admin", "--tool", "x"), exitUsage, "--tool and --admin")
}
