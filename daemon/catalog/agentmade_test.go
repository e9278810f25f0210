package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

func openCatalog(t *testing.T, opts ...Option) *Catalog {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "toolcage.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return New(st, opts...)
}

// agentDef writes a small tool of kind k with the given permissions and
// secrets; the kind blocks use the secret where there is one, as a real
// tool would.
func agentDef(t *testing.T, name, k string, perms, secrets []string) *Definition {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\ndescription: test tool\nkind: %s\n", name, k)
	if len(perms) > 0 {
		fmt.Fprintf(&b, "permissions: [%s]\n", strings.Join(perms, ", "))
	}
	if len(secrets) > 0 {
		fmt.Fprintf(&b, "secrets: [%s]\n", strings.Join(secrets, ", "))
	}
	switch k {
	case "js":
		b.WriteString("js:\n  code: return 1\n")
		if slices.Contains(perms, "network") {
			b.WriteString("  allowed_domains: [127.0.0.1]\n")
		}
	case "shell":
		b.WriteString("shell:\n  command: \"echo hello\"\n")
	case "http":
		b.WriteString("http:\n  method: get\n  url: \"https://api.example.test/x\"\n  allowed_domains: [api.example.test]\n")
	}
	d, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatalf("definition %s: %v\n%s", name, err, b.String())
	}
	return d
}

func codeOf(err error) errdefs.Code {
	var e *errdefs.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

var (
	person = principal.Caller{Type: CreatedByUser, ID: "alice"}
	agent  = principal.Caller{Type: CreatedByLLM, ID: "bot", Worker: "w1"}
)

// grant is a worker lookup granting api_token to worker w1 only.
func grant(_ context.Context, c principal.Caller) (AgentRules, error) {
	if c.Worker == "w1" {
		return AgentRules{Secrets: []string{"api_token"}}, nil
	}
	return AgentRules{}, nil
}

// TestCreatePendingMatrix creates a tool in every cell of kind ×
// permissions × secrets × caller (× always pending) through a real store
// and checks where it starts.
func TestCreatePendingMatrix(t *testing.T) {
	ctx := context.Background()
	kinds := []string{"js", "shell", "http"}
	permSets := [][]string{nil, {"network"}, {"filesystem"}, {"database"}}
	secretSets := [][]string{nil, {"api_token"}}
	for _, always := range []bool{false, true} {
		c := openCatalog(t, WithAgentRules(grant), WithAlwaysPending(always))
		n := 0
		for _, k := range kinds {
			for _, p := range permSets {
				for _, s := range secretSets {
					for _, caller := range []principal.Caller{person, agent} {
						n++
						name := fmt.Sprintf("t%d", n)
						wantPending := caller.Type == CreatedByLLM && (always || k != "js" || p != nil || s != nil)
						tool, err := c.Create(ctx, agentDef(t, name, k, p, s), caller)
						if err != nil {
							t.Fatalf("%s kind=%s perms=%v secrets=%v caller=%s: %v", name, k, p, s, caller.Type, err)
						}
						want, wantApproved := StatusActive, 1
						if wantPending {
							want, wantApproved = StatusPendingApproval, 0
						}
						if tool.Status != want || tool.ApprovedVersion != wantApproved {
							t.Errorf("kind=%s perms=%v secrets=%v caller=%s always=%v: status %s approved %d, want %s %d",
								k, p, s, caller.Type, always, tool.Status, tool.ApprovedVersion, want, wantApproved)
						}
					}
				}
			}
		}
	}
}

func TestUpdateByAgentGoesPending(t *testing.T) {
	ctx := context.Background()
	c := openCatalog(t, WithAgentRules(grant))
	if tool, err := c.Create(ctx, agentDef(t, "calc", "js", nil, nil), agent); err != nil || tool.Status != StatusActive {
		t.Fatalf("create: %v %+v", err, tool)
	}
	// Adding a secret (granted) sends it back to a person.
	tool, err := c.Update(ctx, "calc", agentDef(t, "calc", "js", nil, []string{"api_token"}), agent)
	if err != nil || tool.Status != StatusPendingApproval || tool.Version != 2 || tool.ApprovedVersion != 1 {
		t.Fatalf("update adding a secret: %v %+v", err, tool)
	}
	if tool, err = c.Approve(ctx, "calc", person); err != nil || tool.Status != StatusActive || tool.ApprovedVersion != 2 {
		t.Fatalf("approve: %v %+v", err, tool)
	}
	// Back to bare JavaScript: active again without a person.
	if tool, err = c.Update(ctx, "calc", agentDef(t, "calc", "js", nil, nil), agent); err != nil || tool.Status != StatusActive || tool.ApprovedVersion != 3 {
		t.Fatalf("update to bare js: %v %+v", err, tool)
	}
	// A person changing an agent's tool is not held to the agent's rules.
	if tool, err = c.Update(ctx, "calc", agentDef(t, "calc", "shell", []string{"shell"}, []string{"other"}), person); err != nil || tool.Status != StatusActive {
		t.Fatalf("person update: %v %+v", err, tool)
	}
}

func TestSecretGrant(t *testing.T) {
	ctx := context.Background()
	c := openCatalog(t, WithAgentRules(grant))
	noWorker := principal.Caller{Type: CreatedByLLM, ID: "bot"}
	otherWorker := principal.Caller{Type: CreatedByLLM, ID: "bot", Worker: "w2"}
	tests := []struct {
		name    string
		caller  principal.Caller
		secrets []string
		want    errdefs.Code
	}{
		{"granted", agent, []string{"api_token"}, ""},
		{"outside the grant", agent, []string{"db_password"}, errdefs.Forbidden},
		{"one inside one outside", agent, []string{"api_token", "db_password"}, errdefs.Forbidden},
		{"no worker, no grant", noWorker, []string{"api_token"}, errdefs.Forbidden},
		{"other worker, no grant", otherWorker, []string{"api_token"}, errdefs.Forbidden},
		{"no secrets need no grant", noWorker, nil, ""},
		{"a person names any secret", person, []string{"db_password"}, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Create(ctx, agentDef(t, fmt.Sprintf("g%d", i), "js", nil, tt.secrets), tt.caller)
			if codeOf(err) != tt.want {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
			if tt.want != "" && !strings.Contains(err.Error(), "grant") {
				t.Fatalf("message does not explain the grant: %v", err)
			}
		})
	}
	// Update and rollback are held to the grant too.
	if _, err := c.Create(ctx, agentDef(t, "u", "js", nil, nil), agent); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Update(ctx, "u", agentDef(t, "u", "js", nil, []string{"db_password"}), agent); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("update outside the grant: %v", err)
	}
	if _, err := c.Update(ctx, "u", agentDef(t, "u", "js", nil, []string{"db_password"}), person); err != nil {
		t.Fatalf("person update: %v", err) // version 2 names db_password
	}
	if _, err := c.Update(ctx, "u", agentDef(t, "u", "js", nil, nil), person); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Rollback(ctx, "u", 2, agent); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("agent rollback to a version outside the grant: %v", err)
	}
	// Without a lookup every agent is granted nothing.
	bare := openCatalog(t)
	if _, err := bare.Create(ctx, agentDef(t, "x", "js", nil, []string{"api_token"}), agent); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("no lookup: %v", err)
	}
	// A failing lookup stops the change.
	failing := openCatalog(t, WithAgentRules(func(context.Context, principal.Caller) (AgentRules, error) {
		return AgentRules{}, fmt.Errorf("registry down")
	}))
	if _, err := failing.Create(ctx, agentDef(t, "x", "js", nil, nil), agent); err == nil || !strings.Contains(err.Error(), "registry down") {
		t.Fatalf("failing lookup: %v", err)
	}
}

func TestWorkerAlwaysPending(t *testing.T) {
	ctx := context.Background()
	c := openCatalog(t, WithAgentRules(func(context.Context, principal.Caller) (AgentRules, error) {
		return AgentRules{AlwaysPending: true}, nil
	}))
	if tool, err := c.Create(ctx, agentDef(t, "bare", "js", nil, nil), agent); err != nil || tool.Status != StatusPendingApproval {
		t.Fatalf("worker always pending: %v %+v", err, tool)
	}
}

func TestApprovalDefaultFollowsCreator(t *testing.T) {
	ctx := context.Background()
	c := openCatalog(t)
	tests := []struct {
		name, yaml       string
		caller           principal.Caller
		approval, stored string
	}{
		{"person, none written", "", person, ApprovalPreApproved, ""},
		{"agent, none written", "", agent, ApprovalAsk, ""},
		{"agent writes preApproved", "approval: preApproved\n", agent, ApprovalPreApproved, ApprovalPreApproved},
		{"person writes ask", "approval: ask\n", person, ApprovalAsk, ApprovalAsk},
		{"agent writes blocked", "approval: blocked\n", agent, ApprovalBlocked, ApprovalBlocked},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("a%d", i)
			d, err := Parse([]byte("name: " + name + "\ndescription: d\nkind: js\n" + tt.yaml + "js: {code: return 1}\n"))
			if err != nil {
				t.Fatal(err)
			}
			tool, err := c.Create(ctx, d, tt.caller)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Get(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range []*Tool{tool, got} {
				if tl.Def.Approval != tt.approval || tl.Def.WrittenApproval() != tt.stored {
					t.Errorf("approval %q written %q, want %q %q", tl.Def.Approval, tl.Def.WrittenApproval(), tt.approval, tt.stored)
				}
			}
			st, err := c.st.GetTool(ctx, name)
			if err != nil || st.Approval != tt.stored {
				t.Fatalf("stored approval %q (%v), want %q", st.Approval, err, tt.stored)
			}
			vs, err := c.History(ctx, name)
			if err != nil || len(vs) != 1 || vs[0].Def.Approval != tt.approval {
				t.Fatalf("history: %v %+v", err, vs)
			}
		})
	}
	// Writing the effective default back (as 'tools show --definition'
	// then 'tools update' does) is no change.
	d, _ := Parse([]byte("name: a0\ndescription: d\nkind: js\napproval: preApproved\njs: {code: return 1}\n"))
	tool, err := c.Update(ctx, "a0", d, person)
	if err != nil || tool.Version != 1 || tool.Def.WrittenApproval() != "" {
		t.Fatalf("writing the default: %v %+v", err, tool)
	}
}

func TestAgentDeleteNeedsConfirm(t *testing.T) {
	ctx := context.Background()
	c := openCatalog(t)
	if _, err := c.Create(ctx, agentDef(t, "mine", "js", nil, nil), agent); err != nil {
		t.Fatal(err)
	}
	err := c.Delete(ctx, "mine", agent, false)
	if codeOf(err) != errdefs.InvalidRequest || !strings.Contains(err.Error(), "confirm") {
		t.Fatalf("unconfirmed delete: %v", err)
	}
	if _, err := c.Get(ctx, "mine"); err != nil {
		t.Fatalf("unconfirmed delete removed the tool: %v", err)
	}
	if err := c.Delete(ctx, "mine", agent, true); err != nil {
		t.Fatalf("confirmed delete: %v", err)
	}
	// A person needs no confirmation.
	if _, err := c.Create(ctx, agentDef(t, "theirs", "js", nil, nil), person); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "theirs", person, false); err != nil {
		t.Fatalf("person delete: %v", err)
	}
}
