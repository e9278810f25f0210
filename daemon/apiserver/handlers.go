package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/dispatch"
	"github.com/toolcage/toolcage/daemon/visible"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// maxBody bounds every request body.
const maxBody = 4 << 20

// route is one entry of the socket API: a ServeMux pattern ("METHOD /path")
// and its handler.
type route struct {
	pattern string
	handler func(http.ResponseWriter, *http.Request) error
}

// routeTable lists every route of the socket API. It is the one list routes
// registers and the OpenAPI test holds the document to.
func (d *Server) routeTable() []route {
	return []route{
		{"GET /v1/health", d.health},
		{"GET /v1/metrics", d.metricsHandler},
		{"GET /v1/stats", d.stats},
		{"GET /v1/tools", d.listTools},
		{"POST /v1/tools", d.makesTools(d.createTool)},
		{"POST /v1/tools/test", d.makesTools(d.testTool)},
		{"GET /v1/tools/definitions", d.toolDefinitions},
		{"GET /v1/tools/{name}", d.getTool},
		{"PUT /v1/tools/{name}", d.makesTools(d.seesTool(d.putTool))},
		{"PATCH /v1/tools/{name}", d.makesTools(d.seesTool(d.patchTool))},
		{"DELETE /v1/tools/{name}", d.makesTools(d.seesTool(d.deleteTool))},
		{"POST /v1/tools/{name}/enable", d.makesTools(d.seesTool(d.lifecycle(d.catalog.Enable)))},
		{"POST /v1/tools/{name}/disable", d.makesTools(d.seesTool(d.lifecycle(d.catalog.Disable)))},
		{"POST /v1/tools/{name}/approve", d.person(ActToolApprove, "name", d.lifecycle(d.catalog.Approve))},
		{"POST /v1/tools/{name}/reject", d.person(ActToolReject, "name", d.lifecycle(d.catalog.Reject))},
		{"POST /v1/tools/{name}/rollback", d.makesTools(d.seesTool(d.rollback))},
		{"GET /v1/tools/{name}/history", d.seesTool(d.history)},
		{"POST /v1/tools/{name}/call", d.callTool},
		{"POST /v1/tools/{name}/render", d.seesTool(d.renderTool)},
		{"POST /v1/js", d.noAdHoc(d.runJS)},
		{"GET /v1/executions", d.listExecutions},
		{"GET /v1/executions/events", d.executionEvents},
		{"GET /v1/secrets", d.person(ActSecretList, "", d.listSecrets)},
		{"PUT /v1/secrets/{name}", d.person(ActSecretSet, "name", d.putSecret)},
		{"DELETE /v1/secrets/{name}", d.person(ActSecretRemove, "name", d.deleteSecret)},
		{"GET /v1/approvals", d.listApprovals},
		{"GET /v1/approvals/events", d.approvalEvents},
		{"POST /v1/approvals/{id}/allow", d.person(ActApprovalAllow, "id", d.decideApproval(true))},
		{"POST /v1/approvals/{id}/deny", d.person(ActApprovalDeny, "id", d.decideApproval(false))},
		{"POST /v1/secrets/rotate", d.person(ActSecretsRotate, "", d.rotateSecretsKey)},
		{"GET /v1/admin-acts", d.listAdminActs},
		{"POST /v1/workers", d.addWorker},
		{"GET /v1/workers", d.listWorkers},
		{"GET /v1/workers/{name}", d.getWorker},
		{"POST /v1/workers/{name}/token", d.person(ActTokenRotate, "name", d.rotateWorkerToken)},
		{"DELETE /v1/workers/{name}/token", d.person(ActTokenRevoke, "name", d.revokeWorkerTokens)},
		{"DELETE /v1/workers/{name}", d.person(ActWorkerRemove, "name", d.removeWorker)},
		{"GET /v1/openapi.json", d.openAPI},
		{"POST /v1/ui/login", d.person(ActUILogin, "", d.uiLogin)},
		{"GET /v1/mcp", d.mcpSession},
	}
}

func (d *Server) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range d.routeTable() {
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := rt.handler(w, r); err != nil {
				writeError(w, err)
			}
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &errdefs.Error{Code: errdefs.InvalidRequest, Err: fmt.Errorf("no route for %s %s", r.Method, r.URL.Path)})
	})
	return d.checkPeer(d.authenticated(mux))
}

// checkPeer refuses any peer that is neither the daemon's own user nor root.
// The socket's 0600 mode already keeps others out; this holds even if the
// mode is loosened by hand.
func (d *Server) checkPeer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := r.Context().Value(peerKey).(peer)
		if !ok || p.err != nil || !d.allowUID(p.uid) {
			d.log.Warn("refused socket peer", "uid", p.uid, "err", p.err)
			writeError(w, errdefs.Errorf(errdefs.Forbidden, "peer uid %d may not use this daemon", p.uid))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// StatusOf maps a stable code to its HTTP status.
func StatusOf(code errdefs.Code) int {
	switch code {
	case errdefs.ToolNotFound, errdefs.NotFound:
		return http.StatusNotFound
	case errdefs.InvalidArguments, errdefs.InvalidDefinition, errdefs.InvalidRequest:
		return http.StatusBadRequest
	case errdefs.Conflict, errdefs.ToolNotActive:
		return http.StatusConflict
	case errdefs.Forbidden, errdefs.PolicyDenied, errdefs.ApprovalDenied, errdefs.ApprovalRequired:
		return http.StatusForbidden
	case errdefs.Unauthorized:
		return http.StatusUnauthorized
	case errdefs.RateLimited:
		return http.StatusTooManyRequests
	case errdefs.Timeout:
		return http.StatusGatewayTimeout
	case errdefs.LimitExceeded:
		return http.StatusUnprocessableEntity
	case errdefs.ExecutorFailed:
		return http.StatusBadGateway
	case errdefs.Unavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func writeError(w http.ResponseWriter, err error) {
	code := errdefs.CodeOf(err)
	detail := api.ErrorDetail{Code: code, Message: err.Error(), Limit: errdefs.LimitOf(err)}
	var ce *dispatch.CallError
	if errors.As(err, &ce) {
		detail.CallID = ce.CallID
	}
	var ae *dispatch.ApprovalError
	if errors.As(err, &ae) {
		detail.ApprovalID = ae.ID
	}
	var ve *catalog.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			detail.Problems = append(detail.Problems, api.Problem{Field: p.Field, Message: p.Message})
		}
	}
	var ee *errdefs.Error
	if code == errdefs.Internal && !errors.As(err, &ee) {
		// Unexpected errors keep their detail in the log, not on the wire.
		detail.Message = "internal error: " + err.Error()
	}
	if code == errdefs.RateLimited {
		retry := time.Second
		var rle *policy.RateLimitedError
		if errors.As(err, &rle) && rle.RetryAfter > 0 {
			retry = rle.RetryAfter
		}
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
		detail.RetryAfterSeconds = retry.Seconds()
	}
	writeJSON(w, StatusOf(code), api.ErrorBody{Error: detail})
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	// Commands and code travel in answers; "&&" stays "&&".
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func badRequest(format string, args ...any) error {
	return errdefs.Errorf(errdefs.InvalidRequest, format, args...)
}

// readBody reads a bounded body.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, badRequest("request body is larger than %d bytes", maxBody)
		}
		return nil, badRequest("reading body: %v", err)
	}
	return b, nil
}

// decodeJSON strictly decodes a JSON body into v.
func decodeJSON(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return badRequest("request body is empty; want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("bad JSON body: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// readDefinition reads a definition body, YAML or JSON.
func readDefinition(r *http.Request) (*catalog.Definition, error) {
	b, err := readBody(r)
	if err != nil {
		return nil, err
	}
	def, err := catalog.Parse(b)
	if err != nil {
		return nil, &errdefs.Error{Code: errdefs.InvalidDefinition, Err: err}
	}
	return def, nil
}

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

func (d *Server) health(w http.ResponseWriter, r *http.Request) error {
	h := api.Health{Status: "ok", Version: d.version, UptimeSeconds: time.Since(d.started).Seconds()}
	if c, err := callerOf(r); err == nil && c.IsPerson() {
		h.Socket, h.DataDir = d.cfg.Socket, d.cfg.DataDir
	}
	return writeJSON(w, http.StatusOK, h)
}

// stats is GET /v1/stats. An agent sees the figures of what it may see:
// its worker's tools and its worker's calls, as its lists show them.
func (d *Server) stats(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	v, err := d.disp.Views().For(caller)
	if err != nil {
		return err
	}
	var s catalog.Stats
	if v.Worker() != nil {
		tools, _, err := v.List(r.Context(), visible.Filter{})
		if err != nil {
			return err
		}
		s = statsOf(tools)
	} else if s, err = d.catalog.Stats(r.Context()); err != nil {
		return err
	}
	n, err := d.store.CountMatching(r.Context(), ownRecords(caller, store.ExecutionFilter{}))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, api.Stats{Total: s.Total, Active: s.Active, Disabled: s.Disabled,
		PendingApproval: s.PendingApproval, Rejected: s.Rejected, CreatedByLLM: s.CreatedByLLM,
		CreatedByUser: s.CreatedByUser, TotalUsage: s.TotalUsage, Executions: n})
}

// statsOf counts tools as the store's ToolStats counts the catalog.
func statsOf(tools []*catalog.Tool) catalog.Stats {
	s := catalog.Stats{Total: len(tools)}
	for _, t := range tools {
		switch t.Status {
		case catalog.StatusActive:
			s.Active++
		case catalog.StatusDisabled:
			s.Disabled++
		case catalog.StatusPendingApproval:
			s.PendingApproval++
		case catalog.StatusRejected:
			s.Rejected++
		}
		switch t.CreatedBy {
		case catalog.CreatedByLLM:
			s.CreatedByLLM++
		case catalog.CreatedByUser:
			s.CreatedByUser++
		}
		s.TotalUsage += t.UsageCount
	}
	return s
}

func intParam(r *http.Request, name string, def int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, badRequest("query parameter %s must be a non-negative integer, not %q", name, s)
	}
	return n, nil
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

func (d *Server) listAdminActs(w http.ResponseWriter, r *http.Request) error {
	c, err := callerOf(r)
	if err != nil {
		return err
	}
	if !c.IsPerson() {
		return errdefs.Errorf(errdefs.Forbidden, "only a person may read the admin log")
	}
	limit, err := intParam(r, "limit", 50)
	if err != nil {
		return err
	}
	offset, err := intParam(r, "offset", 0)
	if err != nil {
		return err
	}
	acts, err := d.store.ListAdminActs(r.Context(), limit, offset)
	if err != nil {
		return err
	}
	out := api.AdminActList{AdminActs: make([]api.AdminAct, 0, len(acts))}
	for _, a := range acts {
		out.AdminActs = append(out.AdminActs, api.AdminAct(*a))
	}
	return writeJSON(w, http.StatusOK, out)
}
