package kind

import (
	"errors"
	"fmt"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/policy"
	"github.com/toolcage/toolcage/policy/shellguard"
)

// CheckShell checks a command a call would run, at approval: the shell
// deny rules, and where the call sees a writable workspace whose work is
// protected (Protect ask or blocked) the ask rules too. A deny rule's
// refusal, or an ask rule's under protect: blocked, is a PolicyDenied
// error; under protect: ask the ask rule that matched is returned, for
// the caller to hold the call for a person. argv non-nil checks an
// argument vector run without a shell, else command as sh -c text.
//
// Build checks the deny rules alone: a call that got here was allowed,
// by a person where an ask rule matched.
func (c *Call) CheckShell(command string, argv []string) (*shellguard.AskError, error) {
	rs := c.Env.ShellRules
	protect := c.Protect == policy.ProtectAsk || c.Protect == policy.ProtectBlocked
	var err error
	switch {
	case argv != nil && protect:
		err = rs.CheckArgvProtected(argv)
	case argv != nil:
		err = rs.CheckArgv(argv)
	case protect:
		err = rs.CheckCommandProtected(command)
	default:
		err = rs.CheckCommand(command)
	}
	var ask *shellguard.AskError
	switch {
	case err == nil:
		return nil, nil
	case !errors.As(err, &ask):
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	case c.Protect == policy.ProtectBlocked:
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: fmt.Errorf("%s/%s: %s (in %q), which the worker's protect: blocked refuses", ask.Group, ask.Rule, ask.Description, ask.Segment)}
	}
	return ask, nil
}
