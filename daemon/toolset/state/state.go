// Package state is the built-in state toolset: get_state, set_state,
// delete_state and list_state_keys on JSON values the store keeps for
// the worker, across calls and restarts (kind state). The worker's
// JavaScript tools reach the same values through utils.getState and the
// rest while the toolset is on.
package state

import (
	"encoding/json"
	"fmt"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	kstate "github.com/toolcage/toolcage/daemon/kind/state"
	"github.com/toolcage/toolcage/daemon/toolset"
	"github.com/toolcage/toolcage/store"
)

// Settings are what a worker file may write under toolsets: state:.
type Settings struct {
	// MaxKeys caps the worker's keys (1,000 by default).
	MaxKeys int `json:"max_keys,omitempty"`
	// MaxKeyBytes caps a key (256 by default).
	MaxKeyBytes int `json:"max_key_bytes,omitempty"`
	// MaxValueBytes caps one value's JSON (64 KiB by default).
	MaxValueBytes kind.ByteSize `json:"max_value_bytes,omitempty"`
}

// Hard ceilings on what settings may raise the caps to: a worker's state
// is sent whole to its JavaScript calls.
const (
	ceilKeys       = 10_000
	ceilKeyBytes   = 1024
	ceilValueBytes = 1 << 20
)

func decode(raw json.RawMessage) (Settings, error) {
	var s Settings
	if err := kind.DecodeStrict(raw, &s); err != nil {
		return s, err
	}
	switch {
	case s.MaxKeys < 0 || s.MaxKeys > ceilKeys:
		return s, fmt.Errorf("max_keys: want 1 to %d", ceilKeys)
	case s.MaxKeyBytes < 0 || s.MaxKeyBytes > ceilKeyBytes:
		return s, fmt.Errorf("max_key_bytes: want 1 to %d", ceilKeyBytes)
	case s.MaxValueBytes < 0 || s.MaxValueBytes > ceilValueBytes:
		return s, fmt.Errorf("max_value_bytes: want 1 to %d bytes", ceilValueBytes)
	}
	return s, nil
}

// Toolset is the state toolset.
func Toolset() toolset.Toolset {
	return toolset.New("state", "JSON values kept per worker across calls and restarts", decode, tools)
}

func tools(_ toolset.Worker, s Settings) ([]*catalog.Definition, error) {
	lim := store.StateLimits{MaxKeys: s.MaxKeys, MaxKeyBytes: s.MaxKeyBytes, MaxValueBytes: int(s.MaxValueBytes)}.WithDefaults()
	key := map[string]any{"type": "string", "minLength": 1, "maxLength": lim.MaxKeyBytes, "description": "the key"}
	defs := []struct {
		name, op, desc string
		props          map[string]any
		required       []string
	}{
		{"get_state", kstate.OpGet, "Read one key of this worker's state: {key, found, value, updated_at}.",
			map[string]any{"key": key}, []string{"key"}},
		{"set_state", kstate.OpSet, fmt.Sprintf("Set one key of this worker's state to a JSON value (kept across calls and restarts; at most %d keys, %d bytes a value).", lim.MaxKeys, lim.MaxValueBytes),
			map[string]any{"key": key, "value": map[string]any{"description": "any JSON value"}}, []string{"key", "value"}},
		{"delete_state", kstate.OpDelete, "Delete one key of this worker's state: {key, deleted}.",
			map[string]any{"key": key}, []string{"key"}},
		{"list_state_keys", kstate.OpList, "List the keys of this worker's state that start with prefix (all when none), in order.",
			map[string]any{"prefix": map[string]any{"type": "string", "default": "", "description": "keys starting with this"}}, nil},
	}
	out := make([]*catalog.Definition, 0, len(defs))
	for _, d := range defs {
		params := map[string]any{"type": "object", "properties": d.props, "additionalProperties": false}
		if d.required != nil {
			params["required"] = d.required
		}
		def, err := toolset.Define(map[string]any{
			"name": d.name, "description": d.desc, "kind": kstate.Name, "category": "State",
			"parameters": params,
			"state":      kstate.Spec{Op: d.op, MaxKeys: lim.MaxKeys, MaxKeyBytes: lim.MaxKeyBytes, MaxValueBytes: kind.ByteSize(lim.MaxValueBytes)},
		})
		if err != nil {
			return nil, err
		}
		out = append(out, def)
	}
	return out, nil
}
