// Package errdefs holds toolcage's error vocabulary: the stable error codes
// and the *Error that carries one. Every layer imports it; the HTTP status is
// chosen at the API edge (daemon) and the exit status in the CLI, never here.
package errdefs

import (
	"errors"
	"fmt"
)

// Code is a stable error code, shared by the socket API, the CLI and the
// executor wire protocol. Callers branch on codes, never on messages.
type Code string

// The stable codes. Their strings are part of the public API.
const (
	ToolNotFound      Code = "tool_not_found"
	NotFound          Code = "not_found" // a named thing other than a tool (a secret)
	InvalidArguments  Code = "invalid_arguments"
	InvalidDefinition Code = "invalid_definition"
	InvalidRequest    Code = "invalid_request"
	Conflict          Code = "conflict"
	Forbidden         Code = "forbidden"
	// Unauthorized: a credential was presented (a worker token) that is
	// malformed, unknown or revoked; the three are not told apart.
	Unauthorized     Code = "unauthorized"
	ToolNotActive    Code = "tool_not_active"
	PolicyDenied     Code = "policy_denied"
	RateLimited      Code = "rate_limited"
	ApprovalRequired Code = "approval_required"
	ApprovalDenied   Code = "approval_denied"
	Timeout          Code = "timeout"
	LimitExceeded    Code = "limit_exceeded"
	ExecutorFailed   Code = "executor_failed"
	Unavailable      Code = "unavailable"
	Internal         Code = "internal"
)

// Codes lists every stable code, for tables that must cover them all.
var Codes = []Code{
	ToolNotFound, NotFound, InvalidArguments, InvalidDefinition, InvalidRequest,
	Conflict, Forbidden, ToolNotActive, PolicyDenied, RateLimited,
	ApprovalRequired, ApprovalDenied, Timeout, LimitExceeded, ExecutorFailed,
	Unavailable, Internal, Unauthorized,
}

// The limits a call can break, recorded in Error.Limit and in the audit log.
const (
	LimitTimeout  = "timeout"
	LimitMemory   = "memory"
	LimitOutput   = "output"
	LimitRequests = "requests"
	LimitPids     = "pids"
	LimitFileSize = "file_size"
	LimitDepth    = "depth" // nesting of code, JSON or a result
	// LimitArguments is the size of a call's arguments.
	LimitArguments = "arguments"
	// LimitTools is what a worker's agents keep in the catalog: tools and
	// versions.
	LimitTools = "tools"
)

// LimitNames lists every limit name.
var LimitNames = []string{LimitTimeout, LimitMemory, LimitOutput, LimitRequests, LimitPids, LimitFileSize, LimitDepth,
	LimitArguments, LimitTools}

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
	code := LimitExceeded
	if limit == LimitTimeout {
		code = Timeout
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

// CodeOf returns the code of the first *Error in err's chain, Internal for
// any other non-nil error, and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// LimitOf returns the broken limit recorded in err's chain, if any.
func LimitOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Limit
	}
	return ""
}

// Is reports whether err's code (as CodeOf reads it) is one of codes.
func Is(err error, codes ...Code) bool {
	c := CodeOf(err)
	for _, want := range codes {
		if c == want {
			return true
		}
	}
	return false
}
