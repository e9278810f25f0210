// Package exec is the exec toolset: one tool, exec, that runs a command
// line in the worker's workspace under the worker's rules
// (toolsets.exec.rules: [{pattern, approval}], policy/execrules), after
// the global deny rules. It is an exec tool (daemon/kind/exec) run by the
// shell executor with the shell tools' sandbox, caps and timeouts.
package exec

import (
	"encoding/json"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	kexec "github.com/toolcage/toolcage/daemon/kind/exec"
	"github.com/toolcage/toolcage/daemon/toolset"
	"github.com/toolcage/toolcage/policy/execrules"
	"github.com/toolcage/toolcage/policy/mounts"
)

// Settings are what a worker file may write under toolsets.exec.
type Settings struct {
	Rules []execrules.Rule `json:"rules,omitempty"`
}

func decode(raw json.RawMessage) (Settings, error) {
	var s Settings
	if err := kind.DecodeStrict(raw, &s); err != nil {
		return s, err
	}
	if _, err := execrules.Compile(s.Rules); err != nil {
		return s, err
	}
	return s, nil
}

// Toolset is the exec toolset.
var Toolset = toolset.New("exec", "run a command line in the worker's workspace, each command it runs approved by the worker's rules", decode, tools)

func tools(w toolset.Worker, s Settings) ([]*catalog.Definition, error) {
	desc := "Run a shell command line"
	block := map[string]any{"rules": s.Rules}
	perms := []string{}
	if w.Workspace != "" {
		desc += " in the workspace (/workspace, the working directory)"
		block["dir"] = mounts.Workspace
		perms = append(perms, "filesystem")
	}
	desc += ". Each command it runs is checked against the deny rules and approved by the worker's rules: a command no rule names waits for a person, and so does an option no rule names that writes a file or names a program (git log --output=FILE, git -c core.pager=...). Returns exit_code, stdout and stderr."
	def := map[string]any{
		"name": "exec", "description": desc, "kind": kexec.Name, "category": "Shell",
		"permissions": perms,
		"parameters": map[string]any{"type": "object", "additionalProperties": false, "required": []string{"command"},
			"properties": map[string]any{"command": map[string]any{"type": "string", "minLength": 1, "maxLength": kexec.MaxCommandBytes,
				"description": "the command line, as sh -c runs it"}}},
		"exec": block,
	}
	d, err := toolset.Define(def)
	if err != nil {
		return nil, err
	}
	return []*catalog.Definition{d}, nil
}
