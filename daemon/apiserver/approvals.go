package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/store"
)

// The approval API: listing and deciding approvals. The queue a parked
// call waits in is the dispatcher's (daemon/dispatch).

// ApprovalView is the wire shape of an approval (always: the person
// allowed it for good).
func ApprovalView(a *store.Approval, always bool) api.Approval {
	v := api.Approval{ID: a.ID, Tool: a.Tool, Version: a.Version, CallerID: a.CallerID, CallerType: a.CallerType, Worker: a.Worker,
		Arguments: a.Args, Rendered: a.Rendered, Change: a.Change, Status: a.Status, CreatedAt: a.CreatedAt, DecidedBy: a.DecidedBy, Always: always}
	if len(v.Arguments) == 0 {
		v.Arguments = json.RawMessage("{}")
	}
	if !a.DecidedAt.IsZero() {
		t := a.DecidedAt
		v.DecidedAt = &t
	}
	if !a.UsedAt.IsZero() {
		t := a.UsedAt
		v.UsedAt = &t
	}
	return v
}

// approvalEvents is GET /v1/approvals/events: the pending approvals as
// events, then every approval as it is made or decided, until the client
// goes. An agent sees its own only, as in the list.
func (d *Server) approvalEvents(w http.ResponseWriter, r *http.Request) error {
	c, err := callerOf(r)
	if err != nil {
		return err
	}
	mine := func(a *store.Approval) bool { return c.TokenID == "" || a.CallerID == c.ID }
	// Subscribed before the pending ones are read: none falls between.
	ch, cancel := d.events.approvals.Subscribe()
	defer cancel()
	pending, err := d.store.ListApprovals(r.Context(), store.ApprovalPending)
	if err != nil {
		return err
	}
	sent := map[string]bool{}
	sse, err := startSSE(w)
	if err != nil {
		return nil
	}
	for _, a := range pending {
		if !mine(a) {
			continue
		}
		sent[a.ID] = true
		if sse.event(api.EventApproval, a.ID, ApprovalView(a, false)) != nil {
			return nil
		}
	}
	return follow(r.Context(), sse, ch, d.stopping, func(a store.Approval) error {
		if !mine(&a) || (a.Status == store.ApprovalPending && sent[a.ID]) {
			return nil
		}
		return sse.event(api.EventApproval, a.ID, ApprovalView(&a, false))
	})
}

func (d *Server) listApprovals(w http.ResponseWriter, r *http.Request) error {
	status := r.URL.Query().Get("status")
	switch status {
	case "", store.ApprovalPending, store.ApprovalAllowed, store.ApprovalDenied, store.ApprovalExpired:
	default:
		return badRequest("status must be pending, allowed, denied or expired, not %q", status)
	}
	list, err := d.store.ListApprovals(r.Context(), status)
	if err != nil {
		return err
	}
	c, err := callerOf(r)
	if err != nil {
		return err
	}
	out := api.ApprovalList{Approvals: make([]api.Approval, 0, len(list))}
	for _, a := range list {
		if c.TokenID != "" && a.CallerID != c.ID {
			continue // an agent sees the approvals its own calls wait for
		}
		out.Approvals = append(out.Approvals, ApprovalView(a, false))
	}
	return writeJSON(w, http.StatusOK, out)
}

func (d *Server) decideApproval(allow bool) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		caller, err := callerOf(r)
		if err != nil {
			return err
		}
		var req api.ApprovalDecision
		if b, err := readBody(r); err != nil {
			return err
		} else if len(bytes.TrimSpace(b)) > 0 {
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&req); err != nil {
				return badRequest("bad JSON body: %v", strings.TrimPrefix(err.Error(), "json: "))
			}
		}
		a, err := d.disp.DecideApproval(r.Context(), r.PathValue("id"), allow, req.Always, caller)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, ApprovalView(a, req.Always))
	}
}

// approvalWaitOf reads Toolcage-Approval-Wait: "0" (or "false") returns at
// once; anything else, or no header, waits.
func approvalWaitOf(r *http.Request) (bool, error) {
	v := r.Header.Get(api.HeaderApprovalWait)
	if v == "" {
		return true, nil
	}
	if n, err := strconv.ParseBool(v); err == nil {
		return n, nil
	}
	return false, badRequest("%s must be 0 or 1, not %q", api.HeaderApprovalWait, v)
}
