package daemon

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
)

// chatMarkup is what an agent may put in a call's arguments to ping, link
// or format a person's chat channel through the approvals webhook.
var chatMarkup = []string{"<!channel>", "<!here>", "<@U024BE7LH>", "<#C123|general>", "<https://evil.example|docs>",
	"@everyone", "@here", "[click me](https://evil.example)", "**urgent**", "`code`", "\u202eevil"}

// TestAnnouncementTextEscapesMarkup: the webhook's text shows agent text,
// never obeys it: no Slack control sequence, no live mention, masked link
// or emphasis, no raw control; the approval object keeps the values.
func TestAnnouncementTextEscapesMarkup(t *testing.T) {
	for _, m := range chatMarkup {
		text := announcementText(api.Approval{ID: "abcd2345", Tool: "ask_echo", Version: 1, CallerType: "llm",
			CallerID: "bot" + m, Worker: "ops", Rendered: `sh -c "echo ` + m + `"`})
		for _, bad := range []string{"<", ">", "\u202e"} {
			if strings.Contains(text, bad) {
				t.Errorf("%q: the text holds %q raw: %s", m, bad, text)
			}
		}
		for _, live := range []string{"@everyone", "@here", "@U024", "[click", "](", "**", "`"} {
			if i := strings.Index(text, live); i >= 0 && (i == 0 || text[i-1] != '\\') {
				t.Errorf("%q: %q is live in %s", m, live, text)
			}
		}
		if !strings.Contains(text, "toolcage approvals allow abcd2345") {
			t.Errorf("the text lost its own words: %s", text)
		}
	}
	if got := announcementText(api.Approval{ID: "abcd2345", Tool: "greet", Version: 2, CallerType: "user", CallerID: "uid:0", Rendered: `["echo","hello world"]`}); got != `toolcage: approval abcd2345: greet v2 for user:uid:0 wants to run \["echo","hello world"\] (toolcage approvals allow abcd2345)` {
		t.Errorf("an everyday announcement: %s", got)
	}
}

// TestWebhookEscapesMarkup: end to end, an agent's call whose arguments
// hold chat markup reaches the webhook (on 127.0.0.1) escaped in text and
// exact in the approval's arguments.
func TestWebhookEscapesMarkup(t *testing.T) {
	var mu sync.Mutex
	var hooked []api.ApprovalAnnouncement
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a api.ApprovalAnnouncement
		if err := json.NewDecoder(r.Body).Decode(&a); err == nil {
			mu.Lock()
			hooked = append(hooked, a)
			mu.Unlock()
		}
	}))
	defer hook.Close()
	td := startDaemon(t, "", func(c *Config) {
		c.Approvals.Webhook, c.Approvals.WebhookAllowPrivate, c.Approvals.WebhookTimeout = hook.URL+"/hook", true, 2*time.Second
	})
	create(t, td.client, `{"name":"ask_sh","description":"d","kind":"shell","approval":"ask","parameters":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]},"shell":{"command":"echo {{.x}}"}}`)
	arg := strings.Join(chatMarkup, " ")
	_, err := callTool(noWait(td.client), "ask_sh", map[string]string{"x": arg})
	if ae := apiErr(t, err); ae.ApprovalID == "" {
		t.Fatalf("want a pending approval: %v", err)
	}
	waitFor(t, "the announcement", func() bool { mu.Lock(); defer mu.Unlock(); return len(hooked) == 1 })
	mu.Lock()
	defer mu.Unlock()
	h := hooked[0]
	for _, bad := range []string{"<!channel>", "<@U024", "<https://", " @everyone", " @here", "[click me](", "**urgent**", "\u202e"} {
		if strings.Contains(h.Text, bad) {
			t.Errorf("the text holds %q live: %s", bad, h.Text)
		}
	}
	var got struct{ X string }
	if err := json.Unmarshal(h.Approval.Arguments, &got); err != nil || got.X != arg {
		t.Errorf("the approval's arguments changed: %s %v", h.Approval.Arguments, err)
	}
}
