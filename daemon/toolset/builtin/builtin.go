// Package builtin lists the built-in toolsets: the one place a toolset is
// registered.
package builtin

import (
	"github.com/toolcage/toolcage/daemon/toolset"
	"github.com/toolcage/toolcage/daemon/toolset/exec"
	"github.com/toolcage/toolcage/daemon/toolset/fetch"
	"github.com/toolcage/toolcage/daemon/toolset/filesystem"
	"github.com/toolcage/toolcage/daemon/toolset/sql"
	"github.com/toolcage/toolcage/daemon/toolset/state"
)

// Toolsets lists the built-in toolsets, sorted by name. To add one, write
// its package under daemon/toolset and list its Toolset here.
func Toolsets() []toolset.Toolset {
	return []toolset.Toolset{
		exec.Toolset,
		fetch.Toolset(),
		filesystem.Toolset,
		sql.Toolset(),
		state.Toolset(),
	}
}
