package apiserver

import (
	"net/http"

	"github.com/toolcage/toolcage/errdefs"
)

// metricsHandler is GET /v1/metrics, for a person: the series name every
// tool of every worker and count every call, which an agent's own lists and
// stats do not show it.
func (d *Server) metricsHandler(w http.ResponseWriter, r *http.Request) error {
	c, err := callerOf(r)
	if err != nil {
		return err
	}
	if !c.IsPerson() {
		return errdefs.Errorf(errdefs.Forbidden, "only a person may read the daemon's metrics")
	}
	d.metrics.ServeHTTP(w, r)
	return nil
}
