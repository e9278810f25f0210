package defs

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/toolset"
	"github.com/toolcage/toolcage/daemon/toolset/builtin"
)

// The built-in toolsets' tools, as their toolsets write them, get hints
// from what each operation does; the permission an operation holds by
// itself (filesystem, network, database) does not make a read a write.
func TestToolsetAnnotations(t *testing.T) {
	settings := map[string]string{"fetch": `{"allowed_domains":["*"],"methods":["get","head","options","post","put","patch","delete"]}`}
	want := map[string]Annotations{
		// filesystem
		"read_file":   {ReadOnlyHint: true},
		"list_files":  {ReadOnlyHint: true},
		"glob":        {ReadOnlyHint: true},
		"search":      {ReadOnlyHint: true},
		"file_info":   {ReadOnlyHint: true},
		"write_file":  {DestructiveHint: true},
		"edit_file":   {DestructiveHint: true},
		"delete_file": {DestructiveHint: true},
		// exec: any command, in the workspace, without the network
		"exec": {DestructiveHint: true},
		// fetch: any method (a DELETE too), to any allowed host
		"fetch_url": {DestructiveHint: true, OpenWorldHint: true},
		// state
		"get_state":       {ReadOnlyHint: true},
		"list_state_keys": {ReadOnlyHint: true},
		"set_state":       {DestructiveHint: true},
		"delete_state":    {DestructiveHint: true},
		// sql
		"db_schema": {ReadOnlyHint: true},
		"db_sql":    {DestructiveHint: true},
	}
	seen := map[string]bool{}
	for _, ts := range builtin.Toolsets() {
		for _, wk := range []toolset.Worker{{Name: "w", Workspace: "/srv/repo"}, {Name: "w", Workspace: "/srv/repo", ReadOnly: true}, {Name: "w"}} {
			ws := wk.Workspace
			raw := json.RawMessage(`{}`)
			if s, ok := settings[ts.Name]; ok {
				raw = json.RawMessage(s)
			}
			defs, err := ts.Tools(wk, raw)
			if ts.Name == "filesystem" && ws == "" {
				continue // it needs a workspace
			}
			if err != nil {
				t.Fatalf("toolset %s: %v", ts.Name, err)
			}
			for _, d := range defs {
				w, ok := want[d.Name]
				if !ok {
					t.Errorf("toolset %s's tool %s has no row here", ts.Name, d.Name)
					continue
				}
				seen[d.Name] = true
				if got := AnnotationsOf(d); got != w {
					t.Errorf("%s (workspace %q, permissions %v): %+v, want %+v", d.Name, ws, d.Permissions, got, w)
				}
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no toolset wrote %s", name)
		}
	}
	// A permission the operation does not hold still widens it: a
	// read-only operation holding network is no longer read-only.
	for _, ts := range builtin.Toolsets() {
		if ts.Name != "filesystem" {
			continue
		}
		defs, err := ts.Tools(toolset.Worker{Name: "w", Workspace: "/srv/repo"}, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(defs, func(d *catalog.Definition) bool { return d.Name == "read_file" })
		d := *defs[i]
		d.Permissions = append(slices.Clone(d.Permissions), "network")
		if got := AnnotationsOf(&d); got != (Annotations{DestructiveHint: true, OpenWorldHint: true}) {
			t.Errorf("read_file holding network: %+v", got)
		}
	}
}

// fetch_url's hints follow the methods its toolset allows: it reads with
// GET, HEAD and OPTIONS only (the default is GET and HEAD), adds with
// POST, and changes or removes with PUT, PATCH or DELETE; it always
// reaches the world.
func TestFetchAnnotations(t *testing.T) {
	for settings, want := range map[string]Annotations{
		`{"allowed_domains":["*"]}`:                                    {ReadOnlyHint: true, OpenWorldHint: true},
		`{"allowed_domains":["*"],"methods":["GET"]}`:                  {ReadOnlyHint: true, OpenWorldHint: true},
		`{"allowed_domains":["*"],"methods":["get","HEAD","Options"]}`: {ReadOnlyHint: true, OpenWorldHint: true},
		`{"allowed_domains":["*"],"methods":["GET","POST"]}`:           {OpenWorldHint: true},
		`{"allowed_domains":["*"],"methods":["POST"]}`:                 {OpenWorldHint: true},
		`{"allowed_domains":["*"],"methods":["GET","PATCH"]}`:          {DestructiveHint: true, OpenWorldHint: true},
		`{"allowed_domains":["*"],"methods":["DELETE"]}`:               {DestructiveHint: true, OpenWorldHint: true},
		`{"allowed_domains":["*"],"methods":["OPTIONS","PUT"]}`:        {DestructiveHint: true, OpenWorldHint: true},
	} {
		i := slices.IndexFunc(builtin.Toolsets(), func(ts toolset.Toolset) bool { return ts.Name == "fetch" })
		defs, err := builtin.Toolsets()[i].Tools(toolset.Worker{Name: "w"}, json.RawMessage(settings))
		if err != nil {
			t.Fatalf("%s: %v", settings, err)
		}
		if got := AnnotationsOf(defs[0]); got != want {
			t.Errorf("%s: %+v, want %+v", settings, got, want)
		}
	}
}
