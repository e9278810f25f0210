package apiserver

import (
	"net/http"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
)

// rotateSecretsKey is POST /v1/secrets/rotate: people only.
func (d *Server) rotateSecretsKey(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	if caller.Type != catalog.CreatedByUser {
		return errdefs.Errorf(errdefs.Forbidden, "only a person may rotate the secrets key")
	}
	if err := d.secretsKey.Rotate(r.Context()); err != nil {
		d.log.Error("secrets key rotation failed", "err", err)
		return err
	}
	infos, err := d.store.ListSecrets(r.Context())
	if err != nil {
		return err
	}
	d.log.Info("secrets key rotated", "secrets", len(infos), "caller", caller.ID)
	return writeJSON(w, http.StatusOK, api.SecretsRotation{Secrets: len(infos), KeyFile: d.cfg.Secrets.KeyFile})
}
