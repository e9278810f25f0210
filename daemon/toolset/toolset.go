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
