// Package toolset is the shape of a built-in toolset: a named set of tools
// (filesystem, exec, fetch, state, sql, ...) a worker file turns on under
// toolsets:, with the settings written there. A toolset only writes tool
// definitions; each of its tools is then resolved, checked, approved,
// rate-limited, run and recorded like any other tool, by the tool kind its
// definition names (daemon/kind). Each toolset is a package of its own
// under daemon/toolset; toolset/builtin lists them in one place.
package toolset

import (
	"encoding/json"
	"fmt"

	"github.com/toolcage/toolcage/daemon/catalog"
)

// Worker is what a toolset is told of the worker that turns it on.
type Worker struct {
	Name string
	// Workspace is the absolute path of the worker's workspace, "" when
	// it names none; ReadOnly is whether its tools may only read it.
	Workspace string
	ReadOnly  bool
}

// Toolset is one built-in toolset.
type Toolset struct {
	Name        string
	Description string
	// Check validates the settings written under the toolset's name, as
	// JSON ({} when none were written). A nil Check accepts only {}.
	Check func(settings json.RawMessage) error
	// Tools writes the definitions of the toolset's tools for w, given
	// settings that passed Check, each as catalog.ParseJSON returns it
	// (defaults filled in). Each names a registered tool kind and
	// a name no other toolset uses; the worker file's approval rules
	// apply to them as to the tools of its tool files (a definition
	// that writes an approval speaks for its tool, as a file does).
	Tools func(w Worker, settings json.RawMessage) ([]*catalog.Definition, error)
}

// Source is how a worker lists the origin of a toolset's tool ("toolset:NAME").
func Source(name string) string { return "toolset:" + name }

// New is a toolset whose settings decode into S. decode both checks the
// settings (Check) and reads them for tools (Tools), so what Check passes
// is what Tools is given.
func New[S any](name, description string, decode func(settings json.RawMessage) (S, error), tools func(w Worker, s S) ([]*catalog.Definition, error)) Toolset {
	return Toolset{
		Name:        name,
		Description: description,
		Check: func(raw json.RawMessage) error {
			_, err := decode(raw)
			return err
		},
		Tools: func(w Worker, raw json.RawMessage) ([]*catalog.Definition, error) {
			s, err := decode(raw)
			if err != nil {
				return nil, err
			}
			return tools(w, s)
		},
	}
}

// Define reads one tool definition a toolset writes, given as the JSON
// object a tool file would hold, with catalog.ParseToolsetJSON. An error
// names the tool: it is the toolset's own bug, not the worker file's.
func Define(def map[string]any) (*catalog.Definition, error) {
	b, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	d, err := catalog.ParseToolsetJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", def["name"], err)
	}
	return d, nil
}
