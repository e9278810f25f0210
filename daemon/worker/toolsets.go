package worker

import (
	"encoding/json"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/toolcage/toolcage/daemon/catalog"
)

// Toolset is a built-in toolset a worker may turn on under toolsets:.
type Toolset struct {
	Name        string
	Description string
	// Check validates the settings written under the toolset's name, as
	// JSON ({} when none were written). A nil Check accepts only {}.
	Check func(settings json.RawMessage) error
}

// Toolsets lists the built-in toolsets, sorted by name. None are built in
// yet: filesystem, exec, fetch, state and sql come with the next issue. To
// add one, write its Toolset (in its own package if it needs one) and
// list it here; Parse then accepts its name and checks its settings.
func Toolsets() []Toolset {
	return []Toolset{}
}

// toolsetSettings decodes toolsets: toolset name → settings (a mapping,
// or nothing for none).
func (p *parser) toolsetSettings(n *yaml.Node) map[string]json.RawMessage {
	if n.Kind != yaml.MappingNode {
		p.errorAt(n, "toolsets: want a mapping of toolset name to settings, got %s", kindName(n))
		return nil
	}
	out := make(map[string]json.RawMessage, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if _, dup := out[name]; dup {
			p.errorAt(k, "toolsets.%s: given twice", name)
			continue
		}
		i := slices.IndexFunc(p.toolsets, func(t Toolset) bool { return t.Name == name })
		if i < 0 {
			p.errorAt(k, "toolsets: unknown toolset %q (%s)", name, p.knownToolsets())
			continue
		}
		settings := json.RawMessage(`{}`)
		switch {
		case isNull(v):
		case v.Kind != yaml.MappingNode:
			p.errorAt(v, "toolsets.%s: want a mapping of settings, got %s", name, kindName(v))
			continue
		default:
			var err error
			if settings, err = nodeJSON(v); err != nil {
				p.errorAt(v, "toolsets.%s: %v", name, err)
				continue
			}
		}
		ts := p.toolsets[i]
		switch {
		case ts.Check != nil:
			if err := ts.Check(settings); err != nil {
				p.errorAt(v, "toolsets.%s: %v", name, err)
				continue
			}
		case string(settings) != "{}":
			p.errorAt(v, "toolsets.%s: takes no settings", name)
			continue
		}
		out[name] = settings
	}
	return out
}

func (p *parser) knownToolsets() string {
	if len(p.toolsets) == 0 {
		return "no toolsets are built in yet"
	}
	names := make([]string, len(p.toolsets))
	for i, t := range p.toolsets {
		names[i] = t.Name
	}
	return "known: " + strings.Join(names, ", ")
}

// nodeJSON converts a YAML node to JSON the way the tool format converts
// its files.
func nodeJSON(n *yaml.Node) (json.RawMessage, error) {
	b, err := yaml.Marshal(n)
	if err != nil {
		return nil, err
	}
	return catalog.YAMLToJSON(b)
}
