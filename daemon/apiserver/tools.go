package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/dispatch"
	"github.com/toolcage/toolcage/daemon/visible"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

func toolView(t *catalog.Tool) (api.Tool, error) {
	def, err := json.Marshal(t.Def)
	if err != nil {
		return api.Tool{}, err
	}
	v := api.Tool{Definition: def, Status: t.Status, CreatedBy: t.CreatedBy, Version: t.Version,
		ApprovedVersion: t.ApprovedVersion, ApprovalDefault: t.Def.WrittenApproval() == "",
		UsageCount: t.UsageCount, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if !t.LastUsedAt.IsZero() {
		lu := t.LastUsedAt
		v.LastUsedAt = &lu
	}
	return v, nil
}

func writeTool(w http.ResponseWriter, status int, t *catalog.Tool) error {
	v, err := toolView(t)
	if err != nil {
		return err
	}
	return writeJSON(w, status, v)
}

func (d *Server) listTools(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := catalog.Filter{Status: q.Get("status"), Category: q.Get("category"), CreatedBy: q.Get("created_by"), Kind: q.Get("kind")}
	var err error
	if f.Limit, err = intParam(r, "limit", 0); err != nil {
		return err
	}
	if f.Offset, err = intParam(r, "offset", 0); err != nil {
		return err
	}
	v, err := d.viewOf(r)
	if err != nil {
		return err
	}
	tools, total, err := v.List(r.Context(), visible.Filter{Filter: f, Profile: q.Get("profile")})
	if err != nil {
		return err
	}
	out := api.ToolList{Tools: make([]api.Tool, 0, len(tools)), Total: total}
	for _, t := range tools {
		v, err := toolView(t)
		if err != nil {
			return err
		}
		out.Tools = append(out.Tools, v)
	}
	return writeJSON(w, http.StatusOK, out)
}

func (d *Server) createTool(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	def, err := readDefinition(r)
	if err != nil {
		return err
	}
	t, err := d.catalog.Create(r.Context(), def, caller)
	if err != nil {
		return err
	}
	if err := d.adoptAgentTool(r.Context(), caller, t.Def.Name); err != nil {
		return err
	}
	d.log.Info("tool created", "tool", t.Def.Name, "status", t.Status, "created_by", t.CreatedBy)
	return writeTool(w, http.StatusCreated, t)
}

func (d *Server) getTool(w http.ResponseWriter, r *http.Request) error {
	t, err := d.toolFor(r, r.PathValue("name"))
	if err != nil {
		return err
	}
	v, err := toolView(t)
	if err != nil {
		return err
	}
	if len(t.Def.Secrets) > 0 {
		set, err := d.store.ListSecrets(r.Context())
		if err != nil {
			return err
		}
		for _, want := range t.Def.Secrets {
			if !slices.ContainsFunc(set, func(s store.SecretInfo) bool { return s.Name == want }) {
				v.MissingSecrets = append(v.MissingSecrets, want)
			}
		}
	}
	return writeJSON(w, http.StatusOK, v)
}

func (d *Server) putTool(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	def, err := readDefinition(r)
	if err != nil {
		return err
	}
	t, err := d.catalog.Update(r.Context(), r.PathValue("name"), def, caller)
	if err != nil {
		return err
	}
	return writeTool(w, http.StatusOK, t)
}

// patchTool applies a JSON merge patch (RFC 7386) to the current definition.
func (d *Server) patchTool(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	cur, err := d.catalog.Get(r.Context(), name)
	if err != nil {
		return err
	}
	b, err := readBody(r)
	if err != nil {
		return err
	}
	patch, err := catalog.YAMLToJSON(b)
	if err != nil {
		return badRequest("bad patch: %v", err)
	}
	base, err := cur.Def.WrittenJSON()
	if err != nil {
		return err
	}
	merged, err := mergePatch(base, patch)
	if err != nil {
		return badRequest("bad patch: %v", err)
	}
	def, err := catalog.ParseJSON(merged)
	if err != nil {
		return &errdefs.Error{Code: errdefs.InvalidDefinition, Err: err}
	}
	t, err := d.catalog.Update(r.Context(), name, def, caller)
	if err != nil {
		return err
	}
	return writeTool(w, http.StatusOK, t)
}

func (d *Server) deleteTool(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	// An llm confirms a delete with ?confirm=true (catalog.Delete).
	confirmed := false
	if v := r.URL.Query().Get("confirm"); v != "" {
		if confirmed, err = strconv.ParseBool(v); err != nil {
			return badRequest("query parameter confirm must be true or false, not %q", v)
		}
	}
	if err := d.catalog.Delete(r.Context(), r.PathValue("name"), caller, confirmed); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (d *Server) lifecycle(fn func(ctx context.Context, name string, caller principal.Caller) (*catalog.Tool, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		caller, err := callerOf(r)
		if err != nil {
			return err
		}
		t, err := fn(r.Context(), r.PathValue("name"), caller)
		if err != nil {
			return err
		}
		return writeTool(w, http.StatusOK, t)
	}
}

func (d *Server) rollback(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	var req api.RollbackRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Version <= 0 {
		return badRequest("version must be a positive integer")
	}
	t, err := d.catalog.Rollback(r.Context(), r.PathValue("name"), req.Version, caller)
	if err != nil {
		return err
	}
	return writeTool(w, http.StatusOK, t)
}

func (d *Server) history(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	vs, err := d.catalog.History(r.Context(), name)
	if err != nil {
		return err
	}
	cur, err := d.catalog.Get(r.Context(), name)
	if err != nil {
		return err
	}
	out := api.ToolHistory{Tool: name, Current: cur.Version, Versions: make([]api.ToolVersion, 0, len(vs))}
	for _, v := range vs {
		def, err := json.Marshal(v.Def)
		if err != nil {
			return err
		}
		out.Versions = append(out.Versions, api.ToolVersion{Version: v.Version, Definition: def, CreatedAt: v.CreatedAt})
	}
	return writeJSON(w, http.StatusOK, out)
}

func (d *Server) callTool(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	var req api.CallRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	wait, err := approvalWaitOf(r)
	if err != nil {
		return err
	}
	out, err := d.disp.Call(r.Context(), dispatch.CallRequest{Tool: r.PathValue("name"), Arguments: req.Arguments, Caller: caller, NoApprovalWait: !wait})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, callResponse(out))
}

// callResponse is the wire shape of a call's outcome.
func callResponse(o *dispatch.Outcome) *api.CallResponse {
	logs := make([]api.LogLine, len(o.Logs))
	for i, l := range o.Logs {
		logs[i] = api.LogLine(l)
	}
	return &api.CallResponse{CallID: o.CallID, Tool: o.Tool, Version: o.Version, Result: o.Result, Logs: logs,
		IsError: o.IsError, Error: o.Error, Truncated: o.Truncated,
		DurationMS: float64(o.Duration) / float64(time.Millisecond)}
}

func (d *Server) renderTool(w http.ResponseWriter, r *http.Request) error {
	var req api.CallRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	out, err := d.disp.Render(r.Context(), r.PathValue("name"), req.Arguments)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}

func (d *Server) testTool(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	var req api.TestRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if len(req.Definition) == 0 {
		return badRequest("definition is required")
	}
	def, err := catalog.ParseJSON(req.Definition)
	if err != nil {
		return &errdefs.Error{Code: errdefs.InvalidDefinition, Err: err}
	}
	out, err := d.disp.DryRun(r.Context(), def, req.Arguments, caller)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, callResponse(out))
}

func (d *Server) runJS(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	var req api.JSRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	var lim catalog.Limits
	if req.Timeout != "" {
		t, err := time.ParseDuration(req.Timeout)
		if err != nil || t <= 0 {
			return badRequest("timeout must be a positive duration like \"5s\", not %q", req.Timeout)
		}
		lim.Timeout = catalog.Duration(t)
	}
	if req.Memory != "" {
		m, err := catalog.ParseByteSize(req.Memory)
		if err != nil || m <= 0 {
			return badRequest("memory must be a positive size like \"64MiB\", not %q", req.Memory)
		}
		// An executor's memory cap bounds every call in it: a larger
		// limit would promise what the sandbox never gives.
		if max, _ := catalog.ParseByteSize(d.cfg.Sandbox.Memory); max > 0 && m > max {
			return badRequest("memory %s is over the configured maximum %s (sandbox.memory)", req.Memory, d.cfg.Sandbox.Memory)
		}
		lim.Memory = catalog.ByteSize(m)
	}
	out, err := d.disp.AdHocJS(r.Context(), req.Code, req.Arguments, lim, caller)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, callResponse(out))
}

// viewOf is the catalog as the request's caller sees it (daemon/visible):
// through a worker, only the worker's tools exist.
func (d *Server) viewOf(r *http.Request) (*visible.View, error) {
	c, err := callerOf(r)
	if err != nil {
		return nil, err
	}
	return d.disp.Views().For(c)
}

// toolFor gets the tool called name as the request's caller sees it.
func (d *Server) toolFor(r *http.Request, name string) (*catalog.Tool, error) {
	v, err := d.viewOf(r)
	if err != nil {
		return nil, err
	}
	t, _, err := v.Get(r.Context(), name)
	return t, err
}

// makesTools guards the routes that make or change tools: an agent whose
// worker does not let it (agent_tools.create: false) is refused. Callers
// through no registered worker are left to the catalog's own rules.
func (d *Server) makesTools(fn func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		v, err := d.viewOf(r)
		if err != nil {
			return err
		}
		if wk := v.Worker(); wk != nil && !wk.AgentTools.Create {
			return errdefs.Errorf(errdefs.Forbidden, "worker %q does not let its agent make or change tools (agent_tools.create: false)", wk.Name)
		}
		return fn(w, r)
	}
}

// seesTool guards the routes about one tool: through a worker, a tool
// outside it reads as absent.
func (d *Server) seesTool(fn func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		if _, err := d.toolFor(r, r.PathValue("name")); err != nil {
			return err
		}
		return fn(w, r)
	}
}

// noAdHoc refuses ad-hoc code to an agent acting through a worker: no
// worker grants it (yet), and it would run outside the worker's tools.
func (d *Server) noAdHoc(fn func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		v, err := d.viewOf(r)
		if err != nil {
			return err
		}
		if wk := v.Worker(); wk != nil {
			return errdefs.Errorf(errdefs.Forbidden, "worker %q does not grant ad-hoc code; call its tools", wk.Name)
		}
		return fn(w, r)
	}
}

// adoptAgentTool makes a tool an agent just made one of its worker's.
func (d *Server) adoptAgentTool(ctx context.Context, c principal.Caller, tool string) error {
	v, err := d.disp.Views().For(c)
	if err != nil || v.Worker() == nil {
		return err
	}
	w := v.Worker()
	if err := d.store.AddWorkerTool(ctx, w.Name, tool); err != nil {
		return fmt.Errorf("tool %q was made, but not added to worker %q: %w", tool, w.Name, err)
	}
	d.changes.Publish()
	return nil
}
