package mcp

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/defs"
)

// Annotations are the MCP hints a client shows for a tool: defs.AnnotationsOf,
// the one rule the exported definitions follow too. idempotentHint stays
// unset: nothing here can promise it.
func Annotations(def *catalog.Definition) *sdk.ToolAnnotations {
	a := defs.AnnotationsOf(def)
	destructive, openWorld := a.DestructiveHint, a.OpenWorldHint
	return &sdk.ToolAnnotations{ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: &destructive, OpenWorldHint: &openWorld}
}
