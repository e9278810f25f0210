package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/scrub"
	"github.com/toolcage/toolcage/store"
)

// Secrets of a call.
//
// A call may use only the secrets its tool's definition lists under
// `secrets:`; any other is refused (policy_denied) before anything runs. A
// listed secret that is not stored is refused too, as invalid_request with
// the command that sets it. Every value a call uses is redacted, in its raw,
// base64, URL and hex forms, from everything the call returns, logs or
// audits: the call's scrubber is the daemon's with those values added.

// SecretEnvelope is what the store holds for one secret: either a plain
// value or a service. A template's {{secret.NAME}} is the plain value, or
// the service's "api_key" field.
type SecretEnvelope struct {
	Value   *string            `json:"value,omitempty"`
	Service *api.ServiceSecret `json:"service,omitempty"`
}

// serviceKeyField is the field of a service secret that {{secret.NAME}} is.
const serviceKeyField = "api_key"

// callSecrets is what a call gets of its secrets.
type callSecrets struct {
	// lookup is what the renderers take for {{secret.NAME}}.
	lookup func(string) (string, error)
	// scrub is the daemon's scrubber plus the values; nil with no secrets.
	scrub *scrub.Scrubber
	// docs are the envelopes a JavaScript call gets for utils.getApiKey
	// and the Config Center helpers.
	docs map[string]string
	// known are the values the scrubber redacts (name → value), which
	// the call's nested calls inherit (nested.go).
	known map[string]string
}

// callSecrets decrypts every secret the call of res uses, after checking
// each is listed in the definition. dryRunBy names the caller type of a
// dry run of an unsaved definition ("" otherwise): an llm's dry run may
// use no secret, since such a definition was never approved.
func (d *Dispatcher) callSecrets(ctx context.Context, res *catalog.Resolved, tool kind.Tool, dryRunBy string) (callSecrets, error) {
	names, envelopes := res.Compiled.Secrets(tool)
	if len(names) == 0 {
		return callSecrets{lookup: noSecrets}, nil
	}
	var docs map[string]string
	if envelopes {
		docs = make(map[string]string, len(names))
	}
	def := res.Tool.Def
	for _, n := range names {
		if !slices.Contains(def.Secrets, n) {
			return callSecrets{}, errdefs.Errorf(errdefs.PolicyDenied,
				"tool %q uses secret %q, which its definition does not list under secrets:", def.Name, n)
		}
	}
	if dryRunBy == catalog.CreatedByLLM {
		return callSecrets{}, errdefs.Errorf(errdefs.PolicyDenied,
			"an llm caller's dry run may not use secrets (%s); create the tool and have it approved", strings.Join(names, ", "))
	}
	values := make(map[string]string, len(names))
	known := make(map[string]string, len(names))
	for _, n := range names {
		raw, err := d.secret(ctx, n)
		if errors.Is(err, store.ErrNotFound) {
			return callSecrets{}, errdefs.Errorf(errdefs.InvalidRequest,
				"secret %s is not set; run toolcage secrets set %s", n, n)
		}
		if errors.Is(err, store.ErrDecrypt) {
			return callSecrets{}, errdefs.Errorf(errdefs.Internal,
				"secret %s cannot be decrypted: the secrets key file is not the one that stored it", n)
		}
		if err != nil {
			return callSecrets{}, err
		}
		var env SecretEnvelope
		err = json.Unmarshal(raw, &env)
		if envelopes && err == nil {
			docs[n] = string(raw)
		}
		clear(raw)
		if err != nil {
			return callSecrets{}, fmt.Errorf("secret %s: stored value is not an envelope", n)
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
			if !ok && envelopes {
				continue // The call reads the fields from the envelope.
			}
			if !ok {
				return callSecrets{}, errdefs.Errorf(errdefs.InvalidRequest,
					"secret %s is a service with no %q field, which {{secret.%s}} stands for", n, serviceKeyField, n)
			}
			values[n] = v
			known[n] = v
		default:
			return callSecrets{}, fmt.Errorf("secret %s: stored envelope is empty", n)
		}
	}
	lookup := func(name string) (string, error) {
		v, ok := values[name]
		if !ok {
			return "", fmt.Errorf("secret %s was not resolved for this call", name)
		}
		return v, nil
	}
	return callSecrets{lookup: lookup, scrub: d.cfg.Scrubber.WithKnown(known), docs: docs, known: known}, nil
}

func (d *Dispatcher) secret(ctx context.Context, name string) ([]byte, error) {
	if d.cfg.Secrets == nil {
		return nil, fmt.Errorf("secret %s: %w", name, store.ErrNotFound)
	}
	return d.cfg.Secrets.Secret(ctx, name)
}

// noSecrets is the lookup of a tool that uses none.
func noSecrets(name string) (string, error) {
	return "", fmt.Errorf("secret %s is not available to this call", name)
}
