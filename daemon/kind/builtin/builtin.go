// Package builtin lists the tool kinds the daemon knows, in one place.
// Adding a kind is a package under daemon/kind and one entry here.
package builtin

import (
	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/daemon/kind/exec"
	"github.com/toolcage/toolcage/daemon/kind/fetch"
	"github.com/toolcage/toolcage/daemon/kind/fs"
	"github.com/toolcage/toolcage/daemon/kind/http"
	"github.com/toolcage/toolcage/daemon/kind/js"
	"github.com/toolcage/toolcage/daemon/kind/meta"
	"github.com/toolcage/toolcage/daemon/kind/shell"
	"github.com/toolcage/toolcage/daemon/kind/sql"
	"github.com/toolcage/toolcage/daemon/kind/state"
)

// kinds is built once and never changed.
var kinds = kind.NewRegistry(
	js.Kind{},
	shell.Kind{},
	http.Kind{},
	// Kinds that exist only for a built-in toolset (kind.ToolsetOnly).
	fs.Kind{},
	exec.Kind{},
	fetch.Kind{},
	sql.Kind{},
	state.Kind{},
	// The meta-tools' (agent_tools: {meta_tools: true}).
	meta.Kind{},
)

// Kinds returns the registry of the built-in kinds.
func Kinds() *kind.Registry { return kinds }
