package daemon

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

const workerW1 = `name: w1
description: the test worker
tools: [adder, echo_ask, spin, blocked_one, missing_tool]
tool_files: [tools/*.yaml]
approval:
  default: ask
  tools: {adder: preApproved, blocked_one: preApproved}
limits: {timeout: 1s}
agent_tools: {create: false}
`

const localSum = `name: local_sum
description: sums a list, for this worker only
kind: js
js:
  code: return 1
`

// writeFile writes a test file, making its directory.
func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := writeFileErr(path, body); err != nil {
		t.Fatal(err)
	}
}

func writeFileErr(path, body string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(body), 0o600)
}

func addWorker(c *api.Client, path string) (api.WorkerToken, error) {
	var out api.WorkerToken
	err := c.Do(context.Background(), "POST", "/v1/workers", api.WorkerAddRequest{Path: path}, &out)
	return out, err
}

func workerToolsSetup(t *testing.T, c *api.Client) {
	t.Helper()
	create(t, c, jsTool)
	create(t, c, `{"name":"echo_ask","description":"d","kind":"js","approval":"ask","js":{"code":"return args"}}`)
	create(t, c, `{"name":"spin","description":"d","kind":"js","limits":{"timeout":"20s"},"js":{"code":"for(;;){}"}}`)
	create(t, c, `{"name":"blocked_one","description":"d","kind":"js","approval":"blocked","js":{"code":"return 1"}}`)
	create(t, c, `{"name":"hidden","description":"d","kind":"js","js":{"code":"return 1"}}`)
}

func TestWorkerRegistryAndCalls(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	workerToolsSetup(t, c)
	dir := t.TempDir()
	path := filepath.Join(dir, "w1.yaml")
	writeFile(t, path, workerW1)
	writeFile(t, filepath.Join(dir, "tools", "local_sum.yaml"), localSum)

	// Registration: bad requests first.
	if _, err := addWorker(c, "w1.yaml"); codeOf(err) != errdefs.InvalidRequest {
		t.Fatalf("relative path: %v", err)
	}
	broken := filepath.Join(dir, "broken.yaml")
	writeFile(t, broken, "name: broken\nlimits: {timeout: soon}\n")
	if _, err := addWorker(c, broken); codeOf(err) != errdefs.InvalidDefinition || !strings.Contains(err.Error(), "broken.yaml:2:") {
		t.Fatalf("broken file: %v", err)
	}
	ghost := filepath.Join(dir, "ghost.yaml")
	writeFile(t, ghost, "name: ghost\nprofile: no_such_profile\n")
	if _, err := addWorker(c, ghost); codeOf(err) != errdefs.InvalidRequest || !strings.Contains(err.Error(), "no_such_profile") {
		t.Fatalf("unknown profile: %v", err)
	}

	// The token is shown once, at registration.
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^tcw_[a-z2-7]{52}$`).MatchString(added.Token) || added.TokenID == "" || added.Worker.Name != "w1" || added.Worker.Path != path {
		t.Fatalf("added: %+v", added)
	}
	if _, err := addWorker(c, path); codeOf(err) != errdefs.Conflict {
		t.Fatalf("same path again: %v", err)
	}
	again := filepath.Join(dir, "again.yaml")
	writeFile(t, again, "name: w1\n")
	if _, err := addWorker(c, again); codeOf(err) != errdefs.Conflict {
		t.Fatalf("same name again: %v", err)
	}
	var raw []byte
	for _, p := range []string{"/v1/workers", "/v1/workers/w1"} {
		var m map[string]any
		if err := c.Do(context.Background(), "GET", p, nil, &m); err != nil {
			t.Fatal(err)
		}
		raw = append(raw, mustJSON(m)...)
	}
	if strings.Contains(string(raw), added.Token) {
		t.Fatal("the token is shown again after registration")
	}

	// worker show: each effective tool with its approval.
	var shown api.Worker
	if err := c.Do(context.Background(), "GET", "/v1/workers/w1", nil, &shown); err != nil {
		t.Fatal(err)
	}
	want := []api.WorkerTool{
		{Name: "adder", Source: "catalog", Approval: "preApproved"},
		{Name: "echo_ask", Source: "catalog", Approval: "ask"},
		{Name: "spin", Source: "catalog", Approval: "ask"},
		{Name: "blocked_one", Source: "catalog", Approval: "blocked"},
		{Name: "missing_tool", Source: "catalog", Missing: true},
		{Name: "local_sum", Source: filepath.Join(dir, "tools", "local_sum.yaml"), Approval: "ask"},
	}
	if !slices.Equal(shown.Tools, want) || shown.Description != "the test worker" {
		t.Fatalf("worker show:\n got %+v\nwant %+v", shown.Tools, want)
	}

	agent := withToken(c, added.Token)
	// The agent sees only its worker's tools.
	if got := listNames(t, agent, ""); !slices.Equal(got, []string{"adder", "blocked_one", "echo_ask", "local_sum", "spin"}) {
		t.Fatalf("agent's tool list: %v", got)
	}
	if got := listNames(t, c, ""); !slices.Contains(got, "hidden") {
		t.Fatalf("person's tool list: %v", got)
	}
	if err := agent.Do(context.Background(), "GET", "/v1/tools/hidden", nil, nil); codeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("agent GET hidden: %v", err)
	}
	// Its worker does not let it make tools, run ad-hoc code, or look
	// at tools outside it.
	for _, tt := range []struct {
		method, path string
		body         any
		code         errdefs.Code
	}{
		{"POST", "/v1/tools", []byte(`{"name":"mine","description":"d","kind":"js","js":{"code":"return 1"}}`), errdefs.Forbidden},
		{"PATCH", "/v1/tools/adder", []byte(`{"description":"x"}`), errdefs.Forbidden},
		{"POST", "/v1/js", api.JSRequest{Code: "return 1"}, errdefs.Forbidden},
		{"GET", "/v1/tools/hidden/history", nil, errdefs.ToolNotFound},
		{"POST", "/v1/tools/hidden/render", api.CallRequest{}, errdefs.ToolNotFound},
	} {
		if err := agent.Do(context.Background(), tt.method, tt.path, tt.body, nil); codeOf(err) != tt.code {
			t.Fatalf("agent %s %s: %v, want %s", tt.method, tt.path, err, tt.code)
		}
	}
	// Precedence through real calls, for the agent and for a person
	// narrowed to the worker (call --worker).
	narrowed := *c
	narrowed.Worker = "w1"
	for _, cl := range []*api.Client{agent, &narrowed} {
		if r, err := callTool(cl, "adder", map[string]any{"a": 1, "b": 2}); err != nil || string(r.Result) != "3" {
			t.Fatalf("adder (worker pre-approves a person's tool): %v %+v", err, r)
		}
		nw := noWait(cl)
		for _, name := range []string{"echo_ask", "local_sum"} {
			if _, err := callTool(nw, name, nil); codeOf(err) != errdefs.ApprovalRequired {
				t.Fatalf("%s (tool asks / worker default ask): %v", name, err)
			}
		}
		if _, err := callTool(cl, "blocked_one", nil); codeOf(err) != errdefs.PolicyDenied {
			t.Fatalf("blocked_one (the tool's blocked is never loosened): %v", err)
		}
		_, hiddenErr := callTool(cl, "hidden", nil)
		_, nopeErr := callTool(cl, "nope", nil)
		if codeOf(hiddenErr) != errdefs.ToolNotFound || strings.Replace(hiddenErr.Error(), "hidden", "X", 1) != strings.Replace(nopeErr.Error(), "nope", "X", 1) {
			t.Fatalf("a tool outside the worker reads as absent: %v / %v", hiddenErr, nopeErr)
		}
	}
	// The person, without the worker, still calls hidden.
	if _, err := callTool(c, "hidden", nil); err != nil {
		t.Fatalf("person calls hidden: %v", err)
	}
	var ex api.ExecutionList
	if err := c.Do(context.Background(), "GET", "/v1/executions?tool=adder&limit=1", nil, &ex); err != nil {
		t.Fatal(err)
	}
	if e := ex.Executions[0]; e.CallerType != "llm" || e.Worker != "w1" || e.TokenID != "" {
		t.Fatalf("narrowed call's record: %+v", e)
	}
	// The worker's 1s timeout caps spin's 20s. spin asks (the worker's
	// default): allow it for good first.
	_, err = callTool(noWait(agent), "spin", nil)
	ae := apiErr(t, err)
	if ae.Code != errdefs.ApprovalRequired {
		t.Fatalf("spin: %+v", ae)
	}
	if err := c.Do(context.Background(), "POST", "/v1/approvals/"+ae.ApprovalID+"/allow", api.ApprovalDecision{Always: true}, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = callTool(agent, "spin", nil)
	if ae := apiErr(t, err); ae.Code != errdefs.Timeout || time.Since(start) > 8*time.Second {
		t.Fatalf("spin under the worker's 1s cap: %+v after %v", ae, time.Since(start))
	}

	// The agent may not manage workers; each attempt is refused and logged.
	for _, tt := range []struct{ method, path, act string }{
		{"POST", "/v1/workers/w1/token", "worker.token.rotate"},
		{"DELETE", "/v1/workers/w1/token", "worker.token.revoke"},
		{"DELETE", "/v1/workers/w1", "worker.rm"},
	} {
		if err := agent.Do(context.Background(), tt.method, tt.path, nil, nil); codeOf(err) != errdefs.Forbidden {
			t.Fatalf("agent %s %s: %v", tt.method, tt.path, err)
		}
		if a := adminActs(t, c)[0]; a.Act != tt.act || a.Outcome != "refused" || a.TokenID != added.TokenID {
			t.Fatalf("refusal recorded as %+v", a)
		}
	}
	if _, err := addWorker(agent, again); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("agent registers a worker: %v", err)
	}
	if a := adminActs(t, c)[0]; a.Act != "worker.add" || a.Outcome != "refused" || a.CallerID != "worker:w1" {
		t.Fatalf("refused add recorded as %+v", a)
	}
	if err := agent.Do(context.Background(), "POST", "/v1/workers", []byte(`{"nonsense":1}`), nil); codeOf(err) != errdefs.Forbidden {
		t.Fatalf("agent registers with a bad body: %v", err)
	}
	if a := adminActs(t, c)[0]; a.Act != "worker.add" || a.Outcome != "refused" {
		t.Fatalf("refused add with a bad body recorded as %+v", a)
	}
	// An agent reads its own worker's calls and approvals only.
	var mine api.ExecutionList
	if err := agent.Do(context.Background(), "GET", "/v1/executions?limit=200", nil, &mine); err != nil || len(mine.Executions) == 0 {
		t.Fatalf("agent's executions: %v %+v", err, mine)
	}
	for _, e := range mine.Executions {
		if e.Worker != "w1" {
			t.Fatalf("agent sees a call not through its worker: %+v", e)
		}
	}
	var aps api.ApprovalList
	if err := agent.Do(context.Background(), "GET", "/v1/approvals", nil, &aps); err != nil || len(aps.Approvals) == 0 {
		t.Fatalf("agent's approvals: %v %+v", err, aps)
	}
	for _, a := range aps.Approvals {
		if a.CallerID != "worker:w1" {
			t.Fatalf("agent sees another caller's approval: %+v", a)
		}
	}
	// An agent sees its own worker only.
	var wl api.WorkerList
	if err := agent.Do(context.Background(), "GET", "/v1/workers", nil, &wl); err != nil || len(wl.Workers) != 1 {
		t.Fatalf("agent lists workers: %v %+v", err, wl)
	}

	// Hot reload: a good edit takes effect, a broken one keeps the last
	// good version and says where it broke.
	good := strings.Replace(workerW1, "missing_tool]", "missing_tool, hidden]", 1)
	good = strings.Replace(good, "blocked_one: preApproved}", "blocked_one: preApproved, hidden: preApproved}", 1)
	writeFile(t, path, good)
	waitFor(t, "the good edit", func() bool { _, err := callTool(noWait(agent), "hidden", nil); return err == nil })
	writeFile(t, path, strings.Replace(good, "limits: {timeout: 1s}", "limits: {timeout: soon}", 1))
	waitFor(t, "the broken edit to be refused", func() bool {
		var v api.Worker
		return c.Do(context.Background(), "GET", "/v1/workers/w1", nil, &v) == nil && strings.Contains(v.ReloadError, "w1.yaml:8:")
	})
	if _, err := callTool(agent, "hidden", nil); err != nil {
		t.Fatalf("the last good version is gone: %v", err)
	}

	// Rotation: the old token is refused, the new one works.
	var rot api.WorkerToken
	if err := c.Do(context.Background(), "POST", "/v1/workers/w1/token", nil, &rot); err != nil || rot.Token == added.Token {
		t.Fatalf("rotate: %v %+v", err, rot)
	}
	if _, err := callTool(agent, "adder", map[string]any{"a": 1, "b": 1}); codeOf(err) != errdefs.Unauthorized {
		t.Fatalf("old token: %v", err)
	}
	agent = withToken(c, rot.Token)
	if _, err := callTool(agent, "adder", map[string]any{"a": 1, "b": 1}); err != nil {
		t.Fatalf("new token: %v", err)
	}
	// Removal revokes it.
	if err := c.Do(context.Background(), "DELETE", "/v1/workers/w1", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := callTool(agent, "adder", map[string]any{"a": 1, "b": 1}); codeOf(err) != errdefs.Unauthorized {
		t.Fatalf("token of a removed worker: %v", err)
	}
	if err := c.Do(context.Background(), "DELETE", "/v1/workers/w1", nil, nil); codeOf(err) != errdefs.NotFound {
		t.Fatalf("second rm: %v", err)
	}
}

func TestWorkerRateLimitAndRestart(t *testing.T) {
	data := t.TempDir()
	td := startDaemon(t, data, nil)
	c := td.client
	create(t, c, jsTool)
	path := filepath.Join(t.TempDir(), "w2.yaml")
	writeFile(t, path, "name: w2\ntools: [adder]\nrate_limit: {per_minute: 1, burst: 2}\n")
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := withToken(c, added.Token)
	for i := range 2 {
		if _, err := callTool(agent, "adder", map[string]any{"a": i, "b": 1}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	_, err = callTool(agent, "adder", map[string]any{"a": 1, "b": 1})
	if ae := apiErr(t, err); ae.Code != errdefs.RateLimited || !strings.Contains(ae.Message, "worker") {
		t.Fatalf("third call: %+v", ae)
	}
	// The person, not through the worker, is not charged.
	if _, err := callTool(c, "adder", map[string]any{"a": 1, "b": 1}); err != nil {
		t.Fatalf("person: %v", err)
	}
	// A restarted daemon still knows the worker and its token.
	td.stop()
	td = startDaemon(t, data, nil)
	var v api.Worker
	if err := withToken(td.client, added.Token).Do(context.Background(), "GET", "/v1/workers/w2", nil, &v); err != nil || v.Path != path {
		t.Fatalf("after restart: %v %+v", err, v)
	}
	// ... and watches its file again.
	writeFile(t, path, "name: w2\ntools: []\n")
	waitFor(t, "the edit after restart", func() bool {
		_, err := callTool(withToken(td.client, added.Token), "adder", map[string]any{"a": 1, "b": 1})
		return codeOf(err) == errdefs.ToolNotFound
	})
	// A revoked token is refused; the worker stays until a new one is issued.
	if err := td.client.Do(context.Background(), "DELETE", "/v1/workers/w2/token", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := withToken(td.client, added.Token).Do(context.Background(), "GET", "/v1/workers/w2", nil, nil); codeOf(err) != errdefs.Unauthorized {
		t.Fatalf("revoked token: %v", err)
	}
	if a := adminActs(t, td.client)[0]; a.Act != "worker.token.revoke" || a.Target != "w2" || a.Outcome != "ok" {
		t.Fatalf("revoke recorded as %+v", a)
	}
	var rot api.WorkerToken
	if err := td.client.Do(context.Background(), "POST", "/v1/workers/w2/token", nil, &rot); err != nil {
		t.Fatal(err)
	}
	if err := withToken(td.client, rot.Token).Do(context.Background(), "GET", "/v1/workers/w2", nil, nil); err != nil {
		t.Fatalf("new token after revoke: %v", err)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A worker whose agent may make tools: what it makes joins its tool set,
// and no other worker's.
func TestWorkerAgentMadeTools(t *testing.T) {
	td := startDaemon(t, "", nil)
	c := td.client
	create(t, c, jsTool)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "maker.yaml"), "name: maker\ntools: [adder]\nagent_tools: {create: true}\n")
	writeFile(t, filepath.Join(dir, "other.yaml"), "name: other\ntools: [adder]\nagent_tools: {create: true}\n")
	m, err := addWorker(c, filepath.Join(dir, "maker.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := addWorker(c, filepath.Join(dir, "other.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	maker, other := withToken(c, m.Token), withToken(c, o.Token)
	create(t, maker, `{"name":"mine","description":"d","kind":"js","approval":"preApproved","js":{"code":"return 7"}}`)

	if got := listNames(t, maker, ""); !slices.Equal(got, []string{"adder", "mine"}) {
		t.Fatalf("maker's tools: %v", got)
	}
	if r, err := callTool(noWait(maker), "mine", nil); err != nil || string(r.Result) != "7" {
		t.Fatalf("maker calls mine: %v %+v", err, r)
	}
	if got := listNames(t, other, ""); !slices.Equal(got, []string{"adder"}) {
		t.Fatalf("other's tools: %v", got)
	}
	if _, err := callTool(other, "mine", nil); codeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("other calls mine: %v", err)
	}
	if err := other.Do(context.Background(), "DELETE", "/v1/tools/mine", nil, nil); codeOf(err) != errdefs.ToolNotFound {
		t.Fatalf("other deletes mine: %v", err)
	}
	var v api.Worker
	if err := c.Do(context.Background(), "GET", "/v1/workers/maker", nil, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Tools) != 2 || v.Tools[1].Name != "mine" || v.Tools[1].Source != "agent" || v.Tools[1].Approval == "" {
		t.Fatalf("worker show maker: %+v", v.Tools)
	}
	// Turning create off takes the agent's tools out of its set.
	writeFile(t, filepath.Join(dir, "maker.yaml"), "name: maker\ntools: [adder]\nagent_tools: {create: false}\n")
	waitFor(t, "the edit", func() bool { _, err := callTool(maker, "mine", nil); return codeOf(err) == errdefs.ToolNotFound })
}

// The worker's profile narrows its tools; an edit naming an unknown
// profile is refused like a broken one. A person's tool that asks runs
// when the worker pre-approves it by name.
func TestWorkerProfileAndPreApproval(t *testing.T) {
	td := startDaemon(t, "", profilesConfig)
	c := td.client
	create(t, c, `{"name":"say_hi","description":"d","kind":"shell","category":"shell","shell":{"command":"echo hi"}}`)
	create(t, c, `{"name":"word_count","description":"d","kind":"js","category":"text","js":{"code":"return 1"}}`)
	create(t, c, `{"name":"asks","description":"d","kind":"js","approval":"ask","js":{"code":"return 2"}}`)
	path := filepath.Join(t.TempDir(), "prof.yaml")
	file := "name: prof\nprofile: no_shell\ntools: [say_hi, word_count, asks]\napproval:\n  tools: {asks: preApproved}\n"
	writeFile(t, path, file)
	added, err := addWorker(c, path)
	if err != nil {
		t.Fatal(err)
	}
	agent := withToken(c, added.Token)
	if _, err := callTool(agent, "say_hi", nil); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("say_hi under no_shell: %v", err)
	}
	if r, err := callTool(agent, "word_count", nil); err != nil || string(r.Result) != "1" {
		t.Fatalf("word_count: %v %+v", err, r)
	}
	if r, err := callTool(noWait(agent), "asks", nil); err != nil || string(r.Result) != "2" {
		t.Fatalf("asks, pre-approved by the worker: %v %+v", err, r)
	}
	if _, err := callTool(noWait(c), "asks", nil); codeOf(err) != errdefs.ApprovalRequired {
		t.Fatalf("asks for the person, without the worker: %v", err)
	}
	if got := listNames(t, agent, ""); !slices.Equal(got, []string{"asks", "word_count"}) {
		t.Fatalf("agent's tools under no_shell: %v", got)
	}
	writeFile(t, path, strings.Replace(file, "no_shell", "ghost", 1))
	waitFor(t, "the edit to be refused", func() bool {
		var v api.Worker
		return c.Do(context.Background(), "GET", "/v1/workers/prof", nil, &v) == nil && strings.Contains(v.ReloadError, `"ghost"`) && v.Profile == "no_shell"
	})
	if _, err := callTool(agent, "say_hi", nil); codeOf(err) != errdefs.PolicyDenied {
		t.Fatalf("say_hi after the refused edit: %v", err)
	}
}
