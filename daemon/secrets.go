package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy/scrub"
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

// secretEnvelope is what the store holds for one secret.
type secretEnvelope struct {
	Value   *string            `json:"value,omitempty"`
	Service *api.ServiceSecret `json:"service,omitempty"`
}

// serviceKeyField is the field of a service secret that {{secret.NAME}} is.
const serviceKeyField = "api_key"

func (d *Daemon) putSecret(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	if caller.Type == catalog.CreatedByLLM {
		// A model reads its own context; secrets come from people.
		return errdefs.Errorf(errdefs.Forbidden, "an llm caller may not set secrets")
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
	env, err := json.Marshal(secretEnvelope{Value: req.Value, Service: req.Service})
	if err != nil {
		return err
	}
	defer clear(env)
	err = d.disp.secretsKey.use(func(key []byte) error { return d.store.SetSecret(r.Context(), key, name, env) })
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

func (d *Daemon) listSecrets(w http.ResponseWriter, r *http.Request) error {
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

func (d *Daemon) deleteSecret(w http.ResponseWriter, r *http.Request) error {
	caller, err := callerOf(r)
	if err != nil {
		return err
	}
	if caller.Type == catalog.CreatedByLLM {
		return errdefs.Errorf(errdefs.Forbidden, "an llm caller may not delete secrets")
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

// templateSecrets lists the secrets a resolved tool's templates use, each
// once, in order.
func templateSecrets(res *catalog.Resolved) []string {
	if res.Tool.Def.Kind == executors.KindJS {
		// JavaScript reaches its secrets through utils, by name: it is given
		// every secret its definition lists.
		return slices.Clone(res.Tool.Def.Secrets)
	}
	var out []string
	add := func(names []string) {
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	if res.Shell != nil {
		add(res.Shell.Template().Secrets())
	}
	envKeys := make([]string, 0, len(res.Env))
	for k := range res.Env {
		envKeys = append(envKeys, k)
	}
	slices.Sort(envKeys)
	for _, k := range envKeys {
		add(res.Env[k].Secrets())
	}
	if res.HTTP != nil {
		add(res.HTTP.Secrets())
	}
	return out
}

// callSecrets decrypts every secret res's templates use, after checking
// each is listed in the definition, and returns the lookup the renderers
// take and a scrubber that also redacts those values. With no secrets the
// scrubber is nil: the daemon's serves. dryRunBy names the caller type of a dry run
// of an unsaved definition ("" otherwise): an llm's dry run may use no
// secret, since such a definition was never approved.
func (d *Dispatcher) callSecrets(ctx context.Context, res *catalog.Resolved, dryRunBy string) (func(string) (string, error), *scrub.Scrubber, map[string]string, error) {
	names := templateSecrets(res)
	if len(names) == 0 {
		return noSecrets, nil, nil, nil
	}
	isJS := res.Tool.Def.Kind == executors.KindJS
	// docs are the envelopes a JavaScript call gets for utils.getApiKey and
	// the Config Center helpers.
	var docs map[string]string
	if isJS {
		docs = make(map[string]string, len(names))
	}
	def := res.Tool.Def
	for _, n := range names {
		if !slices.Contains(def.Secrets, n) {
			return nil, nil, nil, errdefs.Errorf(errdefs.PolicyDenied,
				"tool %q uses secret %q, which its definition does not list under secrets:", def.Name, n)
		}
	}
	if dryRunBy == catalog.CreatedByLLM {
		return nil, nil, nil, errdefs.Errorf(errdefs.PolicyDenied,
			"an llm caller's dry run may not use secrets (%s); create the tool and have it approved", strings.Join(names, ", "))
	}
	values := make(map[string]string, len(names))
	known := make(map[string]string, len(names))
	for _, n := range names {
		raw, err := d.secretsKey.getSecret(ctx, d.store, n)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, nil, errdefs.Errorf(errdefs.InvalidRequest,
				"secret %s is not set; run toolcage secrets set %s", n, n)
		}
		if errors.Is(err, store.ErrDecrypt) {
			return nil, nil, nil, errdefs.Errorf(errdefs.Internal,
				"secret %s cannot be decrypted: the secrets key file is not the one that stored it", n)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		var env secretEnvelope
		err = json.Unmarshal(raw, &env)
		if isJS && err == nil {
			docs[n] = string(raw)
		}
		clear(raw)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("secret %s: stored value is not an envelope", n)
		}
		switch {
		case env.Value != nil:
			values[n] = *env.Value
			known[n] = *env.Value
		case env.Service != nil:
			for f, v := range env.Service.Fields {
				known[n+"_"+f] = v
			}
			// Entries hold per-account fields (keys among them): every
			// string in them is redacted too.
			var entries []struct {
				Label  string         `json:"label"`
				Fields map[string]any `json:"fields"`
			}
			if json.Unmarshal(env.Service.Entries, &entries) == nil {
				for i, e := range entries {
					for f, v := range e.Fields {
						if sv, ok := v.(string); ok {
							known[fmt.Sprintf("%s_%d_%s", n, i, f)] = sv
						}
					}
				}
			}
			v, ok := env.Service.Fields[serviceKeyField]
			if !ok && isJS {
				continue // JavaScript reads its fields through utils.
			}
			if !ok {
				return nil, nil, nil, errdefs.Errorf(errdefs.InvalidRequest,
					"secret %s is a service with no %q field, which {{secret.%s}} stands for", n, serviceKeyField, n)
			}
			values[n] = v
			known[n] = v
		default:
			return nil, nil, nil, fmt.Errorf("secret %s: stored envelope is empty", n)
		}
	}
	lookup := func(name string) (string, error) {
		v, ok := values[name]
		if !ok {
			return "", fmt.Errorf("secret %s was not resolved for this call", name)
		}
		return v, nil
	}
	return lookup, d.scrubber.WithKnown(known), docs, nil
}

// noSecrets is the lookup of a tool that uses none.
func noSecrets(name string) (string, error) {
	return "", fmt.Errorf("secret %s is not available to this call", name)
}
