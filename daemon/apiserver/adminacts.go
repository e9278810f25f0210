package apiserver

import (
	"net/http"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/errdefs"
)

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
