package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/internal/termsafe"
)

// runAuditExport copies GET /v1/executions?format=jsonl to stdout as it
// arrives: the daemon streams it, so an export of any size passes through
// in little memory. An export the daemon cut short is an error.
func runAuditExport(ctx context.Context, a *app, opts auditOptions) error {
	q := opts.query()
	q.Set("format", "jsonl")
	body, err := a.client.Open(ctx, "/v1/executions?"+q.Encode())
	if err != nil {
		return err
	}
	defer body.Close()
	if _, err := io.Copy(a.out, body); err != nil {
		return fmt.Errorf("the export was cut short: %w", err)
	}
	return nil
}

// runAuditFollow prints GET /v1/executions/events: the backlog, then each
// call as it is recorded, as table rows (or JSON lines), until Ctrl-C.
func runAuditFollow(ctx context.Context, a *app, opts auditOptions) error {
	body, err := a.client.Open(ctx, "/v1/executions/events?"+opts.query().Encode())
	if err != nil {
		return err
	}
	defer body.Close()
	out := bufio.NewWriter(a.out)
	header := false
	err = api.ReadEvents(body, func(ev api.Event) error {
		switch ev.Name {
		case api.EventOverflow:
			return streamOverflow(ev)
		case api.EventExecution:
		default:
			return nil
		}
		if opts.json {
			if err := writeJSONLine(out, ev.Data); err != nil {
				return err
			}
			return out.Flush()
		}
		var e api.Execution
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return fmt.Errorf("decoding an audit event: %w", err)
		}
		if !header {
			header = true
			fmt.Fprintf(out, "%-18s  %-20s  %-4s  %-24s  %-8s  %-18s  %9s  %s\n", "ID", "TOOL", "VER", "CALLER", "OUTCOME", "CODE", "DURATION", "STARTED")
		}
		ver := "-"
		if e.Version > 0 {
			ver = fmt.Sprint(e.Version)
		}
		fmt.Fprintf(out, "%-18s  %-20s  %-4s  %-24s  %-8s  %-18s  %9s  %s\n", termsafe.Line(e.ID), termsafe.Line(orDash(e.Tool)), ver,
			termsafe.Line(caller(e)), termsafe.Line(e.Outcome), termsafe.Line(orDash(e.ErrorCode)), formatMS(e.DurationMS), formatTime(e.StartedAt, a.loc))
		return out.Flush()
	})
	return streamEnded(ctx, err)
}
