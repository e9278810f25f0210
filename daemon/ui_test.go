package daemon

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

// withUI turns the review page on, on a free loopback port.
func withUI(c *Config) { c.UI.Listen = "127.0.0.1:0" }

func TestUIConfig(t *testing.T) {
	for _, tc := range []struct {
		key, val string
		wantErr  string
	}{
		{"ui.listen", "127.0.0.1:8765", ""},
		{"ui.listen", "[::1]:8765", ""},
		{"ui.listen", "", ""},
		{"ui.listen", "0.0.0.0:8765", "ui.listen: must be a loopback IP"},
		{"ui.listen", "192.168.1.5:8765", "ui.listen: must be a loopback IP"},
		{"ui.listen", "localhost:8765", "ui.listen: must be a loopback IP"},
		{"ui.listen", "127.0.0.1", "ui.listen: want host:port"},
		{"ui.listen", "127.0.0.1:99999", "ui.listen: bad port"},
		{"ui.login_ttl", "0s", "ui.login_ttl must be positive"},
		{"ui.session_ttl", "-1h", "ui.session_ttl must be positive"},
	} {
		_, err := LoadConfig("", map[string]any{tc.key: tc.val, "data_dir": t.TempDir()})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s=%q: %v", tc.key, tc.val, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s=%q: err %v, want %q", tc.key, tc.val, err, tc.wantErr)
		}
	}
}

// uiLink asks the daemon for a login link as c.
func uiLink(t *testing.T, c *api.Client) string {
	t.Helper()
	var out api.UILogin
	if err := c.Do(context.Background(), "POST", "/v1/ui/login", nil, &out); err != nil {
		t.Fatal(err)
	}
	if time.Until(out.ExpiresAt) <= 0 {
		t.Fatalf("link expires at %v", out.ExpiresAt)
	}
	return out.URL
}

func TestUILoginAPI(t *testing.T) {
	off := startDaemon(t, "", nil)
	if err := off.client.Do(context.Background(), "POST", "/v1/ui/login", nil, nil); codeOf(err) != errdefs.Conflict {
		t.Errorf("login link with the page off: %v", err)
	}
	td := startDaemon(t, "", withUI)
	link := uiLink(t, td.client)
	if !strings.HasPrefix(link, "http://"+td.d.UIAddr()+"/login?token=") {
		t.Errorf("link %s, page on %s", link, td.d.UIAddr())
	}
	// An agent gets none: narrowed to llm, or with a worker token.
	if err := llm(td.client).Do(context.Background(), "POST", "/v1/ui/login", nil, nil); codeOf(err) != errdefs.Forbidden {
		t.Errorf("llm caller: %v", err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "w.yaml"), "name: uiw\ndescription: d\ntools: []\n")
	wt, err := addWorker(td.client, filepath.Join(dir, "w.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	agent := *td.client
	agent.Token = wt.Token
	if err := agent.Do(context.Background(), "POST", "/v1/ui/login", nil, nil); codeOf(err) != errdefs.Forbidden {
		t.Errorf("worker token: %v", err)
	}
	var acts api.AdminActList
	if err := td.client.Do(context.Background(), "GET", "/v1/admin-acts", nil, &acts); err != nil {
		t.Fatal(err)
	}
	var ok, refused int
	for _, a := range acts.AdminActs {
		if a.Act == actUILogin {
			switch a.Outcome {
			case "ok":
				ok++
			case "refused":
				refused++
			}
		}
	}
	if ok != 1 || refused != 2 {
		t.Errorf("admin log: %d ui.login ok, %d refused; want 1 and 2", ok, refused)
	}
}

// browser is an HTTP client that keeps the review page's cookie.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, addr string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: "http://" + addr, c: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(method, path string, form url.Values, hdr ...string) (int, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	u := path
	if !strings.HasPrefix(path, "http") {
		u = b.base + path
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

var uiCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// TestUIReview drives the review page over HTTP against a real daemon:
// a parked call allowed from the page runs and shows in the audit log; a
// pending tool is approved, changed by its agent and rejected; the
// decisions are the person's in the admin log.
func TestUIReview(t *testing.T) {
	td := startDaemon(t, "", withUI)
	c := td.client
	ctx := context.Background()
	create(t, c, "name: ask_js\ndescription: asks\nkind: js\napproval: ask\njs: {code: 'return args.n * 2'}")

	b := newBrowser(t, td.d.UIAddr())
	if code, body := b.do("GET", "/approvals", nil); code != http.StatusUnauthorized || !strings.Contains(body, "toolcage ui open") {
		t.Fatalf("before login: %d", code)
	}
	if code, _ := b.do("GET", uiLink(t, c), nil); code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}

	// A call parks and waits.
	done := make(chan api.CallResponse, 1)
	go func() {
		r, err := callTool(c, "ask_js", map[string]any{"n": 21})
		if err != nil {
			t.Errorf("the waiting call: %v", err)
		}
		done <- r
	}()
	list := waitPending(t, c, 1)
	id := list.Approvals[0].ID
	code, page := b.do("GET", "/approvals", nil)
	if code != http.StatusOK || !strings.Contains(page, `id="approval-`+id+`"`) || !strings.Contains(page, list.Approvals[0].Rendered) ||
		!strings.Contains(page, "&#34;n&#34;: 21") {
		t.Fatalf("approvals page %d lacks approval %s:\n%s", code, id, page)
	}
	csrf := uiCSRF.FindStringSubmatch(page)[1]

	// Refused: no CSRF token; a worker token; another origin.
	if code, _ := b.do("POST", "/approvals/"+id+"/allow", url.Values{}); code != http.StatusForbidden {
		t.Errorf("allow without CSRF: %d", code)
	}
	if code, _ := b.do("POST", "/approvals/"+id+"/allow", url.Values{"csrf": {csrf}}, "Authorization", "Bearer tcw_x"); code != http.StatusUnauthorized {
		t.Errorf("allow with a bearer token: %d", code)
	}
	if code, _ := b.do("POST", "/approvals/"+id+"/allow", url.Values{"csrf": {csrf}}, "Origin", "http://evil.example"); code != http.StatusForbidden {
		t.Errorf("allow from another origin: %d", code)
	}
	select {
	case <-done:
		t.Fatal("the call ran before anyone allowed it")
	default:
	}
	if code, _ := b.do("POST", "/approvals/"+id+"/allow", url.Values{"csrf": {csrf}, "always": {"0"}}, "Origin", b.base); code != http.StatusSeeOther {
		t.Fatalf("allow: %d", code)
	}
	select {
	case r := <-done:
		if string(r.Result) != "42" {
			t.Fatalf("allowed call: %+v", r)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the allowed call did not finish")
	}
	if _, page := b.do("GET", "/approvals", nil); !strings.Contains(page, "Allowed "+id) || !strings.Contains(page, `id="no-pending"`) ||
		!strings.Contains(page, "<td><code>"+id+"</code></td>") {
		t.Errorf("after allow:\n%s", page)
	}
	// The audit log shows it, and the filters select.
	_, page = b.do("GET", "/audit?tool=ask_js&outcome=ok", nil)
	if strings.Count(page, `data-tool="ask_js"`) != 1 {
		t.Errorf("audit with tool and outcome ok:\n%s", page)
	}
	for _, q := range []string{"tool=adder", "outcome=refused", "caller=uid:424242", "worker=nobody", "until=2000-01-01T00:00"} {
		if _, page := b.do("GET", "/audit?"+q, nil); !strings.Contains(page, `id="no-entries"`) {
			t.Errorf("audit?%s matches something", q)
		}
	}
	if _, page := b.do("GET", "/audit?since=1h&caller="+td.d.personID(), nil); !strings.Contains(page, `data-tool="ask_js"`) {
		t.Errorf("audit since 1h by the person lacks the call")
	}

	// Allow always: the parked call's twin then runs without asking.
	err := noWait(c).Do(ctx, "POST", "/v1/tools/ask_js/call", api.CallRequest{Arguments: mustJSON(map[string]any{"n": 5})}, nil)
	always := apiErr(t, err).ApprovalID
	if code, _ := b.do("POST", "/approvals/"+always+"/allow", url.Values{"csrf": {csrf}, "always": {"1"}}); code != http.StatusSeeOther {
		t.Fatalf("allow always: %d", code)
	}
	if r, err := callTool(noWait(c), "ask_js", map[string]any{"n": 5}); err != nil || string(r.Result) != "10" {
		t.Fatalf("the call allowed always: %+v %v", r, err)
	}
	// Deny: the waiting caller is refused.
	denied := make(chan error, 1)
	go func() {
		_, err := callTool(c, "ask_js", map[string]any{"n": 7})
		denied <- err
	}()
	pending := waitPending(t, c, 1)
	if code, _ := b.do("POST", "/approvals/"+pending.Approvals[0].ID+"/deny", url.Values{"csrf": {csrf}}); code != http.StatusSeeOther {
		t.Fatalf("deny: %d", code)
	}
	select {
	case err := <-denied:
		if codeOf(err) != errdefs.ApprovalDenied {
			t.Fatalf("denied call: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the denied call did not return")
	}
	// Deciding it again is a conflict, shown on the page.
	b.do("POST", "/approvals/"+pending.Approvals[0].ID+"/allow", url.Values{"csrf": {csrf}})
	if _, page := b.do("GET", "/approvals", nil); !strings.Contains(page, `class="flash err"`) || !strings.Contains(page, "already denied") {
		t.Errorf("a second decision is not shown as refused:\n%s", page)
	}

	// A tool an agent makes waits; the page shows it whole, approves it;
	// the agent's change shows as a diff and is rejected.
	agent := llm(c)
	if err := agent.Do(ctx, "POST", "/v1/tools", []byte("name: agent_ls\ndescription: lists\nkind: shell\nshell: {command: 'ls /tmp'}"), nil); err != nil {
		t.Fatal(err)
	}
	_, page = b.do("GET", "/tools", nil)
	if !strings.Contains(page, `id="tool-agent_ls"`) || !strings.Contains(page, "No version of this tool was approved yet") || !strings.Contains(page, "command: ls /tmp") {
		t.Fatalf("tools page:\n%s", page)
	}
	if code, _ := b.do("POST", "/tools/agent_ls/approve", url.Values{"csrf": {csrf}}); code != http.StatusSeeOther {
		t.Fatalf("approve: %d", code)
	}
	var tool api.Tool
	if err := c.Do(ctx, "GET", "/v1/tools/agent_ls", nil, &tool); err != nil || tool.Status != "active" {
		t.Fatalf("after approve: %+v %v", tool, err)
	}
	if err := agent.Do(ctx, "PATCH", "/v1/tools/agent_ls", []byte(`{"shell":{"command":"ls /var"}}`), nil); err != nil {
		t.Fatal(err)
	}
	_, page = b.do("GET", "/tools", nil)
	if !strings.Contains(page, "Changes since version 1") || !strings.Contains(page, `<span class="del">-  command: ls /tmp</span>`) ||
		!strings.Contains(page, `<span class="add">&#43;  command: ls /var</span>`) {
		t.Fatalf("tools page with a change:\n%s", page)
	}
	if code, _ := b.do("POST", "/tools/agent_ls/reject", url.Values{"csrf": {csrf}}); code != http.StatusSeeOther {
		t.Fatalf("reject: %d", code)
	}
	if err := c.Do(ctx, "GET", "/v1/tools/agent_ls", nil, &tool); err != nil || tool.Status != "rejected" {
		t.Fatalf("after reject: %+v %v", tool, err)
	}
	if _, page := b.do("GET", "/tools", nil); !strings.Contains(page, `id="no-tools"`) {
		t.Errorf("a rejected tool is still listed")
	}

	// Every decision is the person's, with the page's session label.
	var acts api.AdminActList
	if err := c.Do(ctx, "GET", "/v1/admin-acts", nil, &acts); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range acts.AdminActs {
		if strings.HasPrefix(a.Session, "ui-") && a.CallerType == "user" && a.CallerID == td.d.personID() && a.Outcome == "ok" {
			seen[a.Act+" "+a.Target] = true
		}
	}
	for _, want := range []string{actApprovalAllow + " " + id, actToolApprove + " agent_ls", actToolReject + " agent_ls"} {
		if !seen[want] {
			t.Errorf("admin log lacks %q from the page: %+v", want, acts.AdminActs)
		}
	}
}

func TestUIWorkersPage(t *testing.T) {
	td := startDaemon(t, "", withUI)
	create(t, td.client, jsTool)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "w.yaml"), "name: pagew\ndescription: the page's worker\ntools: [adder, missing_tool]\napproval: {default: ask}\n")
	if _, err := addWorker(td.client, filepath.Join(dir, "w.yaml")); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, td.d.UIAddr())
	b.do("GET", uiLink(t, td.client), nil)
	code, page := b.do("GET", "/workers", nil)
	if code != http.StatusOK || !strings.Contains(page, `id="worker-pagew"`) || !strings.Contains(page, "the page&#39;s worker") ||
		!strings.Contains(page, "<td>adder</td><td>catalog</td>") || !strings.Contains(page, `missing_tool <span class="badge error">missing</span>`) {
		t.Fatalf("workers page %d:\n%s", code, page)
	}
	// The page lives as long as the daemon: after Close it is gone.
	td.stop()
	if _, err := http.Get("http://" + td.d.UIAddr() + "/login"); err == nil {
		t.Error("the review page still answers after the daemon stopped")
	}
}

// TestUIApprovalHTTP: an HTTP call waiting for approval shows its method
// and URL, the credentials in it redacted. It is never sent.
func TestUIApprovalHTTP(t *testing.T) {
	td := startDaemon(t, "", func(c *Config) {
		withUI(c)
		c.HTTP.AllowPrivateHosts = []string{"127.0.0.1"}
	})
	c := td.client
	create(t, c, `name: ask_hook
description: posts to a hook
kind: http
approval: ask
http:
  method: POST
  url: "http://127.0.0.1:9/hook/{{room}}?token={{token}}"
  allowed_domains: ["127.0.0.1"]
`)
	const secret = "s3cr3t-hook-token-0001"
	err := noWait(c).Do(context.Background(), "POST", "/v1/tools/ask_hook/call",
		api.CallRequest{Arguments: mustJSON(map[string]any{"room": "ops", "token": secret})}, nil)
	id := apiErr(t, err).ApprovalID
	b := newBrowser(t, td.d.UIAddr())
	b.do("GET", uiLink(t, c), nil)
	_, page := b.do("GET", "/approvals", nil)
	card := page[strings.Index(page, `id="approval-`+id+`"`):]
	card = card[:strings.Index(card, "</section>")]
	if !strings.Contains(card, "<dt>Sends</dt>") || !strings.Contains(card, "POST http://127.0.0.1:9/hook/ops?redacted") {
		t.Errorf("the HTTP approval does not show method and URL:\n%s", card)
	}
	if strings.Contains(card, "POST http://127.0.0.1:9/hook/ops?token") {
		t.Errorf("the URL's credentials are shown:\n%s", card)
	}
}
