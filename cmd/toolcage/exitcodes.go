package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
)

// Exit statuses. Scripts branch on them: a refusal (3) is not a failure (1).
const (
	exitOK          = 0
	exitFailure     = 1 // the tool or the daemon failed, or the daemon is unreachable
	exitUsage       = 2 // bad flags, file, definition or arguments: fix the command
	exitRefused     = 3 // policy said no: denied, needs approval, rate limited, not active
	exitInterrupted = 130
)

// exitCode maps an error to the exit status.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ce *cliError
	if errors.As(err, &ce) {
		return ce.exit
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		return codeExit(ae.Code)
	}
	if errors.Is(err, api.ErrDaemonUnreachable) {
		return exitFailure
	}
	var ve *catalog.ValidationError
	if errors.As(err, &ve) {
		return exitUsage
	}
	var ee *errdefs.Error
	if errors.As(err, &ee) {
		return codeExit(ee.Code)
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return exitFailure
}

// codeExit maps a stable API code to the exit status.
func codeExit(code errdefs.Code) int {
	switch code {
	case errdefs.InvalidArguments, errdefs.InvalidDefinition, errdefs.InvalidRequest:
		return exitUsage
	case errdefs.PolicyDenied, errdefs.ApprovalRequired, errdefs.ApprovalDenied,
		errdefs.RateLimited, errdefs.Forbidden, errdefs.ToolNotActive, errdefs.Unauthorized:
		return exitRefused
	}
	// tool_not_found, conflict, timeout, limit_exceeded, executor_failed,
	// unavailable, internal and any code this CLI does not know yet.
	return exitFailure
}
