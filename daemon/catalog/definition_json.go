package catalog

import (
	"bytes"
	"encoding/json"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/daemon/kind/builtin"
	"github.com/toolcage/toolcage/toolspec"
)

// The kind's block sits beside the common fields under the kind's name
// (js:, shell:, http:) and is decoded by the kind, strictly: the common
// fields are read as a plain struct, the block as raw JSON until the kind
// is known, the way Caddy loads a module from its namespace.

// definitionFields is a Definition without its methods, for encoding.
type definitionFields Definition

// MarshalJSON writes the common fields, then the block under the kind's name.
func (d Definition) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(definitionFields(d))
	if err != nil || d.Spec == nil {
		return b, err
	}
	spec, err := json.Marshal(d.Spec)
	if err != nil {
		return nil, err
	}
	key, err := json.Marshal(string(d.Kind))
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(key)+len(spec)+2)
	out = append(out, b[:len(b)-1]...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(append(append(append(out, key...), ':'), spec...), '}')
	return out, nil
}

// UnmarshalJSON reads a definition strictly: unknown fields, in the common
// part or in the block, are errors.
func (d *Definition) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	kinds := builtin.Kinds()
	blocks := map[toolspec.Kind]json.RawMessage{}
	for _, n := range kinds.Names() {
		if raw, ok := fields[string(n)]; ok {
			delete(fields, string(n))
			if !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
				blocks[n] = raw
			}
		}
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	var f definitionFields
	if err := kind.DecodeStrict(rest, &f); err != nil {
		return err
	}
	*d = Definition(f)
	for _, n := range kinds.Names() {
		raw, ok := blocks[n]
		if !ok {
			continue
		}
		if n != d.Kind {
			d.strayBlocks = append(d.strayBlocks, string(n))
			continue
		}
		k, _ := kinds.Get(n)
		spec, err := k.Decode(raw)
		if err != nil {
			return err // worded as the decoder of the whole definition words it
		}
		d.Spec = spec
	}
	return nil
}
