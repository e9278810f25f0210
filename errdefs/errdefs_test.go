package errdefs

import (
	"errors"
	"fmt"
	"testing"
)

func TestCodeOfAndLimitOf(t *testing.T) {
	wrapped := fmt.Errorf("running: %w", LimitError(LimitOutput, "output over %d bytes", 10))
	tests := []struct {
		name  string
		err   error
		code  Code
		limit string
		msg   string
	}{
		{"nil", nil, "", "", ""},
		{"plain error", errors.New("boom"), Internal, "", "boom"},
		{"coded", Errorf(PolicyDenied, "host %q not allowed", "x"), PolicyDenied, "", `host "x" not allowed`},
		{"wrapped limit", wrapped, LimitExceeded, LimitOutput, "running: output over 10 bytes"},
		{"timeout limit", LimitError(LimitTimeout, "took too long"), Timeout, LimitTimeout, "took too long"},
		{"op and no cause", &Error{Code: ExecutorFailed, Op: "execute"}, ExecutorFailed, "", "execute: executor_failed"},
		{"op and cause", &Error{Code: Unavailable, Op: "dial", Err: errors.New("refused")}, Unavailable, "", "dial: refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CodeOf(tt.err); got != tt.code {
				t.Errorf("CodeOf = %q, want %q", got, tt.code)
			}
			if got := LimitOf(tt.err); got != tt.limit {
				t.Errorf("LimitOf = %q, want %q", got, tt.limit)
			}
			if tt.err != nil && tt.err.Error() != tt.msg {
				t.Errorf("Error() = %q, want %q", tt.err.Error(), tt.msg)
			}
			if tt.err != nil && !Is(tt.err, Conflict, tt.code) {
				t.Errorf("Is(err, conflict, %q) = false", tt.code)
			}
			if Is(tt.err, ToolNotActive) {
				t.Errorf("Is(err, tool_not_active) = true")
			}
		})
	}
}

func TestUnwrap(t *testing.T) {
	cause := errors.New("cause")
	if err := (&Error{Code: Internal, Err: cause}); !errors.Is(err, cause) {
		t.Fatalf("errors.Is through *Error failed")
	}
}

// The strings are the public API: clients and scripts match on them.
func TestCodeStrings(t *testing.T) {
	want := []string{"tool_not_found", "not_found", "invalid_arguments", "invalid_definition",
		"invalid_request", "conflict", "forbidden", "tool_not_active", "policy_denied",
		"rate_limited", "approval_required", "approval_denied", "timeout", "limit_exceeded",
		"executor_failed", "unavailable", "internal", "unauthorized"}
	if len(Codes) != len(want) {
		t.Fatalf("%d codes, want %d", len(Codes), len(want))
	}
	for i, c := range Codes {
		if string(c) != want[i] {
			t.Errorf("code %d = %q, want %q", i, c, want[i])
		}
	}
}
