// Package fetch is the built-in fetch toolset: fetch_url, an HTTP request
// to any URL the worker's allowlist covers ("*": any public host), through
// the network guard, with the methods the worker allows (GET and HEAD
// unless its settings say more) (kind fetch).
package fetch

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	kfetch "github.com/toolcage/toolcage/daemon/kind/fetch"
	"github.com/toolcage/toolcage/daemon/toolset"
	"github.com/toolcage/toolcage/policy/netguard"
)

// Settings are what a worker file may write under toolsets: fetch:.
type Settings struct {
	// AllowedDomains are the hosts fetch_url may reach: exact hosts,
	// "*.example.com", or "*" for any public host.
	AllowedDomains []string `json:"allowed_domains"`
	// MaxResponseBytes cuts a longer body (100,000 bytes by default).
	MaxResponseBytes kind.ByteSize `json:"max_response_bytes,omitempty"`
	// Methods are the HTTP methods fetch_url may send, in any case:
	// GET and HEAD (it reads) when none are written; OPTIONS, POST, PUT,
	// PATCH and DELETE only where written.
	Methods []string `json:"methods,omitempty"`
}

const ceilResponseBytes = 10 << 20

func decode(raw json.RawMessage) (Settings, error) {
	var s Settings
	if err := kind.DecodeStrict(raw, &s); err != nil {
		return s, err
	}
	if len(s.AllowedDomains) == 0 {
		return s, errors.New(`allowed_domains is required: the hosts fetch_url may reach, or ["*"] for any public host`)
	}
	if _, err := netguard.New(netguard.Config{AllowedDomains: s.AllowedDomains}); err != nil {
		return s, fmt.Errorf("allowed_domains: %w", err)
	}
	if s.MaxResponseBytes < 0 || s.MaxResponseBytes > ceilResponseBytes {
		return s, fmt.Errorf("max_response_bytes: want up to %d bytes", ceilResponseBytes)
	}
	switch {
	case s.Methods == nil:
		s.Methods = slices.Clone(kfetch.DefaultMethods)
	case len(s.Methods) == 0:
		return s, fmt.Errorf("methods: list at least one method (%s when left out)", strings.Join(kfetch.DefaultMethods, " and "))
	}
	if err := kfetch.CheckMethods(s.Methods); err != nil {
		return s, fmt.Errorf("methods: %w", err)
	}
	for i, m := range s.Methods {
		s.Methods[i] = strings.ToUpper(m)
	}
	return s, nil
}

// Toolset is the fetch toolset.
func Toolset() toolset.Toolset {
	return toolset.New("fetch", "fetch_url: HTTP requests to the hosts the worker allows", decode, tools)
}

func tools(_ toolset.Worker, s Settings) ([]*catalog.Definition, error) {
	methods := strings.Join(s.Methods, ", ")
	def, err := toolset.Define(map[string]any{
		"name": "fetch_url", "kind": kfetch.Name, "category": "Network", "permissions": []string{"network"},
		"description": "Send an HTTP request (" + methods + ") and get {status, headers, body}: the body as JSON when it is JSON, else {data} text or {data_base64}; " +
			"a long body is cut (truncated: true). Only public hosts the worker allows are reached.",
		"parameters": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"url"},
			"properties": map[string]any{
				"url": map[string]any{"type": "string", "minLength": 1, "description": "http or https URL"},
				// No enum: any case is taken, and a method the worker
				// does not allow is refused as forbidden, not as a bad
				// argument.
				"method":  map[string]any{"type": "string", "default": kfetch.DefaultMethod(s.Methods), "description": "the methods this worker allows: " + methods},
				"headers": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
				"body":    map[string]any{"type": "string", "description": "the request body, as text"},
			}},
		"fetch": kfetch.Spec{AllowedDomains: s.AllowedDomains, MaxResponseBytes: s.MaxResponseBytes, Methods: s.Methods},
	})
	if err != nil {
		return nil, err
	}
	return []*catalog.Definition{def}, nil
}
