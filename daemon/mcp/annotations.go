package mcp

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
)

// Annotations are the MCP hints a client shows for a tool, derived in this
// one place from what its kind's block does by itself (kind.Effects) and
// then from its permissions, which only ever widen it:
//
//   - readOnlyHint: the block changes nothing (JavaScript alone; an HTTP
//     GET or HEAD) and the tool holds no permission but secrets.
//     Any other permission lets a call act: fetch can POST, email sends.
//   - destructiveHint (meaningful when not read-only): the block may change
//     or remove what exists (any shell command; HTTP PUT, PATCH, DELETE),
//     or the tool holds filesystem, shell, database or scheduling.
//     Network and email reach out but only add (a request, a message).
//   - openWorldHint: the block leaves the host (any HTTP tool), or the tool
//     holds network or email.
//   - idempotentHint stays false: nothing here can promise it.
//
// A block of a kind that does not tell its effects counts as the worst:
// destructive and open world.
func Annotations(def *catalog.Definition) *sdk.ToolAnnotations {
	e := kind.Effects{Destructive: true, OpenWorld: true}
	if ef, ok := def.Spec.(kind.Effecter); ok {
		e = ef.Effects()
	}
	for _, p := range def.Permissions {
		switch p {
		case "secrets":
		case "network", "email":
			e.ReadOnly, e.OpenWorld = false, true
		case "filesystem", "shell", "database", "scheduling":
			e.ReadOnly, e.Destructive = false, true
		default: // a permission this rule does not know: assume the worst
			e = kind.Effects{Destructive: true, OpenWorld: true}
		}
	}
	destructive := e.Destructive && !e.ReadOnly
	openWorld := e.OpenWorld
	return &sdk.ToolAnnotations{ReadOnlyHint: e.ReadOnly, DestructiveHint: &destructive, OpenWorldHint: &openWorld}
}
