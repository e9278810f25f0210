package daemon

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/store"
)

func profilesConfig(c *Config) {
	c.Profiles = ProfilesConfig{
		Groups: map[string]ToolGroupConfig{
			"shell":  {Categories: []string{"shell"}},
			"counts": {Tools: []string{"word_count"}},
		},
		Profiles: map[string]ProfileConfig{
			"no_shell":  {Deny: []string{"group:shell"}},
			"deny_wins": {Allow: []string{"*"}, Deny: []string{"group:counts"}},
			"add_back":  {Deny: []string{"group:shell"}, AlsoAllow: []string{"say_hi"}},
		},
		Callers: map[string]string{"agent1": "no_shell", "agent2": "add_back", "w_counts": "deny_wins"},
	}
}

func as(c *api.Client, id, worker, profile string) *api.Client {
	cc := *c
	cc.CallerID, cc.Worker, cc.Profile = id, worker, profile
	return &cc
}

func listNames(t *testing.T, c *api.Client, query string) []string {
	t.Helper()
	var l api.ToolList
	if err := c.Do(context.Background(), "GET", "/v1/tools"+query, nil, &l); err != nil {
		t.Fatalf("list %s: %v", query, err)
	}
	var names []string
	for _, tool := range l.Tools {
		names = append(names, toolName(t, tool))
	}
	if l.Total != len(names) {
		t.Fatalf("list %s: total %d for %d tools", query, l.Total, len(names))
	}
	slices.Sort(names)
	return names
}

func toolName(t *testing.T, tool api.Tool) string {
	t.Helper()
	s := string(tool.Definition)
	i := strings.Index(s, `"name":"`)
	if i < 0 {
		t.Fatalf("no name in %s", s)
	}
	s = s[i+len(`"name":"`):]
	return s[:strings.IndexByte(s, '"')]
}

func TestToolProfiles(t *testing.T) {
	td := startDaemon(t, "", profilesConfig)
	c := td.client
	create(t, c, `{"name":"say_hi","description":"d","kind":"shell","category":"shell","shell":{"command":"echo hi"}}`)
	create(t, c, `{"name":"list_root","description":"d","kind":"shell","category":"Shell","shell":{"command":"true"}}`)
	create(t, c, `{"name":"word_count","description":"d","kind":"js","category":"text","js":{"code":"return 1"}}`)

	// A caller mapped to a profile denying group:shell: refused, recorded.
	agent1 := as(c, "agent1", "", "")
	_, err := callTool(agent1, "say_hi", nil)
	if ae := apiErr(t, err); ae.Code != errdefs.PolicyDenied || !strings.Contains(ae.Message, `"no_shell"`) ||
		!strings.Contains(ae.Message, `deny entry "group:shell"`) || ae.CallID == "" {
		t.Fatalf("agent1 say_hi: %+v", ae)
	}
	if _, err := callTool(agent1, "list_root", nil); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("category match ignores case: %v", err)
	}
	if r, err := callTool(agent1, "word_count", nil); err != nil || string(r.Result) != "1" {
		t.Fatalf("agent1 word_count: %+v %v", r, err)
	}
	var execs api.ExecutionList
	if err := c.Do(context.Background(), "GET", "/v1/executions?tool=say_hi", nil, &execs); err != nil {
		t.Fatal(err)
	}
	if len(execs.Executions) != 1 || execs.Executions[0].Outcome != store.OutcomeRefused || execs.Executions[0].ErrorCode != string(errdefs.PolicyDenied) ||
		execs.Executions[0].CallerID != "agent1" {
		t.Fatalf("audit: %+v", execs.Executions)
	}

	// The effective sets.
	all := []string{"list_root", "say_hi", "word_count"}
	if got := listNames(t, c, ""); !slices.Equal(got, all) {
		t.Fatalf("all: %v", got)
	}
	if got := listNames(t, c, "?profile=no_shell"); !slices.Equal(got, []string{"word_count"}) {
		t.Fatalf("no_shell: %v", got)
	}
	if got := listNames(t, c, "?profile=deny_wins"); !slices.Equal(got, []string{"list_root", "say_hi"}) {
		t.Fatalf("deny_wins: %v", got)
	}
	if got := listNames(t, c, "?profile=add_back"); !slices.Equal(got, []string{"say_hi", "word_count"}) {
		t.Fatalf("add_back: %v", got)
	}
	if got := listNames(t, c, "?profile=ADD_BACK&kind=js"); !slices.Equal(got, []string{"word_count"}) {
		t.Fatalf("add_back js: %v", got)
	}
	var l api.ToolList
	if err := c.Do(context.Background(), "GET", "/v1/tools?profile=add_back&limit=1&offset=1", nil, &l); err != nil || l.Total != 2 || len(l.Tools) != 1 {
		t.Fatalf("paged: %+v %v", l, err)
	}
	if err := c.Do(context.Background(), "GET", "/v1/tools?profile=nope", nil, &l); codeOf(err) != errdefs.InvalidRequest {
		t.Fatalf("unknown profile: %v", err)
	}

	// Deny beats allow: a worker mapped to deny_wins (allow *, deny word_count).
	w := as(c, "someone", "w_counts", "")
	if _, err := callTool(w, "word_count", nil); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("deny beats allow: %v", err)
	}
	if _, err := callTool(w, "say_hi", nil); err != nil {
		t.Fatalf("allowed by *: %v", err)
	}
	// Also-allow adds say_hi back over deny group:shell; list_root stays out.
	agent2 := as(c, "agent2", "", "")
	if r, err := callTool(agent2, "say_hi", nil); err != nil || !strings.Contains(string(r.Result), "hi") {
		t.Fatalf("also_allow: %+v %v", r, err)
	}
	if _, err := callTool(agent2, "list_root", nil); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("agent2 list_root: %v", err)
	}
	// The header narrows, never widens: agent1 asking for add_back is
	// still held to no_shell; an unmapped caller can narrow itself.
	if _, err := callTool(as(c, "agent1", "", "add_back"), "say_hi", nil); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("header widened: %v", err)
	}
	if _, err := callTool(as(c, "free", "", "no_shell"), "say_hi", nil); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("header did not narrow: %v", err)
	}
	if _, err := callTool(as(c, "free", "", "ghost"), "say_hi", nil); codeOf(err) != errdefs.InvalidRequest {
		t.Fatalf("unknown header profile: %v", err)
	}
	// Mapped to nothing, no header: everything.
	if _, err := callTool(as(c, "free", "", ""), "list_root", nil); err != nil {
		t.Fatalf("unmapped caller: %v", err)
	}
}

func TestProfilesConfigValidated(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.yaml")
	bad := `profiles:
  global: strict
  groups: {Shell: {categories: [shell]}}
  profiles:
    agent: {deny: [group:SHELL, group:nope], also_allow: [uptime]}
  callers: {claude: agent, bob: missing}
`
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(file, map[string]any{"data_dir": t.TempDir()})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{`unknown tool group "nope"`, `global profile "strict" is not defined`, `"bob" maps to profile "missing"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), `"shell"`) {
		t.Errorf("group names are case-insensitive: %v", err)
	}
	good := `profiles:
  groups: {shell: {categories: [shell]}}
  profiles: {agent: {deny: ["group:shell"], also_allow: [uptime]}}
  callers: {claude: agent}
`
	if err := os.WriteFile(file, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(file, map[string]any{"data_dir": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Profiles.ToolProfiles(); !p.Has("agent") {
		t.Fatalf("profiles: %+v", p)
	}
}
