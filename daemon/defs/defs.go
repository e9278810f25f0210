// Package defs turns tool definitions into the function-calling shapes
// agent frameworks take: OpenAI's, Anthropic's and MCP's tool lists. The
// socket API's GET /v1/tools/definitions and the MCP server's tools/list
// both build on it, so a tool reads the same through either.
package defs

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
)

// Format is one function-calling shape.
type Format string

// The formats.
const (
	// OpenAI is {"type":"function","function":{name, description, parameters}}.
	OpenAI Format = "openai"
	// Anthropic is {name, description, input_schema}.
	Anthropic Format = "anthropic"
	// MCP is {name, description, inputSchema, annotations}, as in an MCP
	// tools/list result.
	MCP Format = "mcp"
)

// Formats lists every format, in the order help text names them.
func Formats() []Format { return []Format{OpenAI, Anthropic, MCP} }

// ParseFormat reads a format name; anything else is invalid_request.
func ParseFormat(s string) (Format, error) {
	f := Format(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Formats(), f) {
		return f, nil
	}
	return "", errdefs.Errorf(errdefs.InvalidRequest, "format must be openai, anthropic or mcp, not %q", s)
}

// Annotations are MCP's tool hints. Clients treat them as hints, never as
// guarantees; they are derived, so a tool's author cannot claim them.
type Annotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

// Tool is one tool as every format needs it.
type Tool struct {
	Name        string
	Description string
	// Parameters is the tool's JSON Schema (type: object).
	Parameters  json.RawMessage
	Annotations Annotations
}

// AnnotationsOf derives a tool's hints, in this one place (the MCP server
// and the exported definitions both use it), from what its kind's block
// does by itself (kind.Effects) and then from its permissions, which only
// ever widen it:
//
//   - readOnlyHint: the block changes nothing (JavaScript alone; an HTTP
//     GET or HEAD; a meta-tool that only reads) and the tool holds no
//     permission but secrets. Any other permission lets a call act:
//     fetch can POST, email sends.
//   - destructiveHint (false when read-only): the block may change or
//     remove what exists (any shell command; HTTP PUT, PATCH, DELETE), or
//     the tool holds filesystem, shell, database or scheduling, or it is
//     code (js, shell) holding network, which can send any request. Email
//     only adds (a message); an http block's method says what it does.
//   - openWorldHint: the block leaves the host (any HTTP tool), or the
//     tool holds network or email.
//
// A permission the block says it holds by its own operation (Effects.Holds:
// the built-in toolsets' kinds, e.g. read_file's filesystem) widens
// nothing: the block's effects already tell what the operation does.
//
// A block of a kind that does not tell its effects counts as the worst:
// destructive and open world; so does a permission this rule does not know.
func AnnotationsOf(def *catalog.Definition) Annotations {
	e := kind.Effects{Destructive: true, OpenWorld: true}
	if ef, ok := def.Spec.(kind.Effecter); ok {
		e = ef.Effects()
	}
	for _, p := range def.Permissions {
		if slices.Contains(e.Holds, p) {
			continue
		}
		switch p {
		case "secrets":
		case "network":
			// Code with the network can send any request (fetch,
			// curl): a DELETE as well as a GET. An http block already
			// said what its one request does.
			if !e.OpenWorld {
				e.Destructive = true
			}
			e.ReadOnly, e.OpenWorld = false, true
		case "email":
			e.ReadOnly, e.OpenWorld = false, true
		case "filesystem", "shell", "database", "scheduling":
			e.ReadOnly, e.Destructive = false, true
		default:
			e = kind.Effects{Destructive: true, OpenWorld: true}
		}
	}
	return Annotations{ReadOnlyHint: e.ReadOnly, DestructiveHint: e.Destructive && !e.ReadOnly, OpenWorldHint: e.OpenWorld}
}

// FromDefinition is the tool def describes.
func FromDefinition(def *catalog.Definition) Tool {
	params := def.Parameters
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return Tool{Name: def.Name, Description: def.Description, Parameters: params, Annotations: AnnotationsOf(def)}
}

// The wire shapes, one per format.
type (
	openAITool struct {
		Type     string         `json:"type"`
		Function openAIFunction `json:"function"`
	}
	openAIFunction struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	anthropicTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	mcpTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations Annotations     `json:"annotations"`
	}
)

// Render writes tools in format f, one JSON object each, in order.
func Render(f Format, tools []Tool) ([]json.RawMessage, error) {
	if !slices.Contains(Formats(), f) {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "unknown definitions format %q", f)
	}
	out := make([]json.RawMessage, 0, len(tools))
	for _, t := range tools {
		var v any
		switch f {
		case OpenAI:
			v = openAITool{Type: "function", Function: openAIFunction{Name: t.Name, Description: t.Description, Parameters: t.Parameters}}
		case Anthropic:
			v = anthropicTool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters}
		case MCP:
			v = mcpTool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters, Annotations: t.Annotations}
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		out = append(out, b)
	}
	return out, nil
}
