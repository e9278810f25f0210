package shell

import (
	"log/slog"
	"regexp"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/repocode"
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

// CallApproval holds the call when git would run such a program.
func (c workspaceCompiled) CallApproval(call *kind.Call) (string, error) {
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

var _ kind.CallApprover = workspaceCompiled{}
