package apiserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/dispatch"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/store"
)

// Secrets.
//
// A secret is stored encrypted (store.SetSecret) as a JSON envelope: either
// {"value": "..."} or {"service": {"fields": {...}, "entries": [...]}}. A
// template's {{secret.NAME}} is the plain value, or the service's "api_key"
// field.
//
// A call may use only the secrets its tool's definition lists under
// `secrets:`; any other is refused (policy_denied) before anything runs. A
// listed secret that is not stored is refused too, as invalid_request with
// the command that sets it. Every value a call uses is redacted, in its raw,
// base64, URL and hex forms, from everything the call returns, logs or
// audits: the call's scrubber is the daemon's with those values added.

func (d *Server) putSecret(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	var req api.SecretValue
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if (req.Value == nil) == (req.Service == nil) {
		return badRequest("give exactly one of value or service")
	}
	if req.Service != nil && len(req.Service.Entries) > 0 && !json.Valid(req.Service.Entries) {
		return badRequest("service entries must be JSON")
	}
	env, err := json.Marshal(dispatch.SecretEnvelope{Value: req.Value, Service: req.Service})
	if err != nil {
		return err
	}
	defer clear(env)
	err = d.secretsKey.Use(func(key []byte) error { return d.store.SetSecret(r.Context(), key, name, env) })
	if err != nil {
		if errors.Is(err, store.ErrInvalid) {
			return badRequest("secret name %q must match ^[a-z][a-z0-9_]*$", name)
		}
		return err
	}
	d.log.Info("secret set", "secret", name, "caller", caller.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (d *Server) listSecrets(w http.ResponseWriter, r *http.Request) error {
	infos, err := d.store.ListSecrets(r.Context())
	if err != nil {
		return err
	}
	tools, _, err := d.catalog.List(r.Context(), catalog.Filter{})
	if err != nil {
		return err
	}
	usedBy := map[string][]string{}
	for _, t := range tools {
		for _, s := range t.Def.Secrets {
			if !slices.Contains(usedBy[s], t.Def.Name) {
				usedBy[s] = append(usedBy[s], t.Def.Name)
			}
		}
	}
	out := api.SecretList{Secrets: make([]api.Secret, 0, len(infos))}
	for _, i := range infos {
		u := usedBy[i.Name]
		slices.Sort(u)
		if u == nil {
			u = []string{}
		}
		out.Secrets = append(out.Secrets, api.Secret{Name: i.Name, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt, UsedBy: u})
	}
	return writeJSON(w, http.StatusOK, out)
}

func (d *Server) deleteSecret(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	if err := d.store.DeleteSecret(r.Context(), name); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errdefs.Errorf(errdefs.NotFound, "no secret named %q", name)
		}
		return err
	}
	d.log.Info("secret deleted", "secret", name, "caller", caller.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

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
