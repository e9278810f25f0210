// Package exec is the daemon's side of the exec toolset's tool: a command
// line (argument command) run by the shell executor in the workspace,
// under the worker's rules (policy/execrules) after the global deny rules
// (policy/shellguard). The rules decide each call's approval from every
// command the line runs; the deny rules still refuse first, whatever a
// rule says. The kind is toolset only: no definition outside the exec
// toolset may name it.
package exec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/execrules"
	"github.com/toolcage/toolcage/policy/mounts"
	"github.com/toolcage/toolcage/policy/repocode"
	"github.com/toolcage/toolcage/toolspec"
)

// Name is the kind's name, and the key of its block.
const Name toolspec.Kind = "exec"

// Kind is the exec kind.
type Kind struct{}

// Name is "exec".
func (Kind) Name() toolspec.Kind { return Name }

// ToolsetOnly: only the exec toolset writes exec tools.
func (Kind) Toolset() string { return "exec" }

// ExecutorKind: the shell executor runs the command, with the shell
// tools' sandbox, caps and timeouts.
func (Kind) Executor() toolspec.Kind { return toolspec.Shell }

// Decode reads an exec: block.
func (Kind) Decode(raw json.RawMessage) (kind.Spec, error) { return kind.DecodeSpec[Spec](raw) }

// Required is the problem of an exec tool with no block.
func (Kind) Required() kind.Problem { return kind.Problem{Field: "exec", Message: "is required"} }

// ResetAfterCall is true, as for shell tools: a command can leave
// processes and files behind.
func (Kind) ResetAfterCall() bool { return true }

// Spec is the body of an exec tool: the worker's rules and the directory
// commands run in.
type Spec struct {
	Rules []execrules.Rule `json:"rules,omitempty"`
	Dir   string           `json:"dir,omitempty"`
}

// Normalize does nothing.
func (s *Spec) Normalize() {}

// Validate checks the rules and the directory.
func (s *Spec) Validate(kind.Tool) []kind.Problem {
	var ps []kind.Problem
	if _, err := execrules.Compile(s.Rules); err != nil {
		ps = append(ps, kind.Problem{Field: "exec.rules", Message: err.Error()})
	}
	if s.Dir != "" && (!filepath.IsAbs(s.Dir) || filepath.Clean(s.Dir) != s.Dir) {
		ps = append(ps, kind.Problem{Field: "exec.dir", Message: "must be an absolute, clean path"})
	}
	return ps
}

// Effects: a command may change anything the sandbox lets it touch, as
// a shell tool's; the filesystem permission is the workspace it runs in.
// It holds no network.
func (s *Spec) Effects() kind.Effects {
	return kind.Effects{Destructive: true, Holds: []string{"filesystem"}}
}

// Check has nothing to add to Validate.
func (s *Spec) Check(kind.Tool) error { return nil }

// Compile compiles the rules.
func (s *Spec) Compile(kind.Tool) (kind.Compiled, error) {
	rs, err := execrules.Compile(s.Rules)
	if err != nil {
		return nil, &kind.FieldError{Field: "exec.rules", Err: err}
	}
	return &Compiled{spec: s, rules: rs}, nil
}

// Compiled is an exec block ready for calls.
type Compiled struct {
	spec  *Spec
	rules *execrules.Rules
}

// Secrets: an exec tool uses none.
func (c *Compiled) Secrets(kind.Tool) ([]string, bool) { return nil, false }

// MaxCommandBytes bounds the command argument (the deny rules' own bound).
const MaxCommandBytes = 64 << 10

func command(call *kind.Call) (string, error) {
	var a struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return "", &errdefs.Error{Code: errdefs.InvalidArguments, Err: errors.New("arguments: " + err.Error())}
	}
	switch {
	case strings.TrimSpace(a.Command) == "":
		return "", errdefs.Errorf(errdefs.InvalidArguments, "command is empty")
	case len(a.Command) > MaxCommandBytes:
		return "", errdefs.Errorf(errdefs.InvalidArguments, "command is longer than %d bytes", MaxCommandBytes)
	}
	return a.Command, nil
}

// CallApproval decides the call from the worker's rules: the strictest
// over every command the line runs, ask where no rule speaks. The deny
// rules come first: a command they refuse is refused here already, so no
// one is asked to approve what could never run. A command that destroys
// work in a writable workspace (the ask rules: git reset --hard, rm -r)
// is held for a person whatever the worker's rules say (protect: ask),
// or refused (protect: blocked).
func (c *Compiled) CallApproval(call *kind.Call) (string, error) {
	cmd, err := command(call)
	if err != nil {
		return "", err
	}
	ask, err := call.CheckShell(cmd, nil)
	if err != nil {
		return "", err
	}
	d, err := c.rules.Decide(cmd)
	if err != nil {
		return "", &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	for _, s := range d.Segments {
		if s.Approval == policy.ApprovalBlocked {
			return "", errdefs.Errorf(errdefs.PolicyDenied, "exec: %q is blocked by the worker's rule %q", s.Text, s.Rule)
		}
	}
	if ask != nil && d.Approval != policy.ApprovalBlocked {
		slog.Info("exec: held for a person", "tool", call.Tool.Name, "reason", ask.Error())
		return policy.ApprovalAsk, nil
	}
	if d.Approval == policy.ApprovalPreApproved {
		if why := c.repoPrograms(call, d); why != "" {
			slog.Info("exec: held for a person", "tool", call.Tool.Name, "reason", why)
			return policy.ApprovalAsk, nil
		}
	}
	return d.Approval, nil
}

// repoPrograms says why git run by the call would run a program the
// repository's configuration names that the git environment does not
// switch off (repocode.Scan: diff.external, a filter, diff or merge
// driver, an alias the command uses), or "". No rule speaks for a
// program only the repository names: a person decides.
func (c *Compiled) repoPrograms(call *kind.Call, d execrules.Decision) string {
	if call.Workspace == "" {
		return ""
	}
	subs := map[string]bool{}
	for _, s := range d.Segments {
		if s.Program == "git" {
			subs[s.Subcommand] = true
		}
	}
	if len(subs) == 0 {
		return ""
	}
	return repocode.Held(call.Workspace, repocode.Dir(call.Workspace, c.spec.Dir), func(a string) bool { return subs[a] })
}

// Build checks the command against the deny rules and hands it to the
// shell executor as sh -c text, in the workspace.
func (c *Compiled) Build(_ context.Context, call *kind.Call, req *kind.Request) (*kind.Built, error) {
	cmd, err := command(call)
	if err != nil {
		return nil, err
	}
	if err := call.Env.ShellRules.CheckCommand(cmd); err != nil {
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	}
	if _, err := c.rules.Decide(cmd); err != nil {
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: fmt.Errorf("exec: %w", err)}
	}
	// git runs with the programs its settings name switched off, and
	// the workspace marked safe (repocode.Env): the sandbox's user may
	// not own the person's repository.
	req.Shell = &toolspec.ShellCall{Command: cmd, Dir: c.spec.Dir, Env: repocode.Env(nil, mounts.Workspace)}
	return &kind.Built{}, nil
}

// Interface guards.
var (
	_ kind.ToolsetOnly  = Kind{}
	_ kind.RunsOn       = Kind{}
	_ kind.Spec         = (*Spec)(nil)
	_ kind.Effecter     = (*Spec)(nil)
	_ kind.CallApprover = (*Compiled)(nil)
)
