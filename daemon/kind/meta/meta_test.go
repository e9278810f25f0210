package meta

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
)

// fakeCatalog is a kind.AgentCatalog made of func fields; a nil field
// fails the test that reaches it.
type fakeCatalog struct {
	t          *testing.T
	made       []kind.AgentTool
	visible    []kind.AgentTool
	tool       func(name string) (*kind.AgentTool, json.RawMessage, error)
	create     func(def json.RawMessage) (*kind.AgentTool, error)
	update     func(name string, def json.RawMessage) (*kind.AgentTool, error)
	deleted    []string
	setEnabled func(name string, on bool) (*kind.AgentTool, error)
}

func (f *fakeCatalog) Made(context.Context) ([]kind.AgentTool, error)    { return f.made, nil }
func (f *fakeCatalog) Visible(context.Context) ([]kind.AgentTool, error) { return f.visible, nil }
func (f *fakeCatalog) Tool(_ context.Context, name string) (*kind.AgentTool, json.RawMessage, error) {
	if f.tool == nil {
		f.t.Fatalf("Tool(%s) called", name)
	}
	return f.tool(name)
}
func (f *fakeCatalog) Create(_ context.Context, def json.RawMessage) (*kind.AgentTool, error) {
	if f.create == nil {
		f.t.Fatalf("Create(%s) called", def)
	}
	return f.create(def)
}
func (f *fakeCatalog) Update(_ context.Context, name string, def json.RawMessage) (*kind.AgentTool, error) {
	if f.update == nil {
		f.t.Fatalf("Update(%s) called", name)
	}
	return f.update(name, def)
}
func (f *fakeCatalog) Delete(_ context.Context, name string) error {
	f.deleted = append(f.deleted, name)
	return nil
}
func (f *fakeCatalog) SetEnabled(_ context.Context, name string, on bool) (*kind.AgentTool, error) {
	if f.setEnabled == nil {
		f.t.Fatalf("SetEnabled(%s) called", name)
	}
	return f.setEnabled(name, on)
}

var _ kind.AgentCatalog = (*fakeCatalog)(nil)

// run calls the meta-tool op with args on cat, through worker "w".
func run(t *testing.T, op string, args string, cat kind.AgentCatalog) (map[string]any, error) {
	t.Helper()
	c, err := (&Spec{Op: op}).Compile(kind.Tool{Name: op})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.(kind.Local).Run(context.Background(), &kind.LocalCall{Worker: "w", Args: json.RawMessage(args), Catalog: cat})
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(r.Value, &m); err != nil {
		t.Fatalf("%s: %s: %v", op, r.Value, err)
	}
	return m, nil
}

// TestTable: every meta-tool has a schema that is an object, a run and
// hints; an unknown one is refused at every step, and taken at its worst.
func TestTable(t *testing.T) {
	if len(Tools()) != 7 || !slices.Equal(Names(), []string{"list_custom_tools", "search_tools", "get_tool", "create_tool", "update_tool", "delete_custom_tool", "toggle_custom_tool"}) {
		t.Fatalf("meta-tools %v", Names())
	}
	for _, m := range Tools() {
		var schema map[string]any
		if err := json.Unmarshal([]byte(m.Parameters), &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: schema %v", m.Name, err)
		}
		if m.run == nil {
			t.Errorf("%s has no run", m.Name)
		}
		s := &Spec{Op: m.Name}
		if ps := s.Validate(kind.Tool{}); len(ps) != 0 || s.Effects().ReadOnly != !m.Changes || s.Effects().OpenWorld {
			t.Errorf("%s: problems %v, effects %+v", m.Name, ps, s.Effects())
		}
	}
	bad := &Spec{Op: "drop_everything"}
	if ps := bad.Validate(kind.Tool{}); len(ps) != 1 || ps[0].Field != "meta.op" {
		t.Errorf("unknown op: %v", ps)
	}
	if _, err := bad.Compile(kind.Tool{}); err == nil {
		t.Error("unknown op compiled")
	}
	if !bad.Effects().Destructive {
		t.Error("an unknown op is not taken at its worst")
	}
	if kind.TurnOn(Kind{}) != "agent_tools: {meta_tools: true}" {
		t.Errorf("TurnOn = %q", kind.TurnOn(Kind{}))
	}
	// Without the worker's catalog, nothing runs.
	if _, err := run(t, "list_custom_tools", `{}`, nil); errdefs.CodeOf(err) != errdefs.Forbidden {
		t.Errorf("no catalog: %v", err)
	}
}

func TestListAndSearch(t *testing.T) {
	cat := &fakeCatalog{t: t,
		made: []kind.AgentTool{
			{Name: "a", Category: "Math", Status: "active"},
			{Name: "b", Category: "math", Status: "pending_approval"},
			{Name: "c", Category: "Text", Status: "disabled"},
		},
		visible: []kind.AgentTool{
			{Name: "word_count", Description: "Count the words of a text", Category: "Text"},
			{Name: "adder", Description: "Adds numbers", Category: "Math"},
		}}
	got, err := run(t, "list_custom_tools", `{}`, cat)
	if err != nil || got["total"] != 3.0 || got["active"] != 1.0 || got["pending_approval"] != 1.0 || len(got["tools"].([]any)) != 3 {
		t.Fatalf("list: %v %v", got, err)
	}
	// Filters narrow the list, never the counts.
	got, _ = run(t, "list_custom_tools", `{"category":"MATH","status":"pending_approval"}`, cat)
	if tools := got["tools"].([]any); len(tools) != 1 || tools[0].(map[string]any)["name"] != "b" || got["total"] != 3.0 {
		t.Fatalf("filtered list: %v", got)
	}
	for q, want := range map[string][]string{
		`{"query":"word count"}`:                   {"word_count"}, // the name's words
		`{"query":"ADDS"}`:                         {"adder"},
		`{"query":"text"}`:                         {"word_count"}, // the category
		`{"query":"numbers words"}`:                nil,            // every word must match
		`{"query":"count","category":"math"}`:      nil,
		`{"query":"s","category":"text"}`:          {"word_count"},
		`{"query":"a"}`:                            {"word_count", "adder"},
		`{"query":"   ","category":"no such one"}`: nil,
	} {
		got, err := run(t, "search_tools", q, cat)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, x := range got["tools"].([]any) {
			names = append(names, x.(map[string]any)["name"].(string))
		}
		if !slices.Equal(names, want) {
			t.Errorf("search %s: %v, want %v", q, names, want)
		}
	}
}

func TestCreateAndUpdate(t *testing.T) {
	var sent map[string]any
	cat := &fakeCatalog{t: t,
		create: func(def json.RawMessage) (*kind.AgentTool, error) {
			sent = nil
			_ = json.Unmarshal(def, &sent)
			return &kind.AgentTool{Name: "x", Status: "pending_approval", Version: 1}, nil
		},
		tool: func(name string) (*kind.AgentTool, json.RawMessage, error) {
			switch name {
			case "mine":
				return &kind.AgentTool{Name: name}, json.RawMessage(`{"name":"mine","description":"d","kind":"js","js":{"code":"return 1","allowed_domains":["a.example"]},"limits":{"timeout":"1s"}}`), nil
			case "filed":
				return &kind.AgentTool{Name: name, InFile: true}, json.RawMessage(`{}`), nil
			}
			return nil, nil, errdefs.Errorf(errdefs.ToolNotFound, "no tool named %q", name)
		},
		update: func(name string, def json.RawMessage) (*kind.AgentTool, error) {
			sent = nil
			_ = json.Unmarshal(def, &sent)
			return &kind.AgentTool{Name: name, Status: "active", Version: 2}, nil
		},
	}
	got, err := run(t, "create_tool", `{"name":"x","description":"d","code":"return 2","parameters":"{\"type\":\"object\"}","limits":{"timeout":"2s","output":1024}}`, cat)
	if err != nil || got["status"] != "pending_approval" || !strings.Contains(got["message"].(string), "toolcage tools approve x") {
		t.Fatalf("create: %v %v", got, err)
	}
	if b, _ := json.Marshal(sent); string(b) != `{"description":"d","js":{"code":"return 2"},"kind":"js","limits":{"output":1024,"timeout":"2s"},"name":"x","parameters":{"type":"object"}}` {
		t.Errorf("create sent %s", b)
	}
	if _, err := run(t, "create_tool", `{"name":"x","description":"d","parameters":"{nope"}`, cat); errdefs.CodeOf(err) != errdefs.InvalidArguments {
		t.Errorf("parameters not JSON: %v", err)
	}
	// Only the fields given change; code keeps allowed_domains.
	got, err = run(t, "update_tool", `{"name":"mine","code":"return 3"}`, cat)
	if err != nil || got["version"] != 2.0 || got["message"] != "tool mine was changed and can be called" {
		t.Fatalf("update: %v %v", got, err)
	}
	if b, _ := json.Marshal(sent); string(b) != `{"description":"d","js":{"allowed_domains":["a.example"],"code":"return 3"},"kind":"js","limits":{"timeout":"1s"},"name":"mine"}` {
		t.Errorf("update sent %s", b)
	}
	if _, err := run(t, "update_tool", `{"name":"nope","code":"x"}`, cat); errdefs.CodeOf(err) != errdefs.ToolNotFound {
		t.Errorf("update of no tool: %v", err)
	}
	// A tool of the worker's files is the person's to change (Update is
	// never reached).
	cat.update = nil
	if _, err := run(t, "update_tool", `{"name":"filed","code":"x"}`, cat); errdefs.CodeOf(err) != errdefs.Forbidden || !strings.Contains(err.Error(), `worker "w"`) {
		t.Errorf("update of a file's tool: %v", err)
	}
}

func TestDeleteAndToggle(t *testing.T) {
	cat := &fakeCatalog{t: t,
		tool: func(name string) (*kind.AgentTool, json.RawMessage, error) {
			return &kind.AgentTool{Name: name, InFile: name == "filed"}, json.RawMessage(`{}`), nil
		},
		setEnabled: func(name string, on bool) (*kind.AgentTool, error) {
			status := "disabled"
			if on {
				status = "active"
			}
			return &kind.AgentTool{Name: name, Status: status}, nil
		},
	}
	if _, err := run(t, "delete_custom_tool", `{"name":"mine"}`, cat); errdefs.CodeOf(err) != errdefs.InvalidRequest || len(cat.deleted) != 0 {
		t.Fatalf("delete without confirm: %v, deleted %v", err, cat.deleted)
	}
	if _, err := run(t, "delete_custom_tool", `{"name":"mine","confirm":false}`, cat); errdefs.CodeOf(err) != errdefs.InvalidRequest || len(cat.deleted) != 0 {
		t.Fatalf("delete with confirm false: %v, deleted %v", err, cat.deleted)
	}
	if _, err := run(t, "delete_custom_tool", `{"name":"filed","confirm":true}`, cat); errdefs.CodeOf(err) != errdefs.Forbidden || len(cat.deleted) != 0 {
		t.Fatalf("delete a file's tool: %v, deleted %v", err, cat.deleted)
	}
	if got, err := run(t, "delete_custom_tool", `{"name":"mine","confirm":true}`, cat); err != nil || got["deleted"] != true || !slices.Equal(cat.deleted, []string{"mine"}) {
		t.Fatalf("delete: %v %v, deleted %v", got, err, cat.deleted)
	}
	for args, want := range map[string]string{`{"name":"mine","enabled":false}`: "disabled", `{"name":"mine","enabled":true}`: "active"} {
		if got, err := run(t, "toggle_custom_tool", args, cat); err != nil || got["status"] != want {
			t.Errorf("toggle %s: %v %v", args, got, err)
		}
	}
	if _, err := run(t, "toggle_custom_tool", `{"name":"filed","enabled":false}`, cat); errdefs.CodeOf(err) != errdefs.Forbidden {
		t.Errorf("toggle a file's tool: %v", err)
	}
}
