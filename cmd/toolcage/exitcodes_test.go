package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/toolcage/toolcage/daemon/api"
	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/errdefs"
)

func TestExitCode(t *testing.T) {
	apiErr := func(code errdefs.Code) error {
		return &api.Error{Status: 400, ErrorDetail: api.ErrorDetail{Code: code, Message: "m"}}
	}
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"tool reported an error", toolError(&api.CallResponse{Tool: "x", IsError: true}), 1},
		{"timeout", apiErr(errdefs.Timeout), 1},
		{"limit_exceeded", apiErr(errdefs.LimitExceeded), 1},
		{"executor_failed", apiErr(errdefs.ExecutorFailed), 1},
		{"tool_not_found", apiErr(errdefs.ToolNotFound), 1},
		{"conflict", apiErr(errdefs.Conflict), 1},
		{"unavailable", apiErr(errdefs.Unavailable), 1},
		{"internal", apiErr(errdefs.Internal), 1},
		{"unknown future code", apiErr("brand_new_code"), 1},
		{"daemon unreachable", fmt.Errorf("%w at /x.sock: dial: refused", api.ErrDaemonUnreachable), 1},
		{"plain error", errors.New("boom"), 1},
		{"invalid_arguments", apiErr(errdefs.InvalidArguments), 2},
		{"invalid_definition", apiErr(errdefs.InvalidDefinition), 2},
		{"invalid_request", apiErr(errdefs.InvalidRequest), 2},
		{"usage error", usageErrorf(cli.NewContext(&cli.App{Name: "toolcage"}, nil, nil), "bad flag"), 2},
		{"unreadable file", inputErrorf("x.yaml: no such file or directory"), 2},
		{"local invalid arguments", codedErrorf(errdefs.InvalidArguments, "bad"), 2},
		{"local invalid definition", &catalog.ValidationError{Problems: []catalog.Problem{{Field: "name", Message: "is required"}}}, 2},
		{"policy_denied", apiErr(errdefs.PolicyDenied), 3},
		{"approval_required", apiErr(errdefs.ApprovalRequired), 3},
		{"approval_denied", apiErr(errdefs.ApprovalDenied), 3},
		{"rate_limited", apiErr(errdefs.RateLimited), 3},
		{"forbidden", apiErr(errdefs.Forbidden), 3},
		{"unauthorized", apiErr(errdefs.Unauthorized), 3},
		{"tool_not_active", apiErr(errdefs.ToolNotActive), 3},
		{"wrapped api error", fmt.Errorf("calling: %w", apiErr(errdefs.PolicyDenied)), 3},
		{"executors error", errdefs.Errorf(errdefs.RateLimited, "slow down"), 3},
		{"cli.Exit", cli.Exit("bad config", 2), 2},
		{"context canceled", context.Canceled, 1},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("%s: exitCode(%v) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
	// Every stable code maps somewhere deliberate.
	for _, c := range []errdefs.Code{
		errdefs.ToolNotFound, errdefs.InvalidArguments, errdefs.InvalidDefinition,
		errdefs.InvalidRequest, errdefs.Conflict, errdefs.Forbidden, errdefs.ToolNotActive,
		errdefs.PolicyDenied, errdefs.RateLimited, errdefs.ApprovalRequired,
		errdefs.ApprovalDenied, errdefs.Timeout, errdefs.LimitExceeded,
		errdefs.ExecutorFailed, errdefs.Unavailable, errdefs.Internal, errdefs.Unauthorized,
	} {
		if got := codeExit(c); got < 1 || got > 3 {
			t.Errorf("codeExit(%s) = %d", c, got)
		}
	}
}
