package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// The audit log over the socket API: the list with its filters, the JSON
// Lines export, the stream of new records, and retention.

// outcomes are the values the outcome filter takes.
var outcomes = map[string]bool{store.OutcomeOK: true, store.OutcomeError: true, store.OutcomeFailed: true, store.OutcomeRefused: true}

// executionFilter reads the audit filters of r: tool, caller, worker, parent,
// outcome, since and until (RFC 3339, or a duration before now). An agent
// sees its own worker's calls only, whatever it asks for.
func executionFilter(r *http.Request, c principal.Caller, now time.Time) (store.ExecutionFilter, error) {
	q := r.URL.Query()
	f := store.ExecutionFilter{Tool: q.Get("tool"), CallerID: q.Get("caller"), Worker: q.Get("worker"), Outcome: q.Get("outcome"), Parent: q.Get("parent")}
	if f.Outcome != "" && !outcomes[f.Outcome] {
		return f, badRequest("outcome must be ok, error, failed or refused, not %q", f.Outcome)
	}
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if s := q.Get(p.name); s != "" {
			t, err := api.ParseTime(s, now)
			if err != nil {
				return f, badRequest("%s: %v", p.name, err)
			}
			*p.to = t
		}
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return f, badRequest("since (%s) must be before until (%s)", f.Since.Format(time.RFC3339Nano), f.Until.Format(time.RFC3339Nano))
	}
	return ownRecords(c, f), nil
}

// ownRecords narrows f to the records c may read: an agent, its worker's
// calls only.
func ownRecords(c principal.Caller, f store.ExecutionFilter) store.ExecutionFilter {
	if c.TokenID != "" {
		f.Worker = c.Worker
	}
	return f
}

func executionView(e *store.Execution) api.Execution {
	return api.Execution{
		ID: e.ID, Tool: e.Tool, Version: e.Version, CallerID: e.CallerID, CallerType: e.CallerType,
		Worker: e.Worker, TokenID: e.TokenID, Session: e.Session, ParentCallID: e.ParentCallID, Arguments: e.Arguments, Outcome: e.Outcome, ErrorCode: e.ErrorCode,
		Limit: e.Limit, Error: e.Error, DurationMS: float64(e.Duration) / float64(time.Millisecond),
		OutputBytes: e.OutputBytes, StartedAt: e.StartedAt, FinishedAt: e.FinishedAt,
	}
}

// listExecutions is GET /v1/executions: newest first, a page at a time;
// with format=jsonl, every record the filters select, oldest first, as
// JSON Lines streamed as they are read.
func (d *Server) listExecutions(w http.ResponseWriter, r *http.Request) error {
	format := r.URL.Query().Get("format")
	switch format {
	case "", "json", "jsonl":
	default:
		return badRequest("format must be json or jsonl, not %q", format)
	}
	c, err := callerOf(r)
	if err != nil {
		return err
	}
	f, err := executionFilter(r, c, time.Now())
	if err != nil {
		return err
	}
	def := 50
	if format == "jsonl" {
		def = 0 // all of them
	}
	if f.Limit, err = intParam(r, "limit", def); err != nil {
		return err
	}
	if format == "jsonl" {
		return d.exportExecutions(w, r, f)
	}
	if f.Offset, err = intParam(r, "offset", 0); err != nil {
		return err
	}
	es, err := d.store.ListExecutions(r.Context(), f)
	if err != nil {
		return err
	}
	out := api.ExecutionList{Executions: make([]api.Execution, 0, len(es))}
	for _, e := range es {
		out.Executions = append(out.Executions, executionView(e))
	}
	return writeJSON(w, http.StatusOK, out)
}

// exportExecutions streams f's records as JSON Lines. Once the first line
// is out the status cannot change: a failure after it cuts the stream
// short (the client sees it end early), never a well-formed but partial
// export.
func (d *Server) exportExecutions(w http.ResponseWriter, r *http.Request, f store.ExecutionFilter) error {
	w.Header().Set("Content-Type", "application/jsonl")
	rc := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	started := false
	n := 0
	err := d.store.ExportExecutions(r.Context(), f, func(e *store.Execution) error {
		if !started {
			w.WriteHeader(http.StatusOK)
			started = true
		}
		if err := enc.Encode(executionView(e)); err != nil {
			return err
		}
		if n++; n%exportFlushEvery == 0 {
			return rc.Flush()
		}
		return nil
	})
	switch {
	case err != nil && !started:
		return err
	case err != nil:
		d.log.Warn("audit export cut short", "err", err, "records", n)
		panic(http.ErrAbortHandler) // ends the response without its final chunk
	case !started:
		w.WriteHeader(http.StatusOK)
	}
	return nil
}

// exportFlushEvery is how many records an export writes between flushes.
const exportFlushEvery = 256

// followBacklog is how many recent records an audit stream starts with
// when it names no since.
const followBacklog = 10

// executionEvents is GET /v1/executions/events: the records the filters
// select, as server-sent events. It starts with a backlog, every record
// since `since`, or else the newest `limit` (10; 0 for none), oldest
// first, then each new record as it is written.
func (d *Server) executionEvents(w http.ResponseWriter, r *http.Request) error {
	c, err := callerOf(r)
	if err != nil {
		return err
	}
	f, err := executionFilter(r, c, time.Now())
	if err != nil {
		return err
	}
	if f.Limit, err = intParam(r, "limit", followBacklog); err != nil {
		return err
	}
	// Subscribed before the backlog is read, so no record falls between
	// the two; one in both is sent once.
	ch, cancel := d.events.calls.Subscribe()
	defer cancel()
	subscribed := time.Now()
	var backlog []*store.Execution
	if !f.Since.IsZero() {
		ef := f
		ef.Limit = 0
		err = d.store.ExportExecutions(r.Context(), ef, func(e *store.Execution) error { backlog = append(backlog, e); return nil })
	} else if f.Limit > 0 {
		backlog, err = d.store.ListExecutions(r.Context(), f)
		for i, j := 0, len(backlog)-1; i < j; i, j = i+1, j-1 {
			backlog[i], backlog[j] = backlog[j], backlog[i]
		}
	}
	if err != nil {
		return err
	}
	// Only records finished about when the stream began can be in both.
	seen := map[string]bool{}
	for _, e := range backlog {
		if !e.FinishedAt.Before(subscribed.Add(-time.Minute)) {
			seen[e.ID] = true
		}
	}
	sse, err := startSSE(w)
	if err != nil {
		return nil // the client is gone
	}
	for _, e := range backlog {
		if sse.event(api.EventExecution, e.ID, executionView(e)) != nil {
			return nil
		}
	}
	f.Since, f.Limit = time.Time{}, 0 // from here on, everything new
	return follow(r.Context(), sse, ch, d.stopping, func(e store.Execution) error {
		if !f.Match(&e) || seen[e.ID] {
			return nil
		}
		return sse.event(api.EventExecution, e.ID, executionView(&e))
	})
}

// follow sends what ch brings through send until the client goes (ctx
// ends), ch closes (the daemon stops, or the client fell behind and was
// dropped) or a send fails; it pings while idle.
func follow[T any](ctx context.Context, sse *sseWriter, ch <-chan T, stopping <-chan struct{}, send func(T) error) error {
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-stopping:
			return nil
		case v, ok := <-ch:
			if !ok {
				select {
				case <-stopping:
				default:
					_ = sse.event(api.EventOverflow, "", api.ErrorBody{Error: api.ErrorDetail{Code: "unavailable",
						Message: "this stream fell too far behind and was dropped; reconnect to go on (events in between are lost)"}})
				}
				return nil
			}
			if send(v) != nil {
				return nil
			}
		case <-tick.C:
			if sse.ping() != nil {
				return nil
			}
		}
	}
}
