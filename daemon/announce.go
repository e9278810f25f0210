package daemon

import (
	"fmt"
	"log/slog"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/apiserver"
	"github.com/toolcage/toolcage/daemon/config"
	"github.com/toolcage/toolcage/daemon/dispatch"
	"github.com/toolcage/toolcage/daemon/events"
	"github.com/toolcage/toolcage/daemon/webhook"
	"github.com/toolcage/toolcage/internal/termsafe"
	"github.com/toolcage/toolcage/store"
)

// announcer hears from the dispatcher what happens (dispatch.Events) and
// passes it on without waiting: to the event streams of the socket API
// and, for new approvals, to the webhook.
type announcer struct {
	approvals *events.Hub[store.Approval]
	calls     *events.Hub[store.Execution]
	webhook   *webhook.Notifier // nil: no approvals.webhook
}

// streamBuffer is how many events one stream's reader may fall behind
// before it is dropped.
const streamBuffer = 256

func newAnnouncer(cfg config.ApprovalsConfig, log *slog.Logger) (*announcer, error) {
	a := &announcer{approvals: events.New[store.Approval](streamBuffer), calls: events.New[store.Execution](streamBuffer)}
	if cfg.Webhook != "" {
		n, err := webhook.New(webhook.Config{URL: cfg.Webhook, Timeout: cfg.WebhookTimeout, AllowPrivate: cfg.WebhookAllowPrivate,
			UserAgent: "toolcage/" + Version}, log)
		if err != nil {
			return nil, err
		}
		a.webhook = n
	}
	return a, nil
}

var _ dispatch.Events = (*announcer)(nil)

// ApprovalChanged publishes a new or decided approval; a new one is also
// announced to the webhook.
func (a *announcer) ApprovalChanged(ap *store.Approval) {
	a.approvals.Publish(*ap)
	if a.webhook != nil && ap.Status == store.ApprovalPending {
		v := apiserver.ApprovalView(ap, false)
		a.webhook.Announce(api.ApprovalAnnouncement{Event: "approval.pending", Approval: v, Text: announcementText(v)})
	}
}

// announcementText is the one line a chat webhook shows for a new
// approval. What an agent wrote in it (the rendered call, its caller id)
// goes through termsafe.Chat: a person's channel shows it, and is neither
// pinged (<!channel>, <@U…>, @everyone), linked nor formatted by it. The
// approval object beside it is the API's JSON, unchanged.
func announcementText(v api.Approval) string {
	return fmt.Sprintf("toolcage: approval %s: %s v%d for %s wants to run %s (toolcage approvals allow %s)",
		v.ID, termsafe.Chat(v.Tool), v.Version, termsafe.Chat(callerText(v.CallerType, v.CallerID, v.Worker)), termsafe.Chat(v.Rendered), v.ID)
}

// CallRecorded publishes a recorded call.
func (a *announcer) CallRecorded(e *store.Execution) { a.calls.Publish(*e) }

// close ends every stream and stops the webhook.
func (a *announcer) close() {
	a.approvals.Close()
	a.calls.Close()
	if a.webhook != nil {
		a.webhook.Close()
	}
}

// callerText is "llm:worker:ops@ops", as the CLI shows a caller.
func callerText(typ, id, worker string) string {
	s := typ
	if id != "" {
		s += ":" + id
	}
	if worker != "" {
		s += "@" + worker
	}
	return s
}
