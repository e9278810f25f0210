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
	"github.com/toolcage/toolcage/toolspec"
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

// effectful are the permissions that let a call change something outside
// its sandbox. "secrets" only lets it read its own credentials.
var effectful = []string{"database", "email", "filesystem", "network", "scheduling", "shell"}

// overwriting are the permissions under which a change may replace or
// remove what was there; email and scheduling only add.
var overwriting = []string{"database", "filesystem", "shell"}

// AnnotationsOf derives the hints from the tool's kind, permissions and,
// where the kind knows more (an http tool's method), its block:
//   - openWorldHint: it may reach hosts outside (network or email, or an
//     http tool, which always does);
//   - readOnlyHint: it can change nothing: no permission but secrets, and
//     an http tool only when its method reads (GET, HEAD);
//   - destructiveHint: it may overwrite or delete: a filesystem, shell or
//     database permission, an http PUT/PATCH/DELETE, or network from code
//     (fetch and curl can send anything); false when it only reads.
func AnnotationsOf(def *catalog.Definition) Annotations {
	perms := def.Permissions
	has := func(list []string) bool {
		return slices.ContainsFunc(perms, func(p string) bool { return slices.Contains(list, p) })
	}
	eff, _ := def.Spec.(kind.Effects)
	isHTTP := def.Kind == toolspec.HTTP
	a := Annotations{OpenWorldHint: isHTTP || slices.Contains(perms, "network") || slices.Contains(perms, "email")}
	switch {
	case isHTTP:
		others := slices.DeleteFunc(slices.Clone(perms), func(p string) bool { return p == "network" })
		a.ReadOnlyHint = eff != nil && eff.ReadOnly() && !slices.ContainsFunc(others, func(p string) bool { return slices.Contains(effectful, p) })
		a.DestructiveHint = !a.ReadOnlyHint && (eff == nil || eff.Destructive() || has(overwriting))
	case eff != nil:
		// A tool that runs in the daemon says what it does itself.
		a.ReadOnlyHint = eff.ReadOnly() && !has(effectful)
		a.DestructiveHint = !a.ReadOnlyHint && (eff.Destructive() || has(overwriting) || slices.Contains(perms, "network"))
	default:
		a.ReadOnlyHint = !has(effectful)
		a.DestructiveHint = !a.ReadOnlyHint && (has(overwriting) || slices.Contains(perms, "network"))
	}
	return a
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
