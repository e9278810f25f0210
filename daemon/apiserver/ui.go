package apiserver

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/ui"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// uiLogin is POST /v1/ui/login: a one-time login link for the person
// asking.
func (d *Server) uiLogin(w http.ResponseWriter, r *http.Request) error {
	if d.loginURL == nil {
		return errdefs.Errorf(errdefs.Conflict, "the review page is off: set ui.listen (e.g. 127.0.0.1:8765) in the daemon's config")
	}
	c, err := callerOf(r)
	if err != nil {
		return err
	}
	link, exp := d.loginURL(c.ID)
	return writeJSON(w, http.StatusOK, api.UILogin{URL: link, ExpiresAt: exp})
}

// UIBackend is the review page's view of the daemon (daemon/ui): the
// same dispatcher, catalog, store and admin log the handlers use.
func (d *Server) UIBackend() ui.Backend { return uiBackend{d} }

// uiBackend is the review page's view of the daemon.
type uiBackend struct{ d *Server }

var _ ui.Backend = uiBackend{}

func (b uiBackend) PendingApprovals(ctx context.Context) ([]api.Approval, error) {
	list, err := b.d.store.ListApprovals(ctx, store.ApprovalPending)
	return approvalViews(list), err
}

func (b uiBackend) RecentApprovals(ctx context.Context, n int) ([]api.Approval, error) {
	list, err := b.d.store.RecentApprovals(ctx, n)
	return approvalViews(list), err
}

func approvalViews(list []*store.Approval) []api.Approval {
	out := make([]api.Approval, 0, len(list))
	for _, a := range list {
		out = append(out, ApprovalView(a, false))
	}
	return out
}

// DecideApproval is `toolcage approvals allow|deny`: the dispatcher's
// decision, recorded in the admin log as the person.
func (b uiBackend) DecideApproval(ctx context.Context, id string, allow, always bool, by principal.Caller) (api.Approval, error) {
	act := ActApprovalDeny
	if allow {
		act = ActApprovalAllow
	}
	a, err := b.d.disp.DecideApproval(ctx, id, allow, always, by)
	b.d.recordAct(ctx, by, act, id, err)
	if err != nil {
		return api.Approval{}, err
	}
	return ApprovalView(a, always), nil
}

func (b uiBackend) PendingTools(ctx context.Context) ([]ui.PendingTool, error) {
	tools, _, err := b.d.catalog.List(ctx, catalog.Filter{Status: catalog.StatusPendingApproval})
	if err != nil {
		return nil, err
	}
	out := make([]ui.PendingTool, 0, len(tools))
	for _, t := range tools {
		v, err := toolView(t)
		if err != nil {
			return nil, err
		}
		p := ui.PendingTool{Tool: v}
		if t.ApprovedVersion > 0 && t.ApprovedVersion != t.Version {
			vs, err := b.d.catalog.History(ctx, t.Def.Name)
			if err != nil {
				return nil, err
			}
			for _, hv := range vs {
				if hv.Version == t.ApprovedVersion {
					if p.Approved, err = json.Marshal(hv.Def); err != nil {
						return nil, err
					}
				}
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// DecideTool is `toolcage tools approve|reject`, recorded as the person.
func (b uiBackend) DecideTool(ctx context.Context, name string, approve bool, by principal.Caller) (api.Tool, error) {
	act, fn := ActToolReject, b.d.catalog.Reject
	if approve {
		act, fn = ActToolApprove, b.d.catalog.Approve
	}
	t, err := fn(ctx, name, by)
	b.d.recordAct(ctx, by, act, name, err)
	if err != nil {
		return api.Tool{}, err
	}
	return toolView(t)
}

// Executions reads the review page's audit page with the store's own
// filters (each indexed).
func (b uiBackend) Executions(ctx context.Context, f ui.AuditFilter) ([]api.Execution, error) {
	es, err := b.d.store.ListExecutions(ctx, store.ExecutionFilter{Tool: f.Tool, Worker: f.Worker, CallerID: f.Caller,
		Outcome: f.Outcome, Since: f.Since, Until: f.Until, Limit: f.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]api.Execution, 0, len(es))
	for _, e := range es {
		out = append(out, executionView(e))
	}
	return out, nil
}

func (b uiBackend) Workers(ctx context.Context) ([]api.Worker, error) {
	list, err := b.d.store.ListWorkers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Worker, 0, len(list))
	for _, sw := range list {
		v, err := b.d.workerView(ctx, sw, true)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
