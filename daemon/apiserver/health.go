package apiserver

import (
	"net/http"
	"time"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/visible"
	"github.com/toolcage/toolcage/store"
)

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
