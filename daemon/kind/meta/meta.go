// Package meta is the meta kind: the meta-tools an agent manages its own
// tools with, offered by a worker whose file says agent_tools:
// {meta_tools: true}. list_custom_tools, search_tools and get_tool read;
// with agent_tools.create also on, create_tool, update_tool,
// delete_custom_tool and toggle_custom_tool change the catalog. Their
// calls run in the daemon (kind.Local), on the kind.AgentCatalog the
// dispatcher gives each call: bound to the calling agent and its worker,
// it sees only that worker's tools and holds every change to the
// catalog's rules for what agents make. This package is what the tools
// take and answer; the catalog's rules are the dispatcher's.
package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/toolspec"
)

// Name is the kind's name.
const Name toolspec.Kind = "meta"

// Category is the category the meta-tools are listed under.
const Category = "Meta"

// Tool is one meta-tool.
type Tool struct {
	Name, Description string
	// Parameters is the tool's JSON Schema.
	Parameters string
	// Changes says the tool changes the catalog: a worker offers it only
	// with agent_tools.create.
	Changes bool
	Effects kind.Effects
	run     func(ctx context.Context, c *kind.LocalCall, cat kind.AgentCatalog, args map[string]any) (any, error)
}

// tools are the meta-tools, in the order they are listed.
var tools = []*Tool{
	{Name: "list_custom_tools", Effects: kind.Effects{ReadOnly: true}, run: list,
		Description: "List the tools you made (this worker's agent-made tools), with their status; optionally only one category or status.",
		Parameters:  `{"type":"object","properties":{"category":{"type":"string"},"status":{"type":"string","enum":["active","disabled","pending_approval","rejected"]}},"additionalProperties":false}`},
	{Name: "search_tools", Effects: kind.Effects{ReadOnly: true}, run: search,
		Description: "Search the tools you may use by name, description and category: every word of query must appear in one of them.",
		Parameters:  `{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":200},"category":{"type":"string"}},"required":["query"],"additionalProperties":false}`},
	{Name: "get_tool", Effects: kind.Effects{ReadOnly: true}, run: get,
		Description: "Show one of your tools: its whole definition (code, command or request), status and version.",
		Parameters:  `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`},
	{Name: "create_tool", Changes: true, run: create,
		Description: "Create a tool. JavaScript by default: give code (the body of an async function of args, returning the result). A tool that is not plain JavaScript with no permissions and no secrets waits for a person's approval before it runs.",
		Parameters: `{"type":"object","properties":{"name":{"type":"string","pattern":"^[a-z][a-z0-9_]*$","maxLength":64},"description":{"type":"string","minLength":1},` +
			`"kind":{"type":"string","enum":["js","shell","http"]},"parameters":{"type":["object","string"],"description":"JSON Schema of the arguments (type object), or that schema as a JSON string"},` +
			`"code":{"type":"string","description":"js: the tool's code"},"allowed_domains":{"type":"array","items":{"type":"string"},"description":"js: the hosts fetch may reach (with the network permission)"},` +
			`"shell":{"type":"object","description":"shell: {command, env}"},"http":{"type":"object","description":"http: {method, url, params, headers, body, allowed_domains}"},` +
			`"category":{"type":"string"},"permissions":{"type":"array","items":{"type":"string"}},"secrets":{"type":"array","items":{"type":"string"}},"required_api_keys":{"type":"array"},` +
			`"approval":{"type":"string","enum":["preApproved","ask","blocked"]},"limits":{"type":"object"}},"required":["name","description"],"additionalProperties":false}`},
	{Name: "update_tool", Changes: true, run: update,
		Description: "Change a tool you made: only the fields given change. A change to anything but plain JavaScript waits for a person's approval again.",
		Parameters: `{"type":"object","properties":{"name":{"type":"string"},"description":{"type":"string","minLength":1},"parameters":{"type":["object","string"]},` +
			`"code":{"type":"string"},"allowed_domains":{"type":"array","items":{"type":"string"}},"shell":{"type":"object"},"http":{"type":"object"},` +
			`"category":{"type":"string"},"permissions":{"type":"array","items":{"type":"string"}},"secrets":{"type":"array","items":{"type":"string"}},` +
			`"approval":{"type":"string","enum":["preApproved","ask","blocked"]},"limits":{"type":"object"}},"required":["name"],"additionalProperties":false}`},
	{Name: "delete_custom_tool", Changes: true, Effects: kind.Effects{Destructive: true}, run: remove,
		Description: "Delete a tool you made; it cannot be undone, so confirm must be true. A person's tools cannot be deleted this way.",
		Parameters:  `{"type":"object","properties":{"name":{"type":"string"},"confirm":{"type":"boolean"}},"required":["name"],"additionalProperties":false}`},
	{Name: "toggle_custom_tool", Changes: true, run: toggle,
		Description: "Enable or disable a tool you made.",
		Parameters:  `{"type":"object","properties":{"name":{"type":"string"},"enabled":{"type":"boolean"}},"required":["name","enabled"],"additionalProperties":false}`},
}

// Tools lists the meta-tools, in order.
func Tools() []Tool {
	out := make([]Tool, len(tools))
	for i, t := range tools {
		out[i] = *t
	}
	return out
}

// Names lists the meta-tools' names, in order.
func Names() []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

// byName is the meta-tool called name, or nil.
func byName(name string) *Tool {
	for _, t := range tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Kind is the meta kind.
type Kind struct{}

// Name is "meta".
func (Kind) Name() toolspec.Kind { return Name }

// Toolset is "meta": the kind exists only for the meta-tools, which the
// dispatcher writes.
func (Kind) Toolset() string { return string(Name) }

// TurnedOnBy: a worker file turns the meta-tools on under agent_tools.
func (Kind) TurnedOnBy() string { return "agent_tools: {meta_tools: true}" }

// Decode reads a meta: block.
func (Kind) Decode(raw json.RawMessage) (kind.Spec, error) { return kind.DecodeSpec[Spec](raw) }

// Required is the problem of a meta tool with no block.
func (Kind) Required() kind.Problem { return kind.Problem{Field: "meta.op", Message: "is required"} }

// ResetAfterCall is false: no executor runs a meta call.
func (Kind) ResetAfterCall() bool { return false }

// Spec is the block of one meta-tool: which it is.
type Spec struct {
	// Op is the meta-tool's name.
	Op string `json:"op"`
}

// Normalize does nothing.
func (s *Spec) Normalize() {}

// Validate checks the operation.
func (s *Spec) Validate(kind.Tool) []kind.Problem {
	if byName(s.Op) == nil {
		return []kind.Problem{{Field: "meta.op", Message: fmt.Sprintf("unknown meta-tool %q (want %s)", s.Op, strings.Join(Names(), ", "))}}
	}
	return nil
}

// Check has nothing more to check.
func (s *Spec) Check(kind.Tool) error { return nil }

// Effects are the meta-tool's; an unknown one is taken at its worst. The
// catalog is in the daemon: no meta-tool reaches the world outside.
func (s *Spec) Effects() kind.Effects {
	if t := byName(s.Op); t != nil {
		return t.Effects
	}
	return kind.Effects{Destructive: true}
}

// Compile finds the meta-tool.
func (s *Spec) Compile(kind.Tool) (kind.Compiled, error) {
	t := byName(s.Op)
	if t == nil {
		return nil, &kind.FieldError{Field: "meta.op", Err: fmt.Errorf("unknown meta-tool %q", s.Op)}
	}
	return &Compiled{tool: t}, nil
}

// Compiled is a meta-tool ready for calls.
type Compiled struct{ tool *Tool }

// Secrets: a meta-tool uses none.
func (c *Compiled) Secrets(kind.Tool) ([]string, bool) { return nil, false }

// Build leaves the request empty: Run does the work.
func (c *Compiled) Build(context.Context, *kind.Call, *kind.Request) (*kind.Built, error) {
	return &kind.Built{}, nil
}

// Run runs the meta-tool on the call's catalog.
func (c *Compiled) Run(ctx context.Context, call *kind.LocalCall) (*kind.LocalResult, error) {
	if call.Catalog == nil {
		return nil, errdefs.Errorf(errdefs.Forbidden, "meta-tool %s manages a worker's tools, and this call came through no worker that offers it", c.tool.Name)
	}
	args, err := call.DecodeArgs()
	if err != nil {
		return nil, err
	}
	if args == nil {
		args = map[string]any{}
	}
	v, err := c.tool.run(ctx, call, call.Catalog, args)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &kind.LocalResult{Value: b}, nil
}

// view is what the meta-tools tell of a tool.
type view struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Kind        string `json:"kind"`
	Category    string `json:"category,omitempty"`
	Status      string `json:"status"`
	CreatedBy   string `json:"created_by"`
	Version     int    `json:"version"`
	UsageCount  int64  `json:"usage_count"`
}

func viewOf(t kind.AgentTool) view {
	return view{Name: t.Name, Description: t.Description, Kind: string(t.Kind), Category: t.Category,
		Status: t.Status, CreatedBy: t.CreatedBy, Version: t.Version, UsageCount: t.UsageCount}
}

// The catalog's statuses the meta-tools count (daemon/catalog's).
const (
	statusActive  = "active"
	statusPending = "pending_approval"
)

func str(args map[string]any, key string) string {
	s, _ := args[key].(string)
	return s
}

func list(ctx context.Context, _ *kind.LocalCall, cat kind.AgentCatalog, args map[string]any) (any, error) {
	made, err := cat.Made(ctx)
	if err != nil {
		return nil, err
	}
	out := struct {
		Tools           []view `json:"tools"`
		Total           int    `json:"total"`
		Active          int    `json:"active"`
		PendingApproval int    `json:"pending_approval"`
	}{Tools: []view{}, Total: len(made)}
	category, status := str(args, "category"), str(args, "status")
	for _, t := range made {
		switch t.Status {
		case statusActive:
			out.Active++
		case statusPending:
			out.PendingApproval++
		}
		if (category != "" && !strings.EqualFold(category, t.Category)) || (status != "" && status != t.Status) {
			continue
		}
		out.Tools = append(out.Tools, viewOf(t))
	}
	return out, nil
}

func search(ctx context.Context, _ *kind.LocalCall, cat kind.AgentCatalog, args map[string]any) (any, error) {
	visible, err := cat.Visible(ctx)
	if err != nil {
		return nil, err
	}
	words := strings.Fields(strings.ToLower(str(args, "query")))
	category := str(args, "category")
	out := []view{}
	for _, t := range visible {
		if category != "" && !strings.EqualFold(category, t.Category) {
			continue
		}
		text := strings.ToLower(t.Name + " " + strings.ReplaceAll(t.Name, "_", " ") + " " + t.Description + " " + t.Category)
		if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(text, w) }) {
			out = append(out, viewOf(t))
		}
	}
	return map[string]any{"tools": out}, nil
}

func get(ctx context.Context, _ *kind.LocalCall, cat kind.AgentCatalog, args map[string]any) (any, error) {
	t, def, err := cat.Tool(ctx, str(args, "name"))
	if err != nil {
		return nil, err
	}
	return struct {
		Definition json.RawMessage `json:"definition"`
		Status     string          `json:"status"`
		CreatedBy  string          `json:"created_by"`
		Version    int             `json:"version"`
	}{def, t.Status, t.CreatedBy, t.Version}, nil
}

// defFields are the arguments create_tool and update_tool copy into a
// definition as they are; code and allowed_domains go into the js block.
var defFields = []string{"description", "kind", "category", "permissions", "secrets", "required_api_keys", "approval", "limits", "shell", "http"}

// applyFields writes args onto the definition m (its JSON object).
func applyFields(m map[string]any, args map[string]any) error {
	for _, f := range defFields {
		if v, ok := args[f]; ok {
			m[f] = v
		}
	}
	if p, ok := args["parameters"]; ok {
		if s, isText := p.(string); isText {
			var schema any
			if err := json.Unmarshal([]byte(s), &schema); err != nil {
				return errdefs.Errorf(errdefs.InvalidArguments, "parameters is not a JSON Schema: %v", err)
			}
			p = schema
		}
		m["parameters"] = p
	}
	_, code := args["code"]
	_, domains := args["allowed_domains"]
	if code || domains {
		js, _ := m["js"].(map[string]any)
		if js == nil {
			js = map[string]any{}
		}
		if code {
			js["code"] = args["code"]
		}
		if domains {
			js["allowed_domains"] = args["allowed_domains"]
		}
		m["js"] = js
	}
	return nil
}

// changed is what create_tool and update_tool answer.
func changed(t *kind.AgentTool, verb string) map[string]any {
	out := map[string]any{"name": t.Name, "status": t.Status, "version": t.Version}
	switch t.Status {
	case statusPending:
		out["message"] = fmt.Sprintf("tool %s was %s and waits for a person's approval (toolcage tools approve %s); it cannot run until then", t.Name, verb, t.Name)
	case statusActive:
		out["message"] = fmt.Sprintf("tool %s was %s and can be called", t.Name, verb)
	}
	return out
}

func create(ctx context.Context, _ *kind.LocalCall, cat kind.AgentCatalog, args map[string]any) (any, error) {
	m := map[string]any{"name": args["name"], "kind": string(toolspec.JS)}
	if err := applyFields(m, args); err != nil {
		return nil, err
	}
	def, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	t, err := cat.Create(ctx, def)
	if err != nil {
		return nil, err
	}
	return changed(t, "created"), nil
}

// agentsTool is the worker's tool called name, refused with what a person
// does instead ("changes it there") when a file of the worker defines it.
func agentsTool(ctx context.Context, c *kind.LocalCall, cat kind.AgentCatalog, name, instead string) (json.RawMessage, error) {
	t, def, err := cat.Tool(ctx, name)
	if err != nil {
		return nil, err
	}
	if t.InFile {
		return nil, errdefs.Errorf(errdefs.Forbidden, "tool %q is defined in a file of worker %q; %s", name, c.Worker, instead)
	}
	return def, nil
}

func update(ctx context.Context, c *kind.LocalCall, cat kind.AgentCatalog, args map[string]any) (any, error) {
	name := str(args, "name")
	base, err := agentsTool(ctx, c, cat, name, "a person changes it there")
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(base, &m); err != nil {
		return nil, err
	}
	if err := applyFields(m, args); err != nil {
		return nil, err
	}
	def, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	t, err := cat.Update(ctx, name, def)
	if err != nil {
		return nil, err
	}
	return changed(t, "changed"), nil
}

func remove(ctx context.Context, c *kind.LocalCall, cat kind.AgentCatalog, args map[string]any) (any, error) {
	name := str(args, "name")
	if _, err := agentsTool(ctx, c, cat, name, "a person removes it there"); err != nil {
		return nil, err
	}
	if confirm, _ := args["confirm"].(bool); !confirm {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "deleting tool %q cannot be undone: call delete_custom_tool again with confirm: true", name)
	}
	if err := cat.Delete(ctx, name); err != nil {
		return nil, err
	}
	return map[string]any{"name": name, "deleted": true}, nil
}

func toggle(ctx context.Context, c *kind.LocalCall, cat kind.AgentCatalog, args map[string]any) (any, error) {
	name := str(args, "name")
	if _, err := agentsTool(ctx, c, cat, name, "it is always on"); err != nil {
		return nil, err
	}
	on, _ := args["enabled"].(bool)
	t, err := cat.SetEnabled(ctx, name, on)
	if err != nil {
		return nil, err
	}
	return map[string]any{"name": name, "status": t.Status}, nil
}

// Interface guards.
var (
	_ kind.TurnedOnBy = Kind{}
	_ kind.Spec       = (*Spec)(nil)
	_ kind.Effecter   = (*Spec)(nil)
	_ kind.Local      = (*Compiled)(nil)
)
