// Package builtin lists the built-in toolsets: the one place a toolset is
// registered.
package builtin

import "github.com/toolcage/toolcage/daemon/toolset"

// Toolsets lists the built-in toolsets, sorted by name. To add one, write
// its package under daemon/toolset and list its Toolset here.
func Toolsets() []toolset.Toolset {
	return []toolset.Toolset{}
}
