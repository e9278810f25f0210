package visible

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/toolset"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/principal"
	"github.com/toolcage/toolcage/store"
)

// fixture is a real store and catalog holding, for workers a and b:
//
//	greet        a person's js tool (text), listed by a and b; a blocks it by approval
//	shout        a person's shell tool (shell), listed by a, whose profile no_shell denies it
//	off          a person's tool, disabled, listed by a
//	secret_tool  a person's tool no worker lists
//	a_made       made by a's agent (active)
//	a_pending    made by a's agent (shell: pending a person's approval)
//	b_made       made by b's agent, and listed by name in a's file
//	file_tool    a's tool file's tool, and an a_made-like catalog tool of
//	             the same name a's agent made (the file's must win)
//	ts_tool      a tool of a toolset a turns on
//	ghost        listed by a, in no catalog
//
// a offers the meta-tools (and may make tools); b may make tools but
// offers none. The worker "gone" is not registered.
type fixture struct {
	views *Views
	ws    map[string]*worker.Worker
}

func def(t testing.TB, name, kind, category, approval string) *catalog.Definition {
	t.Helper()
	body := `"js":{"code":"return 1"}`
	if kind == "shell" {
		body = `"shell":{"command":"echo hi"}`
	}
	raw := fmt.Sprintf(`{"name":%q,"description":"%s tool","kind":%q,"category":%q,%s`, name, name, kind, category, body)
	if approval != "" {
		raw += fmt.Sprintf(`,"approval":%q`, approval)
	}
	d, err := catalog.ParseJSON(json.RawMessage(raw + "}"))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

var (
	person  = principal.Caller{Type: principal.TypeUser, ID: "uid:1000"}
	person9 = principal.Caller{Type: principal.TypeUser, ID: "uid:9"} // mapped to no_shell
	agentA  = principal.Caller{Type: principal.TypeLLM, ID: "worker:a", Worker: "a", TokenID: "ta"}
	agentB  = principal.Caller{Type: principal.TypeLLM, ID: "worker:b", Worker: "b", TokenID: "tb"}
	// A person narrowed to worker a (no token) sees what its agent sees.
	personAsA = principal.Caller{Type: principal.TypeLLM, ID: "uid:1000", Worker: "a"}
	// a's agent asking for a narrower profile.
	agentANoText = principal.Caller{Type: principal.TypeLLM, ID: "worker:a", Worker: "a", TokenID: "ta", Profile: "no_text"}
	// A token whose worker is gone; a label no worker holds.
	agentGone = principal.Caller{Type: principal.TypeLLM, ID: "worker:gone", Worker: "gone", TokenID: "tg"}
	label     = principal.Caller{Type: principal.TypeUser, ID: "uid:1000", Worker: "gone"}
)

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cat := catalog.New(st)
	a := &worker.Worker{Name: "a", Path: "/w/a.yaml", Profile: "No_Shell",
		Tools:      []string{"greet", "shout", "off", "b_made", "ghost"},
		Approval:   worker.Approval{Tools: map[string]string{"greet": catalog.ApprovalBlocked}},
		AgentTools: worker.AgentTools{Create: true, MetaTools: true},
		LocalTools: []*worker.LocalTool{
			{File: "/w/a/tools/file_tool.yaml", Def: def(t, "file_tool", "js", "text", "")},
			{File: toolset.Source("filesystem"), Def: def(t, "ts_tool", "js", "files", "")},
		}}
	b := &worker.Worker{Name: "b", Path: "/w/b.yaml", Tools: []string{"greet", "a_made"}, AgentTools: worker.AgentTools{Create: true}}
	ws := map[string]*worker.Worker{"a": a, "b": b}
	for _, w := range ws {
		raw, _ := json.Marshal(w)
		if _, _, err := st.RegisterWorker(ctx, &store.Worker{Name: w.Name, Path: w.Path, Definition: raw}); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []*catalog.Definition{def(t, "greet", "js", "text", ""), def(t, "shout", "shell", "shell", ""),
		def(t, "off", "js", "text", ""), def(t, "secret_tool", "js", "text", "")} {
		if _, err := cat.Create(ctx, d, person); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cat.Disable(ctx, "off", person); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		w   string
		def *catalog.Definition
	}{{"a", def(t, "a_made", "js", "text", "")}, {"a", def(t, "a_pending", "shell", "ops", "")},
		{"b", def(t, "b_made", "js", "text", "")}, {"a", def(t, "file_tool", "js", "text", "")}} {
		tool, err := cat.Create(ctx, m.def, principal.Caller{Type: principal.TypeLLM, ID: "worker:" + m.w, Worker: m.w})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.AddWorkerTool(ctx, m.w, tool.Def.Name); err != nil {
			t.Fatal(err)
		}
	}
	profiles := &policy.Profiles{
		Groups:   map[string]policy.ToolGroup{"shell": {Categories: []string{"shell"}}, "text": {Categories: []string{"text"}}},
		Profiles: map[string]policy.Profile{"no_shell": {Deny: []string{"group:shell"}}, "no_text": {Deny: []string{"group:text"}}},
	}
	views := New(Config{Catalog: cat, Made: st.WorkerTools, Profiles: profiles, ProfileCallers: map[string]string{"uid:9": "no_shell"},
		Workers: func(name string) (*worker.Worker, error) {
			if w := ws[name]; w != nil {
				return w, nil
			}
			return nil, fmt.Errorf("worker %q: %w", name, store.ErrNotFound)
		}})
	return &fixture{views: views, ws: ws}
}

func (f *fixture) view(t *testing.T, c principal.Caller) *View {
	t.Helper()
	v, err := f.views.For(c)
	if err != nil {
		t.Fatalf("view of %+v: %v", c, err)
	}
	return v
}

func names(tools []*catalog.Tool) []string {
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.Def.Name)
	}
	slices.Sort(out)
	return out
}

// TestView: the table over caller × worker × source × profile of what
// each caller sees (Get and Resolve: exists for it, from where), lists,
// may call by profile (Allows) and could call now (List Callable). A "-"
// source is tool_not_found: as if absent.
func TestView(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const absent = "-"
	tests := []struct {
		name     string
		caller   principal.Caller
		tool     string
		source   Source // absent: tool_not_found
		listed   bool   // in List(Filter{})
		allowed  bool   // Allows
		callable bool   // in List(Filter{Callable: true})
	}{
		// A person through no worker: the catalog it manages.
		{"person: a person's tool", person, "greet", FromCatalog, true, true, true},
		{"person: an unlisted tool", person, "secret_tool", FromCatalog, true, true, true},
		{"person: an agent's tool", person, "b_made", FromCatalog, true, true, true},
		{"person: a disabled tool is listed, not callable", person, "off", FromCatalog, true, true, false},
		{"person: a pending tool is listed, not callable", person, "a_pending", FromCatalog, true, true, false},
		{"person: no worker's tool files", person, "ts_tool", absent, false, true, false},
		{"person: no meta-tools", person, "get_tool", absent, false, true, false},
		// A person mapped to a profile manages the whole catalog, and may
		// call (and lists as allowed) only what it allows.
		{"mapped person: a tool its profile denies", person9, "shout", FromCatalog, true, false, false},
		// Worker a's agent, under a's profile no_shell.
		{"a: a listed person's tool", agentA, "greet", FromCatalog, true, true, false}, // a blocks it: not callable
		{"a: a listed tool its profile denies", agentA, "shout", FromCatalog, false, false, false},
		{"a: a listed disabled tool", agentA, "off", FromCatalog, true, true, false},
		{"a: a tool its agent made", agentA, "a_made", FromAgent, true, true, true},
		{"a: its agent's pending tool", agentA, "a_pending", FromAgent, true, true, false},
		{"a: a tool of its tool files", agentA, "file_tool", FromFile, true, true, true},
		{"a: a tool of its toolset", agentA, "ts_tool", FromFile, true, true, true},
		{"a: a reading meta-tool", agentA, "list_custom_tools", FromMeta, true, true, true},
		{"a: a changing meta-tool", agentA, "create_tool", FromMeta, true, true, true},
		// Red team: what a's agent must not see or run.
		{"a: another worker's agent's tool its file names", agentA, "b_made", absent, false, true, false},
		{"a: a tool no worker lists", agentA, "secret_tool", absent, false, true, false},
		{"a: a listed name no tool holds", agentA, "ghost", absent, false, true, false},
		{"a: another worker's tool file's tool", agentB, "file_tool", absent, false, true, false},
		// A person narrowed to a sees what a's agent sees.
		{"person as a: its agent's tool", personAsA, "a_made", FromAgent, true, true, true},
		{"person as a: a tool no worker lists", personAsA, "secret_tool", absent, false, true, false},
		{"person as a: under a's profile", personAsA, "shout", FromCatalog, false, false, false},
		// a's agent narrowing itself further: the header only narrows.
		{"a, no_text: a text tool", agentANoText, "greet", FromCatalog, false, false, false},
		{"a, no_text: its file's text tool", agentANoText, "file_tool", FromFile, false, false, false},
		{"a, no_text: a files tool", agentANoText, "ts_tool", FromFile, true, true, true},
		// Worker b: no meta-tools, no profile.
		{"b: a listed person's tool", agentB, "greet", FromCatalog, true, true, true},
		{"b: a tool its agent made", agentB, "b_made", FromAgent, true, true, true},
		{"b: another worker's agent's tool its file names", agentB, "a_made", absent, false, true, false},
		{"b: no meta-tools", agentB, "get_tool", absent, false, true, false},
		{"b: a tool its file does not list", agentB, "shout", absent, false, true, false},
		// A label no worker holds (only a person can send one): the catalog.
		{"label: the catalog", label, "secret_tool", FromCatalog, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := f.view(t, tt.caller)
			tool, src, err := v.Get(ctx, tt.tool)
			res, rsrc, rerr := v.Resolve(ctx, tt.tool)
			if tt.source == absent {
				if !errdefs.Is(err, errdefs.ToolNotFound) || !errdefs.Is(rerr, errdefs.ToolNotFound) {
					t.Fatalf("Get: %v %v, Resolve: %v; want tool_not_found", tool, err, rerr)
				}
			} else {
				if err != nil || rerr != nil || src != tt.source || rsrc != tt.source || tool.Def.Name != tt.tool || res.Tool.Def.Name != tt.tool {
					t.Fatalf("Get: %s %v, Resolve: %s %v; want %s", src, err, rsrc, rerr, tt.source)
				}
				if got := v.Allows(tool.Def) == nil; got != tt.allowed {
					t.Errorf("Allows = %v, want %v", got, tt.allowed)
				}
				if err := v.Allows(tool.Def); err != nil && !errdefs.Is(err, errdefs.PolicyDenied) {
					t.Errorf("Allows refused with %v, want policy_denied", err)
				}
			}
			listed, total, err := v.List(ctx, Filter{})
			if err != nil || total != len(listed) {
				t.Fatalf("List: %d of %d, %v", len(listed), total, err)
			}
			if got := slices.Contains(names(listed), tt.tool); got != tt.listed {
				t.Errorf("listed = %v, want %v (list %v)", got, tt.listed, names(listed))
			}
			callable, _, err := v.List(ctx, Filter{Callable: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(names(callable), tt.tool); got != tt.callable {
				t.Errorf("callable = %v, want %v (list %v)", got, tt.callable, names(callable))
			}
		})
	}
}

// TestViewShadow: a catalog tool an agent made under the name of its
// worker's tool-file tool never stands in for the person's: resolved,
// got and listed (once) as the file's.
func TestViewShadow(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	v := f.view(t, agentA)
	want := f.ws["a"].LocalTool("file_tool").Def
	res, src, err := v.Resolve(ctx, "file_tool")
	if err != nil || src != FromFile || res.Tool.Def != want || res.Tool.CreatedBy != catalog.CreatedByUser {
		t.Fatalf("resolve: %s %+v %v", src, res, err)
	}
	list, _, err := v.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var seen []*catalog.Tool
	for _, tool := range list {
		if tool.Def.Name == "file_tool" {
			seen = append(seen, tool)
		}
	}
	if len(seen) != 1 || seen[0].Def != want {
		t.Fatalf("listed %d file_tool entries: %+v", len(seen), seen)
	}
}

// TestViewWhoseWorker: the one answer to "whose worker is this caller".
// A token whose worker is gone is unauthorized, never the catalog at
// large; a name no worker holds without a token is a label.
func TestViewWhoseWorker(t *testing.T) {
	f := newFixture(t)
	if _, err := f.views.For(agentGone); !errdefs.Is(err, errdefs.Unauthorized) {
		t.Fatalf("a gone worker's token: %v, want unauthorized", err)
	}
	if v := f.view(t, label); v.Worker() != nil {
		t.Fatalf("a label is no worker: %+v", v.Worker())
	}
	if v := f.view(t, agentA); v.Worker() != f.ws["a"] {
		t.Fatalf("a's agent: %+v", v.Worker())
	}
	lookupErr := errors.New("disk on fire")
	broken := New(Config{Workers: func(string) (*worker.Worker, error) { return nil, lookupErr }})
	if _, err := broken.For(agentA); !errors.Is(err, lookupErr) {
		t.Fatalf("a failed lookup: %v", err)
	}
}

// TestViewList: listing is filtered, then paginated, once: the total
// counts what the filters keep, through a worker and not; a profile
// nobody defines is invalid_request.
func TestViewList(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tests := []struct {
		name   string
		caller principal.Caller
		f      Filter
		want   []string // every page's tools, in order, before limit/offset
	}{
		{"a: js only", agentA, Filter{Filter: catalog.Filter{Kind: "js"}}, []string{"greet", "off", "a_made", "file_tool", "ts_tool"}},
		{"a: its agent's", agentA, Filter{Filter: catalog.Filter{CreatedBy: catalog.CreatedByLLM}}, []string{"a_made", "a_pending"}},
		{"a: pending", agentA, Filter{Filter: catalog.Filter{Status: catalog.StatusPendingApproval}}, []string{"a_pending"}},
		{"a: category, any case", agentA, Filter{Filter: catalog.Filter{Category: "META"}}, []string{"list_custom_tools", "search_tools", "get_tool",
			"create_tool", "update_tool", "delete_custom_tool", "toggle_custom_tool"}},
		{"a: no meta, narrowed to no_text", agentA, Filter{Profile: "no_text", NoMeta: true}, []string{"a_pending", "ts_tool"}},
		{"person: active text tools", person, Filter{Filter: catalog.Filter{Status: catalog.StatusActive, Category: "text"}},
			[]string{"a_made", "b_made", "file_tool", "greet", "secret_tool"}},
		{"person: narrowed to no_shell", person, Filter{Profile: "no_shell", Filter: catalog.Filter{Kind: "shell"}}, []string{"a_pending"}},
		{"mapped person: allowed only", person9, Filter{Allowed: true, Filter: catalog.Filter{Kind: "shell"}}, []string{"a_pending"}},
		{"mapped person: the catalog", person9, Filter{Filter: catalog.Filter{Kind: "shell"}}, []string{"a_pending", "shout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := f.view(t, tt.caller)
			all, total, err := v.List(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, 0, len(all))
			for _, tool := range all {
				got = append(got, tool.Def.Name)
			}
			want := tt.want
			if tt.caller.Worker == "" { // the catalog: as the store orders it
				slices.Sort(got)
				want = slices.Sorted(slices.Values(want))
			}
			if !slices.Equal(got, want) || total != len(want) {
				t.Fatalf("got %v (total %d), want %v", got, total, want)
			}
			for off := 0; off <= len(want); off++ {
				page := tt.f
				page.Limit, page.Offset = 1, off
				one, total, err := v.List(ctx, page)
				if err != nil || total != len(want) {
					t.Fatalf("page %d: total %d, %v", off, total, err)
				}
				if off == len(want) {
					if len(one) != 0 {
						t.Fatalf("past the end: %v", names(one))
					}
					continue
				}
				if len(one) != 1 || (tt.caller.Worker != "" && one[0].Def.Name != want[off]) {
					t.Fatalf("page %d: %v, want %s", off, names(one), want[off])
				}
			}
		})
	}
	for _, c := range []principal.Caller{person, agentA} {
		if _, _, err := f.view(t, c).List(ctx, Filter{Profile: "nope"}); !errdefs.Is(err, errdefs.InvalidRequest) {
			t.Errorf("%s: unknown profile: %v", c.ID, err)
		}
	}
	ghostHeader := agentA
	ghostHeader.Profile = "ghost"
	if _, _, err := f.view(t, ghostHeader).List(ctx, Filter{}); !errdefs.Is(err, errdefs.InvalidRequest) {
		t.Errorf("unknown header profile: %v", err)
	}
}

// FuzzView: for any tool name and any of the fixture's callers, Get and
// Resolve agree on whether the caller sees the tool and where it comes
// from; a tool seen through a worker is one of that worker's (listed,
// made by its agent, of its files, a meta-tool it offers), and List
// shows it exactly when Allows does.
func FuzzView(f *testing.F) {
	for _, s := range []string{"greet", "shout", "b_made", "a_made", "file_tool", "ts_tool", "get_tool", "create_tool",
		"ghost", "secret_tool", "", "GREET", "greet ", "../greet", "list_custom_tools\x00"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(3))
	}
	fx := newFixture(f)
	callers := []principal.Caller{person, person9, agentA, agentB, personAsA, agentANoText, label}
	ctx := context.Background()
	lists := map[int][]string{}
	for i, c := range callers {
		v, err := fx.views.For(c)
		if err != nil {
			f.Fatal(err)
		}
		l, _, err := v.List(ctx, Filter{})
		if err != nil {
			f.Fatal(err)
		}
		lists[i] = names(l)
	}
	made := map[string][]string{"a": {"a_made", "a_pending", "file_tool"}, "b": {"b_made"}}
	f.Fuzz(func(t *testing.T, name string, who uint8) {
		i := int(who) % len(callers)
		v, err := fx.views.For(callers[i])
		if err != nil {
			t.Fatal(err)
		}
		tool, src, err := v.Get(ctx, name)
		res, rsrc, rerr := v.Resolve(ctx, name)
		if (err == nil) != (rerr == nil) || src != rsrc {
			t.Fatalf("%q: Get %s %v, Resolve %s %v", name, src, err, rsrc, rerr)
		}
		if err != nil {
			if !errdefs.Is(err, errdefs.ToolNotFound) {
				t.Fatalf("%q: %v", name, err)
			}
			if slices.Contains(lists[i], name) {
				t.Fatalf("%q is listed but not seen", name)
			}
			return
		}
		if tool.Def.Name != name || res.Tool.Def.Name != name {
			t.Fatalf("%q resolved to %q / %q", name, tool.Def.Name, res.Tool.Def.Name)
		}
		if w := v.Worker(); w != nil {
			mine := slices.Contains(w.Tools, name) || slices.Contains(made[w.Name], name) || w.LocalTool(name) != nil ||
				slices.Contains(MetaNames(w), name)
			if !mine {
				t.Fatalf("%s sees %q, which is none of its worker's", callers[i].ID, name)
			}
			if got := slices.Contains(lists[i], name); got != (v.Allows(tool.Def) == nil) {
				t.Fatalf("%q: listed %v, allowed %v", name, got, v.Allows(tool.Def))
			}
		}
	})
}
