package store

import "errors"

// Sentinel errors. Every error the store returns wraps at most one of them, so
// callers test with errors.Is.
var (
	// ErrNotFound means the tool, version or record asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict means the write would duplicate a unique key: a tool name,
	// a (tool, version) pair or an execution ID.
	ErrConflict = errors.New("conflict")
	// ErrInvalid means the value handed to the store cannot be stored as is:
	// a missing name, malformed JSON, a time outside the range the store keeps.
	ErrInvalid = errors.New("invalid value")
	// ErrLimit means the write would break a cap the caller set (a
	// worker's number of state keys, a value's size).
	ErrLimit = errors.New("over the limit")
	// ErrClosed means the Store has been closed.
	ErrClosed = errors.New("store closed")
)
