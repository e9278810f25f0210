package filesystem

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	fskind "github.com/toolcage/toolcage/daemon/kind/fs"
	"github.com/toolcage/toolcage/daemon/toolset"
)

func TestTools(t *testing.T) {
	defs, err := Toolset.Tools(toolset.Worker{Name: "w", Workspace: "/srv/repo", ReadOnly: true}, json.RawMessage(`{"max_write_bytes": "2KiB"}`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
		if d.Kind != "fs" || !slices.Equal(d.Permissions, []string{"filesystem"}) {
			t.Errorf("%s: kind %s permissions %v", d.Name, d.Kind, d.Permissions)
		}
		writes := d.Name == "write_file" || d.Name == "edit_file" || d.Name == "delete_file"
		if writes != (d.WrittenApproval() == "ask") {
			t.Errorf("%s: approval %q", d.Name, d.WrittenApproval())
		}
		s := d.Spec.(*fskind.Spec)
		if !s.ReadOnly || s.MaxWriteBytes != 2048 || s.MaxReadBytes != DefaultMaxReadBytes || s.MaxMatches != DefaultMaxMatches || s.Op != d.Name {
			t.Errorf("%s: block %+v", d.Name, s)
		}
	}
	if !slices.Equal(names, fskind.Ops) || !slices.Equal(names, Names()) {
		t.Fatalf("tools %v, want %v", names, fskind.Ops)
	}
	if _, err := Toolset.Tools(toolset.Worker{Name: "w"}, json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "workspace") {
		t.Fatalf("no workspace: %v", err)
	}
}

func TestSettings(t *testing.T) {
	for _, bad := range []string{`{"max_read_bytes": "1TiB"}`, `{"max_matches": 100000}`, `{"max_write_bytes": -1}`, `{"cap": 1}`, `[]`} {
		if err := Toolset.Check(json.RawMessage(bad)); err == nil {
			t.Errorf("settings %s accepted", bad)
		}
	}
	for _, good := range []string{`{}`, `{"max_read_bytes": "64MiB", "max_write_bytes": 1, "max_matches": 10000}`} {
		if err := Toolset.Check(json.RawMessage(good)); err != nil {
			t.Errorf("settings %s: %v", good, err)
		}
	}
}
