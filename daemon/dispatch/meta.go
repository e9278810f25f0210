package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/executors"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/toolspec"
)

// Meta-tools: the tools an agent manages its own tools with, offered by a
// worker whose file says agent_tools: {meta_tools: true}. list_custom_tools,
// search_tools and get_tool read; with agent_tools.create also on,
// create_tool, update_tool, delete_custom_tool and toggle_custom_tool
// change the catalog. They run here, in the daemon (they change the
// catalog, which no executor reaches), as the calling agent: every change
// goes through the catalog's rules for what agents make (pending unless
// harmless JavaScript, only the secrets the worker grants, never a
// person's tool, a delete only when confirmed) and a tool made this way
// joins the worker's tool set. A meta-tool call is audited and rate
// limited like any call of the worker; it is not parked for approval
// (what it makes waits for a person where the rules say so), and the
// worker's approval.tools can block one by name. Nested calls
// (utils.callTool) cannot reach them.
//
// This is a small daemon-side run path of its own: when tools that run in
// the daemon get a general one (kind.Local), the meta-tools fold into it.

// MetaKind is the kind meta-tools carry in listings: they run in the
// daemon, never on an executor.
const MetaKind toolspec.Kind = "meta"

// metaCategory is the category meta-tools are listed under.
const metaCategory = "Meta"

// metaTool is one meta-tool.
type metaTool struct {
	name, description string
	// params is the tool's JSON Schema.
	params string
	// changes says the tool changes the catalog: it needs
	// agent_tools.create.
	changes               bool
	readOnly, destructive bool
}

var metaTools = []*metaTool{
	{name: "list_custom_tools", readOnly: true,
		description: "List the tools you made (this worker's agent-made tools), with their status; optionally only one category or status.",
		params:      `{"type":"object","properties":{"category":{"type":"string"},"status":{"type":"string","enum":["active","disabled","pending_approval","rejected"]}},"additionalProperties":false}`},
	{name: "search_tools", readOnly: true,
		description: "Search the tools you may use by name, description and category: every word of query must appear in one of them.",
		params:      `{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":200},"category":{"type":"string"}},"required":["query"],"additionalProperties":false}`},
	{name: "get_tool", readOnly: true,
		description: "Show one of your tools: its whole definition (code, command or request), status and version.",
		params:      `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`},
	{name: "create_tool", changes: true,
		description: "Create a tool. JavaScript by default: give code (the body of an async function of args, returning the result). A tool that is not plain JavaScript with no permissions and no secrets waits for a person's approval before it runs.",
		params: `{"type":"object","properties":{"name":{"type":"string","pattern":"^[a-z][a-z0-9_]*$","maxLength":64},"description":{"type":"string","minLength":1},` +
			`"kind":{"type":"string","enum":["js","shell","http"]},"parameters":{"type":["object","string"],"description":"JSON Schema of the arguments (type object), or that schema as a JSON string"},` +
			`"code":{"type":"string","description":"js: the tool's code"},"allowed_domains":{"type":"array","items":{"type":"string"},"description":"js: the hosts fetch may reach (with the network permission)"},` +
			`"shell":{"type":"object","description":"shell: {command, env}"},"http":{"type":"object","description":"http: {method, url, params, headers, body, allowed_domains}"},` +
			`"category":{"type":"string"},"permissions":{"type":"array","items":{"type":"string"}},"secrets":{"type":"array","items":{"type":"string"}},"required_api_keys":{"type":"array"},` +
			`"approval":{"type":"string","enum":["preApproved","ask","blocked"]},"limits":{"type":"object"}},"required":["name","description"],"additionalProperties":false}`},
	{name: "update_tool", changes: true,
		description: "Change a tool you made: only the fields given change. A change to anything but plain JavaScript waits for a person's approval again.",
		params: `{"type":"object","properties":{"name":{"type":"string"},"description":{"type":"string","minLength":1},"parameters":{"type":["object","string"]},` +
			`"code":{"type":"string"},"allowed_domains":{"type":"array","items":{"type":"string"}},"shell":{"type":"object"},"http":{"type":"object"},` +
			`"category":{"type":"string"},"permissions":{"type":"array","items":{"type":"string"}},"secrets":{"type":"array","items":{"type":"string"}},` +
			`"approval":{"type":"string","enum":["preApproved","ask","blocked"]},"limits":{"type":"object"}},"required":["name"],"additionalProperties":false}`},
	{name: "delete_custom_tool", changes: true, destructive: true,
		description: "Delete a tool you made; it cannot be undone, so confirm must be true. A person's tools cannot be deleted this way.",
		params:      `{"type":"object","properties":{"name":{"type":"string"},"confirm":{"type":"boolean"}},"required":["name"],"additionalProperties":false}`},
	{name: "toggle_custom_tool", changes: true,
		description: "Enable or disable a tool you made.",
		params:      `{"type":"object","properties":{"name":{"type":"string"},"enabled":{"type":"boolean"}},"required":["name","enabled"],"additionalProperties":false}`},
}

// metaSchemas are the meta-tools' compiled schemas, by name.
var metaSchemas = sync.OnceValue(func() map[string]*catalog.Schema {
	out := make(map[string]*catalog.Schema, len(metaTools))
	for _, m := range metaTools {
		s, err := catalog.CompileSchema(json.RawMessage(m.params))
		if err != nil {
			panic(fmt.Sprintf("meta-tool %s: %v", m.name, err))
		}
		out[m.name] = s
	}
	return out
})

// metaSpec is a meta-tool's block: it tells what the tool does (for the
// definitions' hints) and cannot be compiled for an executor.
type metaSpec struct{ m *metaTool }

func (metaSpec) Normalize()                        {}
func (metaSpec) Validate(kind.Tool) []kind.Problem { return nil }
func (metaSpec) Check(kind.Tool) error             { return nil }
func (s metaSpec) Compile(kind.Tool) (kind.Compiled, error) {
	return nil, errdefs.Errorf(errdefs.InvalidDefinition, "meta-tool %s runs in the daemon", s.m.name)
}
func (s metaSpec) Effects() kind.Effects {
	return kind.Effects{ReadOnly: s.m.readOnly, Destructive: s.m.destructive}
}

// definition is the meta-tool as its worker's agent sees it listed.
func (m *metaTool) definition() *catalog.Definition {
	return &catalog.Definition{Name: m.name, Description: m.description, Kind: MetaKind, Category: metaCategory,
		Parameters: json.RawMessage(m.params), Approval: catalog.ApprovalPreApproved, Isolation: catalog.IsolationProcess, Spec: metaSpec{m}}
}

// metaToolsFor lists the meta-tools w offers, nil for none.
func metaToolsFor(w *worker.Worker) []*metaTool {
	if w == nil || !w.AgentTools.MetaTools {
		return nil
	}
	var out []*metaTool
	for _, m := range metaTools {
		if !m.changes || w.AgentTools.Create {
			out = append(out, m)
		}
	}
	return out
}

// metaFor is the meta-tool called name that w offers, or nil.
func metaFor(w *worker.Worker, name string) *metaTool {
	for _, m := range metaToolsFor(w) {
		if m.name == name {
			return m
		}
	}
	return nil
}

// MetaToolNames lists the meta-tools w offers, in order.
func (d *Dispatcher) MetaToolNames(w *worker.Worker) []string {
	var out []string
	for _, m := range metaToolsFor(w) {
		out = append(out, m.name)
	}
	return out
}

// IsMeta reports whether def is a meta-tool's.
func IsMeta(def *catalog.Definition) bool { return def.Kind == MetaKind }

// callMeta runs a meta-tool for the caller of r through w.
func (d *Dispatcher) callMeta(ctx context.Context, r CallRequest, w *worker.Worker, m *metaTool) (*Outcome, error) {
	c := &call{id: newCallID(), tool: m.name, kind: string(MetaKind), version: 1, caller: r.Caller, args: r.Arguments,
		started: d.now(), noWait: r.NoApprovalWait, worker: w}
	if err := d.profileAllows(m.definition(), c.caller, workerProfile(w)); err != nil {
		return nil, d.refuse(ctx, c, nil, err)
	}
	if policy.Approval(w.ToolApproval(m.name, catalog.ApprovalPreApproved, catalog.CreatedByUser), false) == policy.ApprovalRefuse {
		return nil, d.refuse(ctx, c, nil, errdefs.Errorf(errdefs.PolicyDenied, "meta-tool %q is blocked by worker %q's approval setting", m.name, w.Name))
	}
	c.args = normalArgs(c.args)
	if err := metaSchemas()[m.name].Validate(c.args); err != nil {
		return nil, d.refuse(ctx, c, nil, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err})
	}
	var args map[string]any
	if err := json.Unmarshal(c.args, &args); err != nil {
		return nil, d.refuse(ctx, c, nil, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err})
	}
	var wlim policy.RateLimit
	if w.RateLimit != nil {
		wlim = w.RateLimit.Bucket()
	}
	release, err := d.cfg.Limiter.AllowWorker(c.caller.ID, c.tool, w.Name, wlim, d.now())
	if err != nil {
		return nil, d.refuse(ctx, c, nil, &errdefs.Error{Code: errdefs.RateLimited, Err: err})
	}
	defer release()
	v, err := d.runMeta(ctx, c, m, args)
	if err != nil {
		outcome := outcomeRefused
		if code := errdefs.CodeOf(err); code == errdefs.Internal || code == errdefs.Unavailable {
			outcome = outcomeFailed
		}
		return nil, d.finish(ctx, c, d.cfg.Scrubber, outcome, nil, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, d.finish(ctx, c, d.cfg.Scrubber, outcomeFailed, nil, err)
	}
	out := &executors.Result{Value: b, OutputBytes: int64(len(b))}
	scrubResult(d.cfg.Scrubber, out)
	if err := d.finish(ctx, c, d.cfg.Scrubber, outcomeOK, out, nil); err != nil {
		return nil, err
	}
	return &Outcome{CallID: c.id, Tool: c.tool, Version: 1, Result: out.Value, Logs: []executors.LogLine{}, Duration: d.now().Sub(c.started)}, nil
}

// runMeta runs m. (A switch, not a func field of metaTools: search_tools
// lists the worker's tools, which include the meta-tools.)
func (d *Dispatcher) runMeta(ctx context.Context, c *call, m *metaTool, args map[string]any) (any, error) {
	switch m.name {
	case "list_custom_tools":
		return d.metaList(ctx, c, args)
	case "search_tools":
		return d.metaSearch(ctx, c, args)
	case "get_tool":
		return d.metaGet(ctx, c, args)
	case "create_tool":
		return d.metaCreate(ctx, c, args)
	case "update_tool":
		return d.metaUpdate(ctx, c, args)
	case "delete_custom_tool":
		return d.metaDelete(ctx, c, args)
	case "toggle_custom_tool":
		return d.metaToggle(ctx, c, args)
	}
	return nil, errdefs.Errorf(errdefs.Internal, "meta-tool %q has no implementation", m.name)
}

// metaToolView is what the meta-tools tell of a tool.
type metaToolView struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Kind        string `json:"kind"`
	Category    string `json:"category,omitempty"`
	Status      string `json:"status"`
	CreatedBy   string `json:"created_by"`
	Version     int    `json:"version"`
	UsageCount  int64  `json:"usage_count"`
}

func viewOf(t *catalog.Tool) metaToolView {
	return metaToolView{Name: t.Def.Name, Description: t.Def.Description, Kind: string(t.Def.Kind), Category: t.Def.Category,
		Status: t.Status, CreatedBy: t.CreatedBy, Version: t.Version, UsageCount: t.UsageCount}
}

func str(args map[string]any, key string) string {
	s, _ := args[key].(string)
	return s
}

func (d *Dispatcher) metaList(ctx context.Context, c *call, args map[string]any) (any, error) {
	names, err := d.cfg.Store.WorkerTools(ctx, c.worker.Name)
	if err != nil {
		return nil, err
	}
	out := struct {
		Tools           []metaToolView `json:"tools"`
		Total           int            `json:"total"`
		Active          int            `json:"active"`
		PendingApproval int            `json:"pending_approval"`
	}{Tools: []metaToolView{}}
	for _, name := range names {
		t, err := d.cfg.Catalog.Get(ctx, name)
		if errdefs.Is(err, errdefs.ToolNotFound) {
			continue // deleted since
		}
		if err != nil {
			return nil, err
		}
		out.Total++
		switch t.Status {
		case catalog.StatusActive:
			out.Active++
		case catalog.StatusPendingApproval:
			out.PendingApproval++
		}
		if cat := str(args, "category"); cat != "" && !strings.EqualFold(cat, t.Def.Category) {
			continue
		}
		if st := str(args, "status"); st != "" && st != t.Status {
			continue
		}
		out.Tools = append(out.Tools, viewOf(t))
	}
	return out, nil
}

func (d *Dispatcher) metaSearch(ctx context.Context, c *call, args map[string]any) (any, error) {
	tools, err := d.ToolsFor(ctx, c.worker)
	if err != nil {
		return nil, err
	}
	words := strings.Fields(strings.ToLower(str(args, "query")))
	cat := str(args, "category")
	out := []metaToolView{}
	for _, t := range tools {
		if IsMeta(t.Def) || (cat != "" && !strings.EqualFold(cat, t.Def.Category)) {
			continue
		}
		text := strings.ToLower(t.Def.Name + " " + strings.ReplaceAll(t.Def.Name, "_", " ") + " " + t.Def.Description + " " + t.Def.Category)
		if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(text, w) }) {
			out = append(out, viewOf(t))
		}
	}
	return map[string]any{"tools": out}, nil
}

// workerTool is the tool called name as c's worker sees it: a tool-file
// tool, or a catalog tool of the worker's; tool_not_found otherwise.
func (d *Dispatcher) workerTool(ctx context.Context, c *call, name string) (*catalog.Tool, bool, error) {
	if lt := c.worker.LocalTool(name); lt != nil {
		return &catalog.Tool{Def: lt.Def, Status: catalog.StatusActive, CreatedBy: catalog.CreatedByUser, Version: 1}, true, nil
	}
	ok, err := d.WorkerHasTool(ctx, c.worker, name)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return nil, false, notFound(name)
	}
	t, err := d.cfg.Catalog.Get(ctx, name)
	return t, false, err
}

func (d *Dispatcher) metaGet(ctx context.Context, c *call, args map[string]any) (any, error) {
	t, _, err := d.workerTool(ctx, c, str(args, "name"))
	if err != nil {
		return nil, err
	}
	def, err := t.Def.WrittenJSON()
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

// parseDef reads the definition m as the catalog does.
func parseDef(m map[string]any) (*catalog.Definition, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	def, err := catalog.ParseJSON(b)
	if err != nil {
		return nil, &errdefs.Error{Code: errdefs.InvalidDefinition, Err: err}
	}
	return def, nil
}

func (d *Dispatcher) metaCreate(ctx context.Context, c *call, args map[string]any) (any, error) {
	m := map[string]any{"name": args["name"], "kind": string(toolspec.JS)}
	if err := applyFields(m, args); err != nil {
		return nil, err
	}
	def, err := parseDef(m)
	if err != nil {
		return nil, err
	}
	t, err := d.cfg.Catalog.Create(ctx, def, c.caller)
	if err != nil {
		return nil, err
	}
	if err := d.cfg.Store.AddWorkerTool(ctx, c.worker.Name, t.Def.Name); err != nil {
		return nil, fmt.Errorf("tool %q was made, but not added to worker %q: %w", t.Def.Name, c.worker.Name, err)
	}
	d.log.Info("tool created by meta-tool", "tool", t.Def.Name, "status", t.Status, "worker", c.worker.Name)
	return changed(t, "created"), nil
}

// changed is what create_tool and update_tool answer.
func changed(t *catalog.Tool, verb string) map[string]any {
	out := map[string]any{"name": t.Def.Name, "status": t.Status, "version": t.Version}
	switch t.Status {
	case catalog.StatusPendingApproval:
		out["message"] = fmt.Sprintf("tool %s was %s and waits for a person's approval (toolcage tools approve %s); it cannot run until then", t.Def.Name, verb, t.Def.Name)
	case catalog.StatusActive:
		out["message"] = fmt.Sprintf("tool %s was %s and can be called", t.Def.Name, verb)
	}
	return out
}

func (d *Dispatcher) metaUpdate(ctx context.Context, c *call, args map[string]any) (any, error) {
	name := str(args, "name")
	t, local, err := d.workerTool(ctx, c, name)
	if err != nil {
		return nil, err
	}
	if local {
		return nil, errdefs.Errorf(errdefs.Forbidden, "tool %q is defined in a file of worker %q; a person changes it there", name, c.worker.Name)
	}
	base, err := t.Def.WrittenJSON()
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
	def, err := parseDef(m)
	if err != nil {
		return nil, err
	}
	t, err = d.cfg.Catalog.Update(ctx, name, def, c.caller)
	if err != nil {
		return nil, err
	}
	return changed(t, "changed"), nil
}

func (d *Dispatcher) metaDelete(ctx context.Context, c *call, args map[string]any) (any, error) {
	name := str(args, "name")
	if _, local, err := d.workerTool(ctx, c, name); err != nil || local {
		if local {
			return nil, errdefs.Errorf(errdefs.Forbidden, "tool %q is defined in a file of worker %q; a person removes it there", name, c.worker.Name)
		}
		return nil, err
	}
	confirm, _ := args["confirm"].(bool)
	if !confirm {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "deleting tool %q cannot be undone: call delete_custom_tool again with confirm: true", name)
	}
	if err := d.cfg.Catalog.Delete(ctx, name, c.caller, true); err != nil {
		return nil, err
	}
	d.log.Info("tool deleted by meta-tool", "tool", name, "worker", c.worker.Name)
	return map[string]any{"name": name, "deleted": true}, nil
}

func (d *Dispatcher) metaToggle(ctx context.Context, c *call, args map[string]any) (any, error) {
	name := str(args, "name")
	if _, local, err := d.workerTool(ctx, c, name); err != nil || local {
		if local {
			return nil, errdefs.Errorf(errdefs.Forbidden, "tool %q is defined in a file of worker %q; it is always on", name, c.worker.Name)
		}
		return nil, err
	}
	toggle := d.cfg.Catalog.Disable
	if on, _ := args["enabled"].(bool); on {
		toggle = d.cfg.Catalog.Enable
	}
	t, err := toggle(ctx, name, c.caller)
	if err != nil {
		return nil, err
	}
	return map[string]any{"name": name, "status": t.Status}, nil
}

// Interface guards.
var (
	_ kind.Spec     = metaSpec{}
	_ kind.Effecter = metaSpec{}
)
