package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestConfigErrors: a bad config file is refused with the file's name and
// each offending key, dotted as the file nests it.
func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown top-level key", "bogus: 1\n", `unknown key "bogus"`},
		{"unknown nested keys", "log:\n  bogus: 1\n  other: 2\n", `unknown key "log.bogus"; unknown key "log.other"`},
		{"unknown deep key", "sandbox:\n  require:\n    nope: true\n", `unknown key "sandbox.require.nope"`},
		{"bad duration", "shutdown_timeout: soon\n", `shutdown_timeout: want a duration like "30s" or "5m"`},
		{"bad int", "api:\n  max_connections: many\n", `api.max_connections: want a whole number, got "many"`},
		{"list for int", "rate_limits:\n  concurrency: [1]\n", `rate_limits.concurrency: want a whole number, got a list`},
		{"bad bool", "sandbox:\n  require:\n    cgroup: maybe\n", `sandbox.require.cgroup: want true or false, got "maybe"`},
		{"bad value", "log:\n  level: loud\n", `log.level: unknown level "loud"`},
		{"not YAML", "a: [1\n", `yaml: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "bad.yaml")
			if err := os.WriteFile(file, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(file, nil)
			want := "config " + file + ": " + tt.want
			if err == nil || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
				t.Errorf("got  %v\nwant %s…", err, want)
			}
		})
	}
	// Without a file, the problem is in a flag or the environment.
	if _, err := Load("", map[string]any{"api.max_connections": "x"}); err == nil || err.Error() != `config: api.max_connections: want a whole number, got "x"` {
		t.Errorf("override: %v", err)
	}
}
