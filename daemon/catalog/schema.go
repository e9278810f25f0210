package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled parameters schema.
type Schema struct {
	s *jsonschema.Schema
	// Types maps each top-level property to its declared JSON type, used to
	// coerce CLI --arg k=v values.
	Types map[string]string
	// AllowDash names the properties whose values may start with "-" in a
	// shell command's option position: numbers (negative values), enums
	// the author spelled out, and properties marked "x-allow-dash": true.
	AllowDash map[string]bool
	// Required names the top-level properties the schema requires.
	Required map[string]bool
	// Defaults holds the default of each top-level property that gives
	// one: a shell or http template renders it for an absent argument.
	Defaults map[string]json.RawMessage
}

// CompileSchema compiles a tool's parameters schema. It must be an object
// schema; $ref to anything outside the document is refused, so a schema can
// never make the daemon read a file or fetch a URL.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("must be a JSON Schema object")
	}
	if t, _ := obj["type"].(string); t != "object" {
		return nil, errors.New(`must have "type": "object"`)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	const url = "mem:///parameters.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %s", firstLine(err.Error()))
	}
	types := map[string]string{}
	allowDash := map[string]bool{}
	required := map[string]bool{}
	defaults := map[string]json.RawMessage{}
	if rs, ok := obj["required"].([]any); ok {
		for _, r := range rs {
			if n, ok := r.(string); ok {
				required[n] = true
			}
		}
	}
	if props, ok := obj["properties"].(map[string]any); ok {
		for name, p := range props {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			if d, ok := pm["default"]; ok && d != nil {
				b, err := json.Marshal(d)
				if err != nil {
					return nil, fmt.Errorf("default of %q: %w", name, err)
				}
				defaults[name] = b
			}
			t, _ := pm["type"].(string)
			if t != "" {
				types[name] = t
			}
			_, isEnum := pm["enum"].([]any)
			_, isConst := pm["const"]
			if flag, _ := pm["x-allow-dash"].(bool); flag || isEnum || isConst || t == "number" || t == "integer" {
				allowDash[name] = true
			}
		}
	}
	// A default is a value a call may get without giving it: it must be
	// one the property accepts.
	for name, d := range defaults {
		ptr := strings.NewReplacer("~", "~0", "/", "~1").Replace(name)
		ps, err := c.Compile(url + "#/properties/" + ptr)
		if err != nil {
			return nil, fmt.Errorf("property %q: %s", name, firstLine(err.Error()))
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(d))
		if err != nil {
			return nil, fmt.Errorf("default of %q: %w", name, err)
		}
		if err := ps.Validate(inst); err != nil {
			msg := firstLine(err.Error())
			var ve *jsonschema.ValidationError
			if errors.As(err, &ve) {
				msg = flatten(ve)
			}
			return nil, fmt.Errorf("the default of %q does not pass its own schema: %s", name, msg)
		}
	}
	return &Schema{s: s, Types: types, AllowDash: allowDash, Required: required, Defaults: defaults}, nil
}

// Validate checks arguments (a JSON object) against the schema. The error
// lists every failing location.
func (s *Schema) Validate(args json.RawMessage) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	if _, ok := inst.(map[string]any); !ok {
		return errors.New("arguments must be a JSON object")
	}
	if err := s.s.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(flatten(ve))
		}
		return err
	}
	return nil
}

// flatten turns the nested validation error into "at /x: msg; at /y: msg".
func flatten(ve *jsonschema.ValidationError) string {
	out := ve.BasicOutput()
	var msgs []string
	seen := map[string]bool{}
	for _, e := range out.Errors {
		if e.Error == nil {
			continue
		}
		loc := e.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		m := fmt.Sprintf("at %s: %s", loc, e.Error.String())
		if !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 0 {
		return firstLine(ve.Error())
	}
	sort.Strings(msgs)
	return strings.Join(msgs, "; ")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
