package apiserver

import (
	"context"
	"net/http"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/defs"
	"github.com/toolcage/toolcage/daemon/visible"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
)

// GET /v1/tools/definitions?format=openai|anthropic|mcp[&worker=NAME]: the
// active tools as function-calling definitions (daemon/defs). Through a
// worker (named, or the one an agent's token or a person's Toolcage-Worker
// header names) they are that worker's tools, meta-tools included; else
// the catalog's. Either way, only what the caller's profiles allow.

func (d *Server) toolDefinitions(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	format, err := defs.ParseFormat(q.Get("format"))
	if err != nil {
		return err
	}
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	wk, err := d.definitionsWorker(caller, q.Get("worker"))
	if err != nil {
		return err
	}
	if wk != nil && caller.Worker != wk.Name {
		// A person exporting a worker's tools sees them as its agent would.
		caller = principal.Caller{ID: workerCallerID(wk.Name), Type: principal.TypeLLM, Worker: wk.Name}
	}
	tools, err := d.definitionTools(r.Context(), caller, wk)
	if err != nil {
		return err
	}
	out, err := defs.Render(format, tools)
	if err != nil {
		return err
	}
	v := api.ToolDefinitions{Format: string(format), Tools: out}
	if wk != nil {
		v.Worker = wk.Name
	}
	return writeJSON(w, http.StatusOK, v)
}

// definitionsWorker is the worker whose tools are exported: the one named
// (a caller acting through a worker, an agent, may name only its own), else the caller's own, else none.
func (d *Server) definitionsWorker(c principal.Caller, name string) (*worker.Worker, error) {
	if name == "" {
		v, err := d.disp.Views().For(c)
		if err != nil {
			return nil, err
		}
		return v.Worker(), nil
	}
	if err := visibleWorker(c, name); err != nil {
		return nil, err
	}
	wk, err := d.workers.Get(name)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.NotFound, "no worker named %q", name)
	}
	return wk, nil
}

// definitionTools lists the active tools the caller may call, as defs
// needs them.
func (d *Server) definitionTools(ctx context.Context, c principal.Caller, wk *worker.Worker) ([]defs.Tool, error) {
	list, _, err := d.disp.Views().Through(c, wk).List(ctx, visible.Filter{Filter: catalog.Filter{Status: catalog.StatusActive}, Allowed: true})
	if err != nil {
		return nil, err
	}
	out := make([]defs.Tool, 0, len(list))
	for _, t := range list {
		out = append(out, defs.FromDefinition(t.Def))
	}
	return out, nil
}
