package executors

import (
	"errors"
	"fmt"
)

// Code is a stable error code, shared by the socket API, the CLI and the
// executor wire protocol. Callers branch on codes, never on messages.
type Code string

// The stable codes. Their strings are part of the public API.
const (
	CodeToolNotFound      Code = "tool_not_found"
	CodeNotFound          Code = "not_found" // a named thing other than a tool (a secret)
	CodeInvalidArguments  Code = "invalid_arguments"
	CodeInvalidDefinition Code = "invalid_definition"
	CodeInvalidRequest    Code = "invalid_request"
	CodeConflict          Code = "conflict"
	CodeForbidden         Code = "forbidden"
	CodeToolNotActive     Code = "tool_not_active"
	CodePolicyDenied      Code = "policy_denied"
	CodeRateLimited       Code = "rate_limited"
	CodeApprovalRequired  Code = "approval_required"
	CodeApprovalDenied    Code = "approval_denied"
	CodeTimeout           Code = "timeout"
	CodeLimitExceeded     Code = "limit_exceeded"
	CodeExecutorFailed    Code = "executor_failed"
	CodeUnavailable       Code = "unavailable"
	CodeInternal          Code = "internal"
)

// The limits a call can break, recorded in Error.Limit and in the audit log.
const (
	LimitTimeout  = "timeout"
	LimitMemory   = "memory"
	LimitOutput   = "output"
	LimitRequests = "requests"
	LimitPids     = "pids"
	LimitFileSize = "file_size"
	// LimitDepth is nesting too deep to handle safely: code, JSON
	// arguments, parsed or serialised values.
	LimitDepth = "depth"
)

// Error is an error with a stable code. Op names what was being done, Limit
// which limit was broken (for timeout and limit_exceeded).
type Error struct {
	Code  Code
	Op    string
	Limit string
	Err   error
}

// Errorf returns an *Error with code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// LimitError returns a limit_exceeded (or timeout) error naming the limit.
func LimitError(limit string, format string, args ...any) *Error {
	code := CodeLimitExceeded
	if limit == LimitTimeout {
		code = CodeTimeout
	}
	return &Error{Code: code, Limit: limit, Err: fmt.Errorf(format, args...)}
}

func (e *Error) Error() string {
	msg := string(e.Code)
	if e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Op != "" {
		return e.Op + ": " + msg
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the code of the first *Error in err's chain, CodeInternal
// for any other non-nil error, and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// LimitOf returns the broken limit recorded in err's chain, if any.
func LimitOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Limit
	}
	return ""
}

// ErrPluginShutdown is returned when the executor process went away.
var ErrPluginShutdown = &Error{Code: CodeExecutorFailed, Err: errors.New("executor process exited")}
