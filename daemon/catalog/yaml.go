package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	yaml "go.yaml.in/yaml/v3"
)

// maxYAMLDepth bounds nesting, so a hostile file cannot exhaust the stack.
const maxYAMLDepth = 64

// YAMLToJSON converts one YAML 1.2 document (JSON included) to JSON. YAML
// 1.2 keeps yes, no, on, off and y as the strings they look like; a key
// given twice, anchors and aliases, non-string keys and a second document
// are errors rather than silent surprises.
func YAMLToJSON(data []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, errors.New("empty document")
		}
		return nil, err
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
	case err != nil:
		return nil, errors.New("trailing data after the document")
	case !emptyDocument(&extra):
		return nil, errors.New("more than one document; put one tool in each file")
	}
	v, err := yamlValue(&doc, 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// emptyDocument reports whether a document holds nothing (a trailing "---").
func emptyDocument(n *yaml.Node) bool {
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode || c.ShortTag() != "!!null" || c.Value != "" {
			return false
		}
	}
	return true
}

func yamlValue(n *yaml.Node, depth int) (any, error) {
	if depth > maxYAMLDepth {
		return nil, fmt.Errorf("line %d: nested deeper than %d levels", n.Line, maxYAMLDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return yamlValue(n.Content[0], depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || (k.ShortTag() != "!!str" && k.ShortTag() != "!!int") {
				return nil, fmt.Errorf("line %d: mapping keys must be strings", k.Line)
			}
			if k.Value == "<<" {
				return nil, fmt.Errorf("line %d: merge keys are not supported", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q given twice", k.Line, k.Value)
			}
			v, err := yamlValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.AliasNode:
		return nil, fmt.Errorf("line %d: anchors and aliases are not supported", n.Line)
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool", "!!int", "!!float":
			var v any
			if err := n.Decode(&v); err != nil {
				return nil, fmt.Errorf("line %d: %w", n.Line, err)
			}
			return v, nil
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}
