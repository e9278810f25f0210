package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/internal/termsafe"
)

// runApprovalsWatch follows GET /v1/approvals/events: every approval with
// status (all when empty) as it arrives, one line each, until ctx ends
// (Ctrl-C, which is success) or the daemon ends the stream.
func runApprovalsWatch(ctx context.Context, a *app, status string, jsonOut bool) error {
	body, err := a.client.Open(ctx, "/v1/approvals/events")
	if err != nil {
		return err
	}
	defer body.Close()
	err = api.ReadEvents(body, func(ev api.Event) error {
		switch ev.Name {
		case api.EventOverflow:
			return streamOverflow(ev)
		case api.EventApproval:
		default:
			return nil // a kind of event this CLI does not know yet
		}
		var ap api.Approval
		if err := json.Unmarshal(ev.Data, &ap); err != nil {
			return fmt.Errorf("decoding an approval event: %w", err)
		}
		if status != "" && ap.Status != status {
			return nil
		}
		if jsonOut {
			return writeJSONLine(a.out, ev.Data)
		}
		return writeApprovalLine(a, &ap)
	})
	return streamEnded(ctx, err)
}

// writeApprovalLine prints one approval as --watch shows it:
// "2026-03-01 12:00:00  pending  k3xq7mfa  greet v1  llm:worker:ops@ops  [...]".
func writeApprovalLine(a *app, ap *api.Approval) error {
	caller := ap.CallerType
	if ap.CallerID != "" {
		caller += ":" + ap.CallerID
	}
	if ap.Worker != "" {
		caller += "@" + ap.Worker
	}
	when, extra := ap.CreatedAt, ""
	if ap.DecidedAt != nil {
		when, extra = *ap.DecidedAt, "  by "+orDash(ap.DecidedBy)
	}
	_, err := fmt.Fprintf(a.out, "%s  %-7s  %s  %s v%d  %s  %s%s\n", formatTime(when, a.loc), termsafe.Line(ap.Status), termsafe.Line(ap.ID),
		termsafe.Line(ap.Tool), ap.Version, termsafe.Line(orDash(caller)), termsafe.Line(orDash(clipCell(ap.Rendered))), termsafe.Line(extra))
	return err
}

// writeJSONLine writes one JSON value on a line of its own.
func writeJSONLine(w io.Writer, raw []byte) error {
	_, err := fmt.Fprintf(w, "%s\n", raw)
	return err
}

// streamOverflow is the error for a stream the daemon dropped because
// this reader fell behind.
func streamOverflow(ev api.Event) error {
	var eb api.ErrorBody
	if json.Unmarshal(ev.Data, &eb) == nil && eb.Error.Code != "" {
		return &api.Error{Status: 503, ErrorDetail: eb.Error}
	}
	return fmt.Errorf("the daemon dropped this stream: it fell behind")
}

// streamEnded turns the end of an event stream into the command's result:
// Ctrl-C is success; the daemon closing the stream is an error.
func streamEnded(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("the daemon ended the stream (is it stopping?)")
}
