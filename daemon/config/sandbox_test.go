package config

import (
	"strings"
	"testing"
)

func TestSandboxConfigKeys(t *testing.T) {
	cfg, err := Load("", map[string]any{"sandbox.cgroup_parent": "/toolcage.slice/sandboxes", "sandbox.cpus": 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if sc := cfg.SandboxConfig(); sc.CgroupParent != "/toolcage.slice/sandboxes" || sc.CPUs != 0.5 {
		t.Fatalf("sandbox config %+v", sc)
	}
	def, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if sc := def.SandboxConfig(); sc.CgroupParent != "" || sc.CPUs != 1 {
		t.Fatalf("default sandbox config: cgroup parent %q, cpus %v", sc.CgroupParent, sc.CPUs)
	}
	for _, tt := range []struct {
		key  string
		val  any
		want string
	}{
		{"sandbox.cgroup_parent", "toolcage.slice", "sandbox.cgroup_parent"},
		{"sandbox.cgroup_parent", "/a/../b", "sandbox.cgroup_parent"},
		{"sandbox.cgroup_parent", "/", "sandbox.cgroup_parent"},
		{"sandbox.cpus", 0, "sandbox.cpus"},
		{"sandbox.cpus", -1, "sandbox.cpus"},
		{"sandbox.cpus", 5000, "sandbox.cpus"},
	} {
		_, err := Load("", map[string]any{tt.key: tt.val})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s = %v: %v, want an error naming %s", tt.key, tt.val, err, tt.want)
		}
	}
}
