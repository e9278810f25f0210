package shell

import (
	"log/slog"
	"regexp"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/repocode"
	"github.com/toolcage/toolcage/policy/shellguard"
	"github.com/toolcage/toolcage/policy/template"
)

// workspaceCompiled is a shell tool holding filesystem: git it runs in
// the workspace runs with the programs settings name switched off
// (Build), and a call is held for a person when the workspace
// repository's configuration names a program no setting switches off
// (diff.external, a filter, diff or merge driver), as the exec toolset's
// calls are. No one approved the tool for what a repository says.
type workspaceCompiled struct{ *Compiled }

// mentionsGit: the command may run git (a word git, or git-NAME).
var mentionsGit = regexp.MustCompile(`(^|[^A-Za-z0-9_.-])git($|[^A-Za-z0-9_.])`)

// CallApproval holds the call when git would run such a program, and
// when the command would destroy work in a writable workspace (the shell
// rules' ask groups, under the worker's protect: ask; blocked refuses it).
func (c workspaceCompiled) CallApproval(call *kind.Call) (string, error) {
	ask, err := c.protected(call)
	if err != nil {
		return "", err
	}
	if ask != nil {
		slog.Info("shell: held for a person", "tool", call.Tool.Name, "reason", ask.Error())
		return policy.ApprovalAsk, nil
	}
	if call.Workspace == "" || !mentionsGit.MatchString(c.spec.Command) {
		return policy.ApprovalPreApproved, nil
	}
	// Aliases run only when the command names one: the person wrote it.
	if why := repocode.Held(call.Workspace, repocode.Dir(call.Workspace, c.spec.Dir), nil); why != "" {
		slog.Info("shell: held for a person", "tool", call.Tool.Name, "reason", why)
		return policy.ApprovalAsk, nil
	}
	return policy.ApprovalPreApproved, nil
}

// protected renders the command as Build does and checks it with the ask
// rules on, where the call sees a writable workspace whose work is
// protected. A secret's value is not known before the call runs: a
// stand-in takes its place (Build checks the real rendering against the
// deny rules).
func (c workspaceCompiled) protected(call *kind.Call) (*shellguard.AskError, error) {
	if call.Protect == "" || call.Protect == policy.ProtectOff {
		return nil, nil
	}
	args, err := call.DecodeArgs()
	if err != nil {
		return nil, err
	}
	r, err := c.Command.Render(args, template.ShellOptions{AllowDash: call.AllowDash, Secrets: func(string) (string, error) { return "secret", nil }})
	if err != nil {
		return nil, kind.RenderError(err)
	}
	if r.Mode == template.ShellModeArgv {
		return call.CheckShell("", r.Argv)
	}
	return call.CheckShell(r.Command, nil)
}

var _ kind.CallApprover = workspaceCompiled{}
