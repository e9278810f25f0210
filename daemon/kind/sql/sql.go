// Package sql is the sql kind: the tools of the built-in sql toolset
// (db_sql, db_schema) on the calling worker's own SQLite database
// (store/workerdb, whose authorizer is the guard). Its calls run in the
// daemon (kind.Local): SQLite needs cgo, which the static executor
// cannot link, and a call touches only that worker's file.
package sql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/store/workerdb"
	"github.com/toolcage/toolcage/toolspec"
)

// Name is the kind's name, and its toolset's.
const Name toolspec.Kind = "sql"

// The operations, one per tool.
const (
	OpQuery  = "query"
	OpSchema = "schema"
)

// Kind is the sql kind.
type Kind struct{}

// Name is "sql".
func (Kind) Name() toolspec.Kind { return Name }

// Toolset is "sql": the kind exists only for that toolset.
func (Kind) Toolset() string { return string(Name) }

// Decode reads a sql: block.
func (Kind) Decode(raw json.RawMessage) (kind.Spec, error) { return kind.DecodeSpec[Spec](raw) }

// Required is the problem of a sql tool with no block.
func (Kind) Required() kind.Problem { return kind.Problem{Field: "sql.op", Message: "is required"} }

// ResetAfterCall is false: no executor runs a sql call.
func (Kind) ResetAfterCall() bool { return false }

// Spec is the block of one sql tool.
type Spec struct {
	Op string `json:"op"`
	// QueryTimeout bounds one call's statements (5s when zero).
	QueryTimeout kind.Duration `json:"query_timeout,omitempty"`
	// MaxBytes caps the database file with its temporary tables (100 MB
	// when zero).
	MaxBytes kind.ByteSize `json:"max_bytes,omitempty"`
	// MaxResultBytes caps one read's rows (the daemon's
	// worker_limits.sql_result_bytes when zero).
	MaxResultBytes kind.ByteSize `json:"max_result_bytes,omitempty"`
}

// Limits are the block's caps.
func (s *Spec) Limits() workerdb.Limits {
	return workerdb.Limits{MaxBytes: int64(s.MaxBytes), QueryTimeout: time.Duration(s.QueryTimeout), MaxResultBytes: int64(s.MaxResultBytes)}
}

// Normalize does nothing.
func (s *Spec) Normalize() {}

// Validate checks the operation and the caps.
func (s *Spec) Validate(kind.Tool) []kind.Problem {
	var ps []kind.Problem
	switch s.Op {
	case OpQuery, OpSchema:
	default:
		ps = append(ps, kind.Problem{Field: "sql.op", Message: fmt.Sprintf("unknown operation %q (want query or schema)", s.Op)})
	}
	if s.QueryTimeout < 0 || s.MaxBytes < 0 || s.MaxResultBytes < 0 {
		ps = append(ps, kind.Problem{Field: "sql", Message: "caps must not be negative"})
	}
	return ps
}

// Effects follow the operation: db_schema reads; db_sql runs any
// statement, an UPDATE or a DROP as well as a SELECT. The database
// permission is the worker's own database, which stays on this host.
func (s *Spec) Effects() kind.Effects {
	e := kind.Effects{Holds: []string{"database"}}
	if s.Op == OpSchema {
		e.ReadOnly = true
	} else {
		e.Destructive = true
	}
	return e
}

// Check has nothing more to check.
func (s *Spec) Check(kind.Tool) error { return nil }

// Compile keeps the block.
func (s *Spec) Compile(kind.Tool) (kind.Compiled, error) { return &Compiled{spec: s}, nil }

// Compiled is a sql tool ready for calls.
type Compiled struct{ spec *Spec }

// Secrets: a sql tool uses none.
func (c *Compiled) Secrets(kind.Tool) ([]string, bool) { return nil, false }

// Build leaves the request empty: Run does the work.
func (c *Compiled) Build(context.Context, *kind.Call, *kind.Request) (*kind.Built, error) {
	return &kind.Built{}, nil
}

type args struct {
	SQL    string          `json:"sql"`
	Params json.RawMessage `json:"params"`
}

// Run runs the statement, or reads the schema, on the worker's database.
func (c *Compiled) Run(ctx context.Context, call *kind.LocalCall) (*kind.LocalResult, error) {
	if call.Worker == "" {
		return nil, errdefs.Errorf(errdefs.InvalidRequest, "a database is kept per worker, and this call came through none")
	}
	dbs := call.Env.WorkerDBs
	if dbs == nil {
		return nil, errdefs.Errorf(errdefs.Internal, "sql: no worker databases")
	}
	var a args
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return nil, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err}
	}
	var out any
	var err error
	switch c.spec.Op {
	case OpQuery:
		out, err = dbs.Exec(ctx, call.Worker, a.SQL, a.Params, c.spec.Limits())
	case OpSchema:
		var tables []workerdb.Table
		tables, err = dbs.Schema(ctx, call.Worker, c.spec.Limits())
		out = map[string]any{"tables": tables}
	}
	if err != nil {
		return sqlErr(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &kind.LocalResult{Value: b}, nil
}

// sqlErr gives a guard's refusal its code; an error of the statement
// itself (syntax, a constraint) is the tool's: is_error with SQLite's
// message, which the agent can act on.
func sqlErr(err error) (*kind.LocalResult, error) {
	switch {
	case errors.Is(err, workerdb.ErrDenied):
		return nil, &errdefs.Error{Code: errdefs.PolicyDenied, Err: err}
	case errors.Is(err, workerdb.ErrFull):
		return nil, &errdefs.Error{Code: errdefs.LimitExceeded, Limit: errdefs.LimitFileSize, Err: err}
	case errors.Is(err, workerdb.ErrResultTooLarge):
		return nil, &errdefs.Error{Code: errdefs.LimitExceeded, Limit: errdefs.LimitOutput, Err: err}
	case errors.Is(err, workerdb.ErrTimeout):
		return nil, &errdefs.Error{Code: errdefs.Timeout, Limit: errdefs.LimitTimeout, Err: err}
	case errors.Is(err, workerdb.ErrInvalid):
		return nil, &errdefs.Error{Code: errdefs.InvalidArguments, Err: err}
	}
	return &kind.LocalResult{Value: json.RawMessage("null"), IsError: true, Error: err.Error()}, nil
}

// Interface guards.
var (
	_ kind.ToolsetOnly = Kind{}
	_ kind.Spec        = (*Spec)(nil)
	_ kind.Effecter    = (*Spec)(nil)
	_ kind.Local       = (*Compiled)(nil)
)
