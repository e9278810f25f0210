package worker

import (
	"encoding/json"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/toolset"
	"github.com/toolcage/toolcage/daemon/toolset/builtin"
)

// Toolset is a built-in toolset a worker may turn on under toolsets:.
type Toolset = toolset.Toolset

// Toolsets lists the built-in toolsets (daemon/toolset/builtin), sorted
// by name: Parse accepts their names, checks their settings and adds
// their tools to the worker's.
func Toolsets() []Toolset {
	return builtin.Toolsets()
}

// toolsetTools adds the tools of each toolset w turns on to w.LocalTools,
// toolsets in name order, each tool's File its toolset's Source. They are
// the worker's own, like its tool files' tools: a name given twice is an
// error, and the worker's approval rules apply to them.
func (p *parser) toolsetTools(w *Worker, root *yaml.Node) {
	at := valueOf(root, "toolsets")
	names := make([]string, 0, len(w.Toolsets))
	for name := range w.Toolsets {
		names = append(names, name)
	}
	slices.Sort(names)
	info := toolset.Worker{Name: w.Name}
	for _, name := range names {
		i := slices.IndexFunc(p.toolsets, func(t Toolset) bool { return t.Name == name })
		ts := p.toolsets[i]
		if ts.Tools == nil {
			continue
		}
		defs, err := ts.Tools(info, w.Toolsets[name])
		if err != nil {
			p.errorAt(at, "toolsets.%s: %v", name, err)
			continue
		}
		for _, def := range defs {
			switch prev := w.LocalTool(def.Name); {
			case prev != nil:
				p.errorAt(at, "toolsets.%s: tool %q is also defined by %s; a worker's tool names must be unique", name, def.Name, prev.File)
				continue
			case slices.Contains(w.Tools, def.Name):
				p.errorAt(at, "toolsets.%s: tool %q is also named under tools; a worker's tool names must be unique", name, def.Name)
				continue
			}
			w.LocalTools = append(w.LocalTools, &LocalTool{File: toolset.Source(name), Def: def, WrittenApproval: def.WrittenApproval()})
		}
	}
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
