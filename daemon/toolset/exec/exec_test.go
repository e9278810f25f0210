package exec

import (
	"encoding/json"
	"strings"
	"testing"

	kexec "github.com/toolcage/toolcage/daemon/kind/exec"
	"github.com/toolcage/toolcage/daemon/toolset"
)

func TestTools(t *testing.T) {
	rules := json.RawMessage(`{"rules": [{"pattern": "git status", "approval": "preApproved"}]}`)
	defs, err := Toolset.Tools(toolset.Worker{Name: "w", Workspace: "/srv/repo"}, rules)
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 1 || defs[0].Name != "exec" || defs[0].Kind != kexec.Name || !defs[0].HasPermission("filesystem") || defs[0].WrittenApproval() != "" {
		t.Fatalf("defs %+v", defs[0])
	}
	s := defs[0].Spec.(*kexec.Spec)
	if s.Dir != "/workspace" || len(s.Rules) != 1 {
		t.Fatalf("block %+v", s)
	}
	// Without a workspace: its own scratch dir, no filesystem.
	defs, err = Toolset.Tools(toolset.Worker{Name: "w"}, json.RawMessage(`{}`))
	if err != nil || defs[0].HasPermission("filesystem") || defs[0].Spec.(*kexec.Spec).Dir != "" {
		t.Fatalf("no workspace: %+v %v", defs, err)
	}
	for _, bad := range []string{`{"rules": [{"pattern": "", "approval": "ask"}]}`, `{"rules": [{"pattern": "ls", "approval": "sure"}]}`, `{"rule": []}`} {
		if err := Toolset.Check(json.RawMessage(bad)); err == nil || strings.TrimSpace(err.Error()) == "" {
			t.Errorf("settings %s accepted", bad)
		}
	}
}
