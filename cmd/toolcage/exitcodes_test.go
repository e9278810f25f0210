package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/executors"
)

func TestExitCode(t *testing.T) {
	apiErr := func(code executors.Code) error {
		return &api.Error{Status: 400, ErrorDetail: api.ErrorDetail{Code: code, Message: "m"}}
	}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"tool reported an error", toolError(&api.CallResponse{Tool: "x", IsError: true}), 1},
		{"timeout", apiErr(executors.CodeTimeout), 1},
		{"limit_exceeded", apiErr(executors.CodeLimitExceeded), 1},
		{"executor_failed", apiErr(executors.CodeExecutorFailed), 1},
		{"tool_not_found", apiErr(executors.CodeToolNotFound), 1},
		{"conflict", apiErr(executors.CodeConflict), 1},
		{"unavailable", apiErr(executors.CodeUnavailable), 1},
		{"internal", apiErr(executors.CodeInternal), 1},
		{"unknown future code", apiErr("brand_new_code"), 1},
		{"daemon unreachable", fmt.Errorf("%w at /x.sock: dial: refused", api.ErrDaemonUnreachable), 1},
		{"plain error", errors.New("boom"), 1},
		{"invalid_arguments", apiErr(executors.CodeInvalidArguments), 2},
		{"invalid_definition", apiErr(executors.CodeInvalidDefinition), 2},
		{"invalid_request", apiErr(executors.CodeInvalidRequest), 2},
		{"usage error", usageErrorf(cli.NewContext(&cli.App{Name: "toolcage"}, nil, nil), "bad flag"), 2},
		{"unreadable file", inputErrorf("x.yaml: no such file or directory"), 2},
		{"local invalid arguments", codedErrorf(executors.CodeInvalidArguments, "bad"), 2},
		{"local invalid definition", &catalog.ValidationError{Problems: []catalog.Problem{{Field: "name", Message: "is required"}}}, 2},
		{"policy_denied", apiErr(executors.CodePolicyDenied), 3},
		{"approval_required", apiErr(executors.CodeApprovalRequired), 3},
		{"approval_denied", apiErr(executors.CodeApprovalDenied), 3},
		{"rate_limited", apiErr(executors.CodeRateLimited), 3},
		{"forbidden", apiErr(executors.CodeForbidden), 3},
		{"tool_not_active", apiErr(executors.CodeToolNotActive), 3},
		{"wrapped api error", fmt.Errorf("calling: %w", apiErr(executors.CodePolicyDenied)), 3},
		{"executors error", executors.Errorf(executors.CodeRateLimited, "slow down"), 3},
		{"cli.Exit", cli.Exit("bad config", 2), 2},
		{"context canceled", context.Canceled, 1},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("%s: exitCode(%v) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
	// Every stable code maps somewhere deliberate.
	for _, c := range []executors.Code{
		executors.CodeToolNotFound, executors.CodeInvalidArguments, executors.CodeInvalidDefinition,
		executors.CodeInvalidRequest, executors.CodeConflict, executors.CodeForbidden, executors.CodeToolNotActive,
		executors.CodePolicyDenied, executors.CodeRateLimited, executors.CodeApprovalRequired,
		executors.CodeApprovalDenied, executors.CodeTimeout, executors.CodeLimitExceeded,
		executors.CodeExecutorFailed, executors.CodeUnavailable, executors.CodeInternal,
	} {
		if got := codeExit(c); got < 1 || got > 3 {
			t.Errorf("codeExit(%s) = %d", c, got)
		}
	}
}
