package kind

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy/template"
)

// DecodeStrict decodes a block into v: unknown fields are errors, and so
// is anything after the object.
func DecodeStrict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the object")
	}
	return nil
}

// DecodeSpec decodes a block into a new S, as DecodeStrict does: the
// Decode of every kind whose block is a struct.
func DecodeSpec[S any, P interface {
	*S
	Spec
}](raw json.RawMessage) (Spec, error) {
	var s P = new(S)
	if err := DecodeStrict(raw, s); err != nil {
		return nil, err
	}
	return s, nil
}

// RenderError maps a template error to its code: a missing argument is
// the caller's mistake, a refused value (option injection, NUL) a policy
// matter.
func RenderError(err error) error {
	var miss *template.MissingArgumentError
	if errors.As(err, &miss) {
		return &errdefs.Error{Code: errdefs.InvalidArguments, Err: err}
	}
	return &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
}

// DecodeArgs decodes the call's validated arguments, keeping numbers
// exact, with the schema's default filled in for each argument that is
// absent or null.
func (c *Call) DecodeArgs() (map[string]any, error) {
	var m map[string]any
	if err := decodeNumbers(c.Args, &m); err != nil {
		return nil, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err}
	}
	for name, raw := range c.Defaults {
		if v, ok := m[name]; ok && v != nil {
			continue
		}
		var v any
		if err := decodeNumbers(raw, &v); err != nil {
			return nil, &errdefs.Error{Code: errdefs.InvalidDefinition, Err: fmt.Errorf("default of %q: %w", name, err)}
		}
		if m == nil {
			m = map[string]any{}
		}
		m[name] = v
	}
	return m, nil
}

func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}
