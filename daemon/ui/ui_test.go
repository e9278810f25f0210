package ui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/internal/termsafe"
	"github.com/toolcage/toolcage/principal"
)

// fakeBackend is a Backend built from func fields; a nil field returns
// nothing.
type fakeBackend struct {
	PendingF        func(ctx context.Context) ([]api.Approval, error)
	RecentF         func(ctx context.Context, n int) ([]api.Approval, error)
	DecideApprovalF func(ctx context.Context, id string, allow, always bool, by principal.Caller) (api.Approval, error)
	PendingToolsF   func(ctx context.Context) ([]PendingTool, error)
	DecideToolF     func(ctx context.Context, name string, approve bool, by principal.Caller) (api.Tool, error)
	ExecutionsF     func(ctx context.Context, f AuditFilter) ([]api.Execution, error)
	WorkersF        func(ctx context.Context) ([]api.Worker, error)
}

var _ Backend = (*fakeBackend)(nil)

func (f *fakeBackend) PendingApprovals(ctx context.Context) ([]api.Approval, error) {
	if f.PendingF == nil {
		return nil, nil
	}
	return f.PendingF(ctx)
}

func (f *fakeBackend) RecentApprovals(ctx context.Context, n int) ([]api.Approval, error) {
	if f.RecentF == nil {
		return nil, nil
	}
	return f.RecentF(ctx, n)
}

func (f *fakeBackend) DecideApproval(ctx context.Context, id string, allow, always bool, by principal.Caller) (api.Approval, error) {
	if f.DecideApprovalF == nil {
		return api.Approval{}, errors.New("not expected")
	}
	return f.DecideApprovalF(ctx, id, allow, always, by)
}

func (f *fakeBackend) PendingTools(ctx context.Context) ([]PendingTool, error) {
	if f.PendingToolsF == nil {
		return nil, nil
	}
	return f.PendingToolsF(ctx)
}

func (f *fakeBackend) DecideTool(ctx context.Context, name string, approve bool, by principal.Caller) (api.Tool, error) {
	if f.DecideToolF == nil {
		return api.Tool{}, errors.New("not expected")
	}
	return f.DecideToolF(ctx, name, approve, by)
}

func (f *fakeBackend) Executions(ctx context.Context, af AuditFilter) ([]api.Execution, error) {
	if f.ExecutionsF == nil {
		return nil, nil
	}
	return f.ExecutionsF(ctx, af)
}

func (f *fakeBackend) Workers(ctx context.Context) ([]api.Worker, error) {
	if f.WorkersF == nil {
		return nil, nil
	}
	return f.WorkersF(ctx)
}

// page is a review page server on httptest's loopback listener and a
// browser-like client for it.
type page struct {
	t      *testing.T
	srv    *Server
	ts     *httptest.Server
	client *http.Client
}

func newPage(t *testing.T, be Backend) *page {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	s, err := New(Config{Addr: ts.Listener.Addr().String(), LoginTTL: time.Minute, SessionTTL: time.Hour}, be)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &page{t: t, srv: s, ts: ts, client: c}
}

// login logs the page's client in through a fresh link.
func (p *page) login() {
	p.t.Helper()
	link, _ := p.srv.LoginURL("uid:1000")
	resp, err := p.client.Get(link)
	if err != nil {
		p.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/approvals" {
		p.t.Fatalf("login: %d %v", resp.StatusCode, resp.Header)
	}
}

// get fetches path and returns the status and body.
func (p *page) get(path string, hdr ...string) (int, string, http.Header) {
	p.t.Helper()
	req, _ := http.NewRequest("GET", p.ts.URL+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			// The jar keys cookies by the Host asked for: the browser
			// that had them for the address sends them here.
			req.Host = hdr[i+1]
			for _, c := range p.client.Jar.Cookies(req.URL) {
				req.AddCookie(c)
			}
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// post submits form to path with the given extra headers.
func (p *page) post(path string, form url.Values, hdr ...string) (int, string) {
	p.t.Helper()
	req, _ := http.NewRequest("POST", p.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token from a page.
func (p *page) csrf() string {
	p.t.Helper()
	_, body, _ := p.get("/approvals")
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		p.t.Fatalf("no CSRF token on the page:\n%s", body)
	}
	return m[1]
}

func TestLoginAndSession(t *testing.T) {
	p := newPage(t, &fakeBackend{})
	// Without a session every page is the login page, 401.
	for _, path := range []string{"/", "/approvals", "/tools", "/audit", "/workers", "/nowhere"} {
		code, body, _ := p.get(path)
		if code != http.StatusUnauthorized || !strings.Contains(body, "toolcage ui open") {
			t.Errorf("GET %s without a session: %d", path, code)
		}
	}
	if code, _ := p.post("/approvals/abcd/allow", url.Values{}); code != http.StatusUnauthorized {
		t.Errorf("POST without a session: %d", code)
	}
	link, exp := p.srv.LoginURL("uid:1000")
	if !strings.HasPrefix(link, "http://"+p.srv.cfg.Addr+"/login?token=") || time.Until(exp) > time.Minute {
		t.Fatalf("link %s, expires %v", link, exp)
	}
	resp, err := p.client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var sc *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			sc = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || sc == nil || !sc.HttpOnly || sc.SameSite != http.SameSiteStrictMode ||
		sc.Path != "/" || sc.MaxAge <= 0 || sc.Expires.IsZero() {
		t.Fatalf("login: %d, cookie %+v", resp.StatusCode, sc)
	}
	if code, body, _ := p.get("/approvals"); code != http.StatusOK || !strings.Contains(body, "uid:1000") {
		t.Fatalf("after login: %d", code)
	}
	// The link works once.
	jar, _ := cookiejar.New(nil)
	fresh := &page{t: t, srv: p.srv, ts: p.ts, client: &http.Client{Jar: jar}}
	resp, err = fresh.client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Fatalf("second use of a link: %d %v", resp.StatusCode, resp.Cookies())
	}
	for _, bad := range []string{"", "nope", strings.Repeat("a", 200)} {
		if code, _, _ := fresh.get("/login?token=" + url.QueryEscape(bad)); code != http.StatusUnauthorized {
			t.Errorf("login with %q: %d", bad, code)
		}
	}
	// Log out ends the session.
	if code, _ := p.post("/logout", url.Values{csrfField: {p.csrf()}}); code != http.StatusOK {
		t.Fatalf("logout: %d", code)
	}
	if code, _, _ := p.get("/approvals"); code != http.StatusUnauthorized {
		t.Fatalf("after logout: %d", code)
	}
}

func TestTokensAndHostsRefused(t *testing.T) {
	p := newPage(t, &fakeBackend{})
	p.login()
	// A logged-in browser that also sends a token is refused: no token
	// works here, whatever it is.
	for _, auth := range []string{"Bearer tcw_aaaaaaaa", "Basic dXNlcjpwYXNz", "x"} {
		if code, _, _ := p.get("/approvals", "Authorization", auth); code != http.StatusUnauthorized {
			t.Errorf("GET with Authorization %q: %d", auth, code)
		}
	}
	// Another name for the address (DNS rebinding) gets nothing.
	if code, _, _ := p.get("/approvals", "Host", "evil.example:80"); code != http.StatusMisdirectedRequest {
		t.Errorf("GET for another host: %d", code)
	}
	_, port, _ := strings.Cut(p.srv.cfg.Addr, ":")
	if code, _, _ := p.get("/approvals", "Host", "localhost:"+port); code != http.StatusOK {
		t.Errorf("GET as localhost: %d", code)
	}
}

func TestCSRF(t *testing.T) {
	var mu sync.Mutex
	var decided []string
	be := &fakeBackend{
		DecideApprovalF: func(_ context.Context, id string, allow, always bool, by principal.Caller) (api.Approval, error) {
			mu.Lock()
			defer mu.Unlock()
			decided = append(decided, id)
			if by.Type != principal.TypeUser || by.ID != "uid:1000" || !strings.HasPrefix(by.Session, "ui-") || !allow || !always {
				t.Errorf("decided as %+v allow=%v always=%v", by, allow, always)
			}
			return api.Approval{ID: id, Tool: "t", Version: 1, Status: "allowed"}, nil
		},
	}
	p := newPage(t, be)
	p.login()
	tok := p.csrf()
	origin := p.ts.URL
	for _, tc := range []struct {
		name string
		form url.Values
		hdr  []string
		want int
	}{
		{"no token", url.Values{"always": {"1"}}, []string{"Origin", origin}, http.StatusForbidden},
		{"wrong token", url.Values{csrfField: {tok[:len(tok)-1] + "x"}, "always": {"1"}}, []string{"Origin", origin}, http.StatusForbidden},
		{"short token", url.Values{csrfField: {tok[:10]}, "always": {"1"}}, nil, http.StatusForbidden},
		{"other origin", url.Values{csrfField: {tok}, "always": {"1"}}, []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"null origin", url.Values{csrfField: {tok}, "always": {"1"}}, []string{"Origin", "null"}, http.StatusForbidden},
		{"cross-site fetch", url.Values{csrfField: {tok}, "always": {"1"}}, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"same origin", url.Values{csrfField: {tok}, "always": {"1"}}, []string{"Origin", origin, "Sec-Fetch-Site", "same-origin"}, http.StatusSeeOther},
		{"no origin (not a browser)", url.Values{csrfField: {tok}, "always": {"1"}}, nil, http.StatusSeeOther},
	} {
		if code, body := p.post("/approvals/abcd2345/allow", tc.form, tc.hdr...); code != tc.want {
			t.Errorf("%s: %d, want %d\n%s", tc.name, code, tc.want, body)
		}
	}
	if len(decided) != 2 {
		t.Errorf("decided %v, want the two good posts only", decided)
	}
	// The flash tells what happened, once.
	if _, body, _ := p.get("/approvals"); !strings.Contains(body, "Allowed abcd2345 (t v1), and the same call from now on.") {
		t.Errorf("no flash:\n%s", body)
	}
	if _, body, _ := p.get("/approvals"); strings.Contains(body, "Allowed abcd2345") {
		t.Error("the flash showed twice")
	}
	// A form at the limit is read; one byte more is refused.
	pad := func(n int) url.Values {
		f := url.Values{csrfField: {tok}, "always": {"1"}, "pad": {""}}
		f.Set("pad", strings.Repeat("a", n-len(f.Encode())))
		return f
	}
	if code, _ := p.post("/approvals/abcd2345/allow", pad(maxForm)); code != http.StatusSeeOther {
		t.Errorf("form of %d bytes: %d", maxForm, code)
	}
	if code, _ := p.post("/approvals/abcd2345/allow", pad(maxForm+1)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("form of %d bytes: %d", maxForm+1, code)
	}
}

func TestSecurityHeaders(t *testing.T) {
	p := newPage(t, &fakeBackend{})
	p.login()
	_, body, h := p.get("/approvals")
	csp := h.Get("Content-Security-Policy")
	m := regexp.MustCompile(`script-src 'nonce-([A-Za-z0-9_-]{43})'`).FindStringSubmatch(csp)
	if m == nil || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("CSP %q", csp)
	}
	if !strings.Contains(body, `<script nonce="`+m[1]+`">`) || !strings.Contains(body, `<style nonce="`+m[1]+`">`) {
		t.Errorf("the page's script and style do not carry the nonce %s", m[1])
	}
	if strings.Count(body, "<script") != 1 || strings.Contains(body, "src=") {
		t.Errorf("want exactly one inline script and no external resource")
	}
	_, _, h2 := p.get("/approvals")
	if h2.Get("Content-Security-Policy") == csp {
		t.Error("the nonce did not change between responses")
	}
	for k, v := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
		"Referrer-Policy": "same-origin", "Cache-Control": "no-store"} {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
}

// TestEscaping: what an agent controls (tool names, arguments, the
// rendered command, errors) lands in the page as text.
func TestEscaping(t *testing.T) {
	const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>"'`
	be := &fakeBackend{
		PendingF: func(context.Context) ([]api.Approval, error) {
			return []api.Approval{{ID: "abcd2345", Tool: "t", Version: 1, CallerType: "llm", CallerID: evil, Status: "pending",
				Arguments: json.RawMessage(`{"x":` + mustJSON(evil) + `}`), Rendered: "sh -c " + mustJSON("echo "+evil),
				Change: "edit " + evil + ": +1 -1 lines\n--- a/" + evil + "\n+++ b/x\n@@ -1 +1 @@\n-" + evil + "\n+" + evil + "\n"}}, nil
		},
		ExecutionsF: func(context.Context, AuditFilter) ([]api.Execution, error) {
			return []api.Execution{{ID: "1", Tool: "t", Outcome: "error", Error: evil, Arguments: json.RawMessage(mustJSON(evil))}}, nil
		},
		PendingToolsF: func(context.Context) ([]PendingTool, error) {
			return []PendingTool{{Tool: api.Tool{Definition: json.RawMessage(`{"name":"t","description":` + mustJSON(evil) + `}`), Status: "pending_approval"}}}, nil
		},
		WorkersF: func(context.Context) ([]api.Worker, error) {
			return []api.Worker{{Name: "w", Description: evil, Tools: []api.WorkerTool{{Name: evil}}}}, nil
		},
	}
	p := newPage(t, be)
	p.login()
	for _, path := range []string{"/approvals", "/audit", "/tools", "/workers", "/audit?tool=" + url.QueryEscape(evil)} {
		code, body, _ := p.get(path)
		if code != http.StatusOK {
			t.Errorf("%s: %d", path, code)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s: an agent's text reached the page as markup", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)") && !strings.Contains(body, `\u003cscript\u003e`) {
			t.Errorf("%s: the text is not shown escaped", path)
		}
	}
}

// TestInvisibleAndControlText: what html/template leaves alone but a
// browser obeys in text (bidirectional overrides and isolates that show
// a command in another order than it runs, zero-width characters, C0 and
// C1 controls, a bare CR) reaches no page raw: each is shown as an escape,
// in the live fragment too.
func TestInvisibleAndControlText(t *testing.T) {
	const evil = "rm -rf ~ \u202e#sj.tpircs_sselmrah\u202c \u2066x\u2069 z\u200bw\u200d\ufeff \x1b[2K\u009b31m\rok\b"
	be := &fakeBackend{
		PendingF: func(context.Context) ([]api.Approval, error) {
			return []api.Approval{{ID: "abcd2345", Tool: "t", Version: 1, CallerType: "llm", CallerID: evil, Status: "pending",
				Arguments: json.RawMessage(`{"x":` + mustJSON(evil) + `}`), Rendered: "sh -c " + mustJSON("echo "+evil),
				Change: "edit " + evil + ": +1 -1 lines\n--- a/" + evil + "\n+++ b/x\n@@ -1 +1 @@\n-" + evil + "\n+" + evil + "\n"}}, nil
		},
		ExecutionsF: func(context.Context, AuditFilter) ([]api.Execution, error) {
			return []api.Execution{{ID: "1", Tool: "t", CallerID: evil, Outcome: "error", Error: evil, Arguments: json.RawMessage(mustJSON(evil))}}, nil
		},
		PendingToolsF: func(context.Context) ([]PendingTool, error) {
			return []PendingTool{{Tool: api.Tool{Definition: json.RawMessage(`{"name":"t","description":` + mustJSON(evil) + `,"category":` + mustJSON(evil) + `}`), Status: "pending_approval"}}}, nil
		},
		WorkersF: func(context.Context) ([]api.Worker, error) {
			return []api.Worker{{Name: "w", Description: evil, Tools: []api.WorkerTool{{Name: evil}}}}, nil
		},
	}
	p := newPage(t, be)
	p.login()
	for _, path := range []string{"/approvals", "/audit", "/tools", "/workers", "/audit?caller=" + url.QueryEscape(evil)} {
		for _, hdr := range [][]string{nil, {fragmentHeader, "1"}} {
			code, body, _ := p.get(path, hdr...)
			if code != http.StatusOK {
				t.Errorf("%s: %d", path, code)
			}
			for _, r := range body {
				if r != '\n' && r != '\t' && termsafe.Unsafe(r) {
					t.Errorf("%s %v: %U reached the page raw", path, hdr, r)
					break
				}
			}
			if !strings.Contains(body, `\u202e`) {
				t.Errorf("%s %v: the override is not shown as an escape", path, hdr)
			}
		}
	}
}

// TestApprovalChange: a file change is shown as its summary and diff,
// each line marked as added, removed or a header; a removed line that
// reads like a header is still a removed line.
func TestApprovalChange(t *testing.T) {
	be := &fakeBackend{
		PendingF: func(context.Context) ([]api.Approval, error) {
			return []api.Approval{{ID: "abcd2345", Tool: "edit_file", Version: 1, CallerType: "llm", Status: "pending",
				Arguments: json.RawMessage(`{}`),
				Change:    "edit a.txt: +1 -1 lines\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n keep\n--- old\n+new\n"}}, nil
		},
	}
	p := newPage(t, be)
	p.login()
	code, body, _ := p.get("/approvals")
	if code != http.StatusOK {
		t.Fatalf("%d", code)
	}
	// html/template writes + as &#43;.
	for _, want := range []string{`<dt>Changes</dt>`, `edit a.txt: &#43;1 -1 lines`, `<span class="hunk">--- a/a.txt</span>`,
		`<span class="hunk">@@ -1,2 &#43;1,2 @@</span>`, `<span> keep</span>`, `<span class="del">--- old</span>`, `<span class="add">&#43;new</span>`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(body, "<dt>Runs</dt>") {
		t.Error("an empty Runs box beside the change")
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestLiveFragment(t *testing.T) {
	decided := time.Date(2026, 5, 1, 9, 30, 0, 0, time.Local)
	be := &fakeBackend{
		PendingF: func(context.Context) ([]api.Approval, error) {
			return []api.Approval{{ID: "abcd2345", Tool: "ask_js", Version: 2, Status: "pending", Rendered: "sha256:00ff"}}, nil
		},
		RecentF: func(_ context.Context, n int) ([]api.Approval, error) {
			if n != recentApprovals {
				t.Errorf("asked for %d recent approvals", n)
			}
			return []api.Approval{{ID: "zzzz2345", Tool: "rm_tmp", Version: 1, Status: "denied", DecidedBy: "uid:0", DecidedAt: &decided}}, nil
		},
	}
	p := newPage(t, be)
	p.login()
	code, body, _ := p.get("/approvals", fragmentHeader, "1")
	if code != http.StatusOK || strings.Contains(body, "<html") || !strings.Contains(body, `id="approval-abcd2345"`) ||
		!strings.Contains(body, "sha256:00ff") || !csrfRE.MatchString(body) {
		t.Fatalf("fragment %d:\n%s", code, body)
	}
	if !strings.Contains(body, `<td><code>zzzz2345</code></td><td>rm_tmp <span class="muted">v1</span></td>`) ||
		!strings.Contains(body, `<span class="badge denied">denied</span></td><td>uid:0</td><td>2026-05-01 09:30:00</td>`) {
		t.Errorf("recently decided not shown:\n%s", body)
	}
}

func TestToolsPage(t *testing.T) {
	var got []string
	be := &fakeBackend{
		PendingToolsF: func(context.Context) ([]PendingTool, error) {
			return []PendingTool{
				{Tool: api.Tool{Definition: json.RawMessage(`{"name":"changed","kind":"shell","shell":{"command":"ls -l"}}`), Status: "pending_approval", Version: 3, ApprovedVersion: 1},
					Approved: json.RawMessage(`{"name":"changed","kind":"shell","shell":{"command":"ls"}}`)},
				{Tool: api.Tool{Definition: json.RawMessage(`{"name":"fresh","kind":"js","js":{"code":"return 1"}}`), Status: "pending_approval", Version: 1}},
				{Tool: api.Tool{Definition: json.RawMessage(`{"name":"lost","kind":"js"}`), Status: "pending_approval", Version: 9, ApprovedVersion: 2}},
			}, nil
		},
		DecideToolF: func(_ context.Context, name string, approve bool, by principal.Caller) (api.Tool, error) {
			got = append(got, name)
			if name == "fresh" {
				return api.Tool{}, errdefs.Errorf(errdefs.Conflict, "cannot approve tool %q: it is active", name)
			}
			return api.Tool{Version: 3, Status: "active"}, nil
		},
	}
	p := newPage(t, be)
	p.login()
	_, body, _ := p.get("/tools")
	for _, want := range []string{`<span class="del">-  command: ls</span>`, `<span class="add">&#43;  command: ls -l</span>`,
		"Changes since version 1", "No version of this tool was approved yet", "Version 2, the last one approved, is no longer kept",
		`action="/tools/changed/approve"`, `action="/tools/fresh/reject"`} {
		if !strings.Contains(body, want) {
			t.Errorf("tools page lacks %q", want)
		}
	}
	tok := p.csrf()
	if code, _ := p.post("/tools/changed/approve", url.Values{csrfField: {tok}}); code != http.StatusSeeOther {
		t.Fatalf("approve: %d", code)
	}
	if _, body, _ := p.get("/tools"); !strings.Contains(body, "Approved changed version 3: it is active.") {
		t.Error("no flash after approve")
	}
	p.post("/tools/fresh/approve", url.Values{csrfField: {tok}})
	if _, body, _ := p.get("/tools"); !strings.Contains(body, `class="flash err"`) || !strings.Contains(body, "it is active") {
		t.Error("a refused approve is not shown as an error")
	}
	if strings.Join(got, ",") != "changed,fresh" {
		t.Errorf("decided %v", got)
	}
}

func TestAuditPage(t *testing.T) {
	var last AuditFilter
	be := &fakeBackend{ExecutionsF: func(_ context.Context, f AuditFilter) ([]api.Execution, error) {
		last = f
		return []api.Execution{{ID: "1", Tool: "adder", Outcome: "ok", CallerID: "uid:0", CallerType: "user", DurationMS: 3.25}}, nil
	}}
	p := newPage(t, be)
	p.login()
	code, body, _ := p.get("/audit?tool=adder&caller=uid:0&worker=w&outcome=ok&since=1h&limit=5")
	if code != http.StatusOK || !strings.Contains(body, `data-tool="adder"`) || !strings.Contains(body, "3.2") {
		t.Fatalf("audit %d:\n%s", code, body)
	}
	if last.Tool != "adder" || last.Caller != "uid:0" || last.Worker != "w" || last.Outcome != "ok" || last.Limit != 5 ||
		time.Since(last.Since) < 59*time.Minute || time.Since(last.Since) > 61*time.Minute {
		t.Errorf("filter %+v", last)
	}
	if code, body, _ := p.get("/audit?outcome=great"); code != http.StatusBadRequest || !strings.Contains(body, `id="filter-error"`) {
		t.Errorf("bad outcome: %d", code)
	}
}

func TestSessionLimits(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := newSessions(time.Minute, time.Hour, clock)

	// A login token works until its TTL, not at it.
	tok, _ := s.mint("uid:1")
	now = now.Add(time.Minute - time.Nanosecond)
	cookie, sess, ok := s.redeem(tok)
	if !ok || sess.person != "uid:1" || len(sess.csrf) != 43 || !strings.HasPrefix(sess.label, "ui-") {
		t.Fatalf("redeem just before expiry: %v %+v", ok, sess)
	}
	tok2, _ := s.mint("uid:1")
	now = now.Add(time.Minute)
	if _, _, ok := s.redeem(tok2); ok {
		t.Error("a token redeemed at its expiry worked")
	}
	// A session lasts its TTL, not beyond.
	now = sess.expires.Add(-time.Nanosecond)
	if _, ok := s.get(cookie); !ok {
		t.Error("session ended before its TTL")
	}
	now = sess.expires
	if _, ok := s.get(cookie); ok {
		t.Error("session outlived its TTL")
	}

	// maxLogins unused tokens are kept; one more drops the oldest.
	toks := make([]string, maxLogins+1)
	for i := range toks {
		now = now.Add(time.Millisecond)
		toks[i], _ = s.mint("uid:1")
	}
	if _, _, ok := s.redeem(toks[0]); ok {
		t.Error("the oldest token survived one mint past the limit")
	}
	if _, _, ok := s.redeem(toks[1]); !ok {
		t.Error("the second oldest token was dropped")
	}
	// maxSessions live sessions; one more ends the oldest.
	s = newSessions(time.Minute, time.Hour, clock)
	cookies := make([]string, maxSessions+1)
	for i := range cookies {
		now = now.Add(time.Millisecond)
		tk, _ := s.mint("uid:1")
		cookies[i], _, _ = s.redeem(tk)
	}
	if _, ok := s.get(cookies[0]); ok {
		t.Error("the oldest session survived one login past the limit")
	}
	for _, c := range cookies[1:] {
		if _, ok := s.get(c); !ok {
			t.Fatal("a session within the limit ended")
		}
	}
}
