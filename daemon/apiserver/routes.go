package apiserver

import (
	"fmt"
	"net/http"

	"github.com/toolcage/toolcage/errdefs"
)

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
