// Package shell is the daemon's side of shell tools: the shell: block
// (command template, environment, work dir), its checks, and the argv or
// `sh -c` command of one call, checked against the deny rules.
package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/mounts"
	"github.com/toolcage/toolcage/policy/repocode"
	"github.com/toolcage/toolcage/policy/shellsyntax"
	"github.com/toolcage/toolcage/policy/template"
	"github.com/toolcage/toolcage/toolspec"
)

// Kind is the shell kind.
type Kind struct{}

// Name is "shell".
func (Kind) Name() toolspec.Kind { return toolspec.Shell }

// Decode reads a shell: block.
func (Kind) Decode(raw json.RawMessage) (kind.Spec, error) { return kind.DecodeSpec[Spec](raw) }

// Required is the problem of a shell tool with no block.
func (Kind) Required() kind.Problem {
	return kind.Problem{Field: "shell.command", Message: "is required"}
}

// ResetAfterCall is true: a command can leave processes and files behind,
// and nothing of one call may reach the next.
func (Kind) ResetAfterCall() bool { return true }

// Spec is the body of a shell tool.
type Spec struct {
	Command string            `json:"command"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"dir,omitempty"`
}

// Normalize does nothing: a shell block has no defaults.
func (s *Spec) Normalize() {}

// Effects: a command may change anything its sandbox lets it touch; the
// network is its permissions' to say.
func (s *Spec) Effects() kind.Effects { return kind.Effects{Destructive: true} }

// Validate checks the block's fields.
func (s *Spec) Validate(kind.Tool) []kind.Problem {
	if strings.TrimSpace(s.Command) == "" {
		return []kind.Problem{{Field: "shell.command", Message: "is required"}}
	}
	return nil
}

// Check refuses a template whose placeholders stand where a value could
// change the command's shape, a relative dir, and bad env templates.
func (s *Spec) Check(kind.Tool) error {
	if err := template.ValidateShell(s.Command); err != nil {
		return &kind.FieldError{Field: "shell.command", Err: err}
	}
	if d := s.Dir; d != "" && !filepath.IsAbs(d) {
		return &kind.FieldError{Field: "shell.dir", Err: errors.New("must be an absolute path")}
	}
	for k, v := range s.Env {
		if err := template.ValidateShellEnv(k, v); err != nil {
			return &kind.FieldError{Field: "shell.env." + k, Err: err}
		}
	}
	return nil
}

// Parameters follow from the command's placeholders when a definition
// gives none: each is required and may be any JSON value, as a call
// could give before a schema was written.
func (s *Spec) Parameters() (json.RawMessage, error) {
	t, err := template.Parse(s.Command)
	if err != nil {
		return nil, err
	}
	props := map[string]struct{}{}
	vars := t.Vars()
	for _, v := range vars {
		props[v] = struct{}{}
	}
	return json.Marshal(struct {
		Type       string              `json:"type"`
		Properties map[string]struct{} `json:"properties"`
		Required   []string            `json:"required,omitempty"`
	}{"object", props, vars})
}

// NeededArgs are the command's placeholders: a missing one would drop a
// word and shift the others into different roles. The env templates'
// are not: an absent value sets the variable to "".
func (s *Spec) NeededArgs() []kind.NeededArg {
	t, err := template.Parse(s.Command)
	if err != nil {
		return nil // Check reports it
	}
	var out []kind.NeededArg
	for _, v := range t.Vars() {
		out = append(out, kind.NeededArg{Name: v, Field: "shell.command"})
	}
	return out
}

// Compile compiles the command and the env templates.
func (s *Spec) Compile(t kind.Tool) (kind.Compiled, error) {
	c := &Compiled{spec: s, Env: make(map[string]*template.Template, len(s.Env))}
	var err error
	if c.Command, err = template.CompileShell(s.Command); err != nil {
		return nil, &kind.FieldError{Field: "shell.command", Err: err}
	}
	for k, v := range s.Env {
		if c.Env[k], err = template.Parse(v); err != nil {
			return nil, &kind.FieldError{Field: "shell.env." + k, Err: err}
		}
	}
	if t.Has("filesystem") {
		return workspaceCompiled{c}, nil
	}
	return c, nil
}

// Compiled is a shell block ready for calls.
type Compiled struct {
	spec *Spec
	// Command is the compiled command; Env the env templates.
	Command *template.CompiledShell
	Env     map[string]*template.Template
}

// Templated: a shell call can be shown without running it.
func (c *Compiled) Templated() {}

// Secrets are those the command and the env templates use.
func (c *Compiled) Secrets(kind.Tool) ([]string, bool) {
	var out []string
	add := func(names []string) {
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	add(c.Command.Template().Secrets())
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		add(c.Env[k].Secrets())
	}
	return out, false
}

// Build refuses a network shell tool the config does not name, renders
// the command (each value one argv word, or single-quoted for `sh -c`),
// checks it against the deny rules and renders the environment.
func (c *Compiled) Build(_ context.Context, call *kind.Call, req *kind.Request) (*kind.Built, error) {
	t := call.Tool
	if !call.Env.Preview && !policy.ShellNetworkAllowed(t.Name, t.Has("network"), call.Env.NetworkShellTools) {
		return nil, errdefs.Errorf(errdefs.PolicyDenied,
			"shell tool %q holds the network permission, which the config must grant by name (sandbox.network_shell_tools): a shell command's sockets pass no network guard", t.Name)
	}
	args, err := call.DecodeArgs()
	if err != nil {
		return nil, err
	}
	r, err := c.Command.Render(args, template.ShellOptions{AllowDash: call.AllowDash, Secrets: call.Secret})
	if err != nil {
		return nil, kind.RenderError(err)
	}
	if r.Mode == template.ShellModeArgv {
		err = call.Env.ShellRules.CheckArgv(r.Argv)
	} else {
		err = call.Env.ShellRules.CheckCommand(r.Command)
	}
	if err != nil {
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	env := make(map[string]string, len(c.Env))
	for k, tpl := range c.Env {
		// Environment values never pass through a shell's parser: placed
		// verbatim, one variable each.
		v, err := tpl.Render(args, template.RenderOptions{AllowMissing: true, Secrets: call.Secret})
		if err != nil {
			return nil, kind.RenderError(err)
		}
		// A variable that programs run (GIT_SSH_COMMAND, PAGER...) is
		// checked like the command it is.
		if shellsyntax.EnvRuns(k) {
			if err := call.Env.ShellRules.CheckCommand(shellsyntax.EnvCommand(k, v)); err != nil {
				return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: fmt.Errorf("env %s: %w", k, err)}
			}
		}
		env[k] = v
	}
	if t.Has("filesystem") {
		// git in the person's workspace: the workspace marked safe (the
		// sandbox's user may not own it), the programs the repository's
		// settings name switched off (repocode.Env, after the tool's own).
		env = repocode.Env(env, mounts.Workspace)
	}
	req.Shell = &toolspec.ShellCall{Argv: r.Argv, Command: r.Command, Env: env, Dir: c.spec.Dir}
	return &kind.Built{}, nil
}

// Interface guards.
var (
	_ kind.Kind          = Kind{}
	_ kind.Spec          = (*Spec)(nil)
	_ kind.ArgNeeder     = (*Spec)(nil)
	_ kind.Parameterizer = (*Spec)(nil)
	_ kind.Templated     = (*Compiled)(nil)
)
