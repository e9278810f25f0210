package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"time"
)

// Execution outcomes.
const (
	OutcomeOK      = "ok"      // the tool ran and succeeded
	OutcomeError   = "error"   // the tool ran and reported an error
	OutcomeFailed  = "failed"  // timeout, limit or executor failure
	OutcomeRefused = "refused" // policy refused the call
)

// Execution is one call of a tool, as kept in the audit log.
type Execution struct {
	ID         string `json:"id"` // RecordExecution sets one when empty
	Tool       string `json:"tool"`
	Version    int    `json:"version"`
	CallerID   string `json:"caller_id,omitempty"`
	CallerType string `json:"caller_type,omitempty"`
	Worker     string `json:"worker,omitempty"`
	TokenID    string `json:"token_id,omitempty"` // the worker token the call came with
	Session    string `json:"session,omitempty"`  // the client's session label
	// ParentCallID is the call whose code made this one (utils.callTool);
	// "" for a call a client made.
	ParentCallID string          `json:"parent_call_id,omitempty"`
	Arguments    json.RawMessage `json:"arguments,omitempty"` // already scrubbed by the caller
	Outcome      string          `json:"outcome"`             // ok | error | failed | refused
	ErrorCode    string          `json:"error_code,omitempty"`
	Limit        string          `json:"limit,omitempty"` // the limit that was hit, if any
	Error        string          `json:"error,omitempty"`

	Duration    time.Duration `json:"duration"`
	OutputBytes int64         `json:"output_bytes"`
	StartedAt   time.Time     `json:"started_at,omitzero"`
	FinishedAt  time.Time     `json:"finished_at,omitzero"`
}

// ExecutionFilter selects executions for ListExecutions (newest first)
// and ExportExecutions (oldest first). Every field left empty or zero
// matches everything. Limit 0 (or less) means 100 for ListExecutions and
// no limit for ExportExecutions; a negative Offset counts as 0.
type ExecutionFilter struct {
	Tool string
	// Worker, when set, keeps only calls made through that worker.
	Worker string
	// CallerID and CallerType keep only calls of that caller.
	CallerID, CallerType string
	// Outcome keeps only calls with that outcome (ok, error, failed,
	// refused).
	Outcome string
	// Since and Until keep calls started at or after Since and before
	// Until.
	Since, Until time.Time
	// Parent, when set, keeps only the calls that call made (nested).
	Parent        string
	Limit, Offset int
}

// where is f as an SQL condition (with its arguments), "" for none. Each
// field has an index that leads with it and goes on with started_at.
func (f ExecutionFilter) where() (string, []any) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		where, args = append(where, cond), append(args, v)
	}
	if f.Tool != "" {
		add(`tool = ?`, f.Tool)
	}
	if f.Worker != "" {
		add(`worker = ?`, f.Worker)
	}
	if f.CallerID != "" {
		add(`caller_id = ?`, f.CallerID)
	}
	if f.CallerType != "" {
		add(`caller_type = ?`, f.CallerType)
	}
	if f.Outcome != "" {
		add(`outcome = ?`, f.Outcome)
	}
	if f.Parent != "" {
		add(`parent_call_id = ?`, f.Parent)
	}
	if !f.Since.IsZero() {
		add(`started_at >= ?`, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		add(`started_at < ?`, f.Until.UnixNano())
	}
	if len(where) == 0 {
		return "", nil
	}
	return strings.Join(where, ` AND `), args
}

// Match reports whether f selects e, as the query would: for records that
// are followed as they are written rather than read back.
func (f ExecutionFilter) Match(e *Execution) bool {
	switch {
	case f.Tool != "" && e.Tool != f.Tool,
		f.Worker != "" && e.Worker != f.Worker,
		f.CallerID != "" && e.CallerID != f.CallerID,
		f.CallerType != "" && e.CallerType != f.CallerType,
		f.Outcome != "" && e.Outcome != f.Outcome,
		f.Parent != "" && e.ParentCallID != f.Parent,
		!f.Since.IsZero() && (e.StartedAt.IsZero() || e.StartedAt.Before(f.Since)),
		!f.Until.IsZero() && (e.StartedAt.IsZero() || !e.StartedAt.Before(f.Until)):
		return false
	}
	return true
}

// defaultExecutionLimit is the page size of ListExecutions when none is set.
const defaultExecutionLimit = 100

const insertExecution = `INSERT INTO executions (id, tool, version, caller_id, caller_type,
	worker, arguments, outcome, error_code, limit_name, error, duration_ns, output_bytes,
	started_at, finished_at, token_id, session, parent_call_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// bumpUsage adds to a tool's usage count and moves its last use forward
// (never back: batches may carry calls out of order).
const bumpUsage = `UPDATE tools SET usage_count = usage_count + ?,
	last_used_at = MAX(COALESCE(last_used_at, 0), ?) WHERE name = ?`

const selectExecution = `SELECT id, tool, version, caller_id, caller_type, worker, arguments,
	outcome, error_code, limit_name, error, duration_ns, output_bytes, started_at, finished_at,
	token_id, session, parent_call_id FROM executions`

// pendingExec is an execution record waiting for the writer, in the form it
// is written.
type pendingExec struct {
	args   [18]any    // the parameters of insertExecution
	tool   string     // the tool whose usage this counts; "" for none
	usedAt int64      // Unix ns of the call, for last_used_at
	done   chan error // receives the commit result; buffered
}

// RecordExecution appends e to the audit log, adds one to the usage count of
// the tool e.Tool (if it still exists and the call ran: a refused call is
// recorded but is not a use) and moves its LastUsedAt to
// e.StartedAt (or e.FinishedAt, or now, whichever is first non-zero). An empty
// e.ID is set to a new unique one (see newID); a duplicate ID gives
// ErrConflict.
//
// Concurrent calls are committed together: a single writer writes every
// record waiting, up to 256, in one transaction. RecordExecution returns once
// the record's transaction has committed. If ctx ends first it returns ctx's
// error, but a record already queued is still written: the audit log keeps
// every call it was told about.
func (s *Store) RecordExecution(ctx context.Context, e *Execution) error {
	p, err := s.pending(e)
	if err != nil {
		return fmt.Errorf("store: record execution: %w", err)
	}
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("store: record execution %s: %w", e.ID, err)
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return fmt.Errorf("store: record execution %s: %w", e.ID, ErrClosed)
	}
	select {
	case s.queue <- p:
		s.mu.RUnlock()
	case <-ctx.Done():
		s.mu.RUnlock()
		return fmt.Errorf("store: record execution %s: %w", e.ID, context.Cause(ctx))
	}
	select {
	case err := <-p.done:
		if err != nil {
			return fmt.Errorf("store: record execution %s: %w", e.ID, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("store: record execution %s: %w", e.ID, context.Cause(ctx))
	}
}

// pending checks e, gives it an ID if it has none, and encodes it. The
// writer only ever sees the encoded copy, so the caller may reuse e as soon
// as RecordExecution returns, even on a ctx error.
func (s *Store) pending(e *Execution) (*pendingExec, error) {
	if e == nil {
		return nil, fmt.Errorf("%w: nil execution", ErrInvalid)
	}
	if len(e.Arguments) > 0 && !json.Valid(e.Arguments) {
		return nil, fmt.Errorf("%w: execution arguments are not valid JSON", ErrInvalid)
	}
	started, err := nanos("started_at", e.StartedAt)
	if err != nil {
		return nil, err
	}
	finished, err := nanos("finished_at", e.FinishedAt)
	if err != nil {
		return nil, err
	}
	if e.ID == "" {
		e.ID = newID(s.now())
	}
	var args any
	if len(e.Arguments) > 0 {
		args = string(e.Arguments)
	}
	p := &pendingExec{
		args: [18]any{e.ID, e.Tool, e.Version, e.CallerID, e.CallerType, e.Worker, args,
			e.Outcome, e.ErrorCode, e.Limit, e.Error, int64(e.Duration), e.OutputBytes,
			started, finished, e.TokenID, e.Session, e.ParentCallID},
		done: make(chan error, 1),
	}
	if e.Outcome != OutcomeRefused {
		p.tool = e.Tool
	}
	switch {
	case started != nil:
		p.usedAt = started.(int64)
	case finished != nil:
		p.usedAt = finished.(int64)
	default:
		p.usedAt = s.now().UnixNano()
	}
	return p, nil
}

// runWriter is the group-commit loop. It takes the first record waiting,
// everything queued behind it (up to maxBatch), commits them together and
// reports to each caller. It returns once Close has closed the queue and the
// queue is drained.
func (s *Store) runWriter() {
	defer close(s.writerDone)
	defer close(s.checkpoint)
	batch := make([]*pendingExec, 0, maxBatch)
	sinceCheckpoint := 0
	usage := make(map[string]*toolUse)
	for p := range s.queue {
		batch = append(batch[:0], p)
		// Give callers that are runnable, typically those the last
		// commit woke, the chance to queue before the batch is cut: on
		// few cores this doubles the batch size at moderate load.
		runtime.Gosched()
	fill:
		for len(batch) < maxBatch {
			select {
			case q, ok := <-s.queue:
				if !ok {
					break fill
				}
				batch = append(batch, q)
			default:
				break fill
			}
		}
		s.commitBatch(batch, usage)
		s.batches.Add(1)
		s.batched.Add(int64(len(batch)))
		clear(batch)
		if sinceCheckpoint++; sinceCheckpoint >= int(s.ckptEvery.Load()) {
			sinceCheckpoint = 0
			select { // one request waiting is enough
			case s.checkpoint <- struct{}{}:
			default:
			}
		}
	}
}

// runCheckpointer copies the WAL into the database file when the writer
// asks, on its own connection: a PASSIVE checkpoint waits for no one and
// blocks no one, and the writer's commits go on meanwhile. The WAL then
// starts over at the next write, so the checkpoint SQLite runs itself in
// the committing connection (autoCheckpointFrames) is only the
// fallback (for a checkpoint that could not catch up, or writes other than
// records). Nothing of durability changes: a record is durable once its
// transaction is committed to the WAL, checkpointed or not. Each
// checkpoint sets how many transactions the writer lets pass before the
// next from the pages per transaction it found. It returns once the
// writer has ended.
func (s *Store) runCheckpointer() {
	defer close(s.ckptDone)
	var busy, logFrames, done, lastFrames int
	last := s.batches.Load()
	for range s.checkpoint {
		// A failure (another checkpoint under way) leaves the work to
		// the next request or to SQLite's own checkpoint.
		err := s.ckdb.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logFrames, &done)
		n := s.batches.Load()
		if err != nil {
			continue
		}
		// The pages written since the last checkpoint: all the WAL holds
		// when it started over meanwhile, else what it gained.
		added := logFrames
		if logFrames >= lastFrames {
			added -= lastFrames
		}
		if added > 0 && n > last {
			perBatch := max(int64(added)/(n-last), 1)
			s.ckptEvery.Store(min(max(checkpointFrames/perBatch, 1), 1024))
		}
		last, lastFrames = n, logFrames
	}
}

// commitBatch writes batch in one transaction. If that fails, it writes each
// record in its own transaction, so one bad record (a duplicate ID) fails
// alone.
func (s *Store) commitBatch(batch []*pendingExec, usage map[string]*toolUse) {
	err := s.writeBatch(batch, usage)
	if err == nil || len(batch) == 1 {
		for _, p := range batch {
			p.done <- err
		}
		return
	}
	for i, p := range batch {
		p.done <- s.writeBatch(batch[i:i+1], usage)
	}
}

// toolUse sums a batch's calls of one tool.
type toolUse struct {
	calls  int64
	usedAt int64
}

func (s *Store) writeBatch(batch []*pendingExec, usage map[string]*toolUse) error {
	// The writer's own context: a record, once queued, is written even if
	// its caller has stopped waiting. SQLite's busy timeout bounds the wait.
	ctx := context.Background()
	clear(usage)
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer rollback(tx)
	insert := tx.StmtContext(ctx, s.insertExec)
	for _, p := range batch {
		_, err := insert.ExecContext(ctx, p.args[:]...)
		if isConstraint(err) {
			return fmt.Errorf("id %v: %w", p.args[0], ErrConflict)
		}
		if err != nil {
			return err
		}
		if p.tool == "" {
			continue
		}
		u := usage[p.tool]
		if u == nil {
			u = &toolUse{}
			usage[p.tool] = u
		}
		u.calls++
		u.usedAt = max(u.usedAt, p.usedAt)
	}
	bump := tx.StmtContext(ctx, s.bumpUsage)
	for tool, u := range usage {
		if _, err := bump.ExecContext(ctx, u.calls, u.usedAt, tool); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// ListExecutions returns the executions f selects, newest (by StartedAt)
// first.
func (s *Store) ListExecutions(ctx context.Context, f ExecutionFilter) ([]*Execution, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = defaultExecutionLimit
	}
	q := selectExecution
	where, args := f.where()
	if where != "" {
		q += ` WHERE ` + where
	}
	q += ` ORDER BY started_at DESC, rowid DESC LIMIT ? OFFSET ?`
	args = append(args, limit, max(f.Offset, 0))
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list executions: %w", err)
	}
	defer rows.Close()
	execs := []*Execution{}
	for rows.Next() {
		e, err := scanExecution(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list executions: %w", err)
		}
		execs = append(execs, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list executions: %w", err)
	}
	return execs, nil
}

// exportPage is how many records one query of ExportExecutions reads: each
// page is its own short read, so an export of any size never holds one
// snapshot (and so the WAL) for long.
const exportPage = 500

// ExportExecutions calls fn with each execution f selects, oldest (first
// written) first, until fn returns an error, which it returns. It reads in
// pages, so it works on an audit log of any size in little memory; records
// written while it runs are included when they land after its position.
func (s *Store) ExportExecutions(ctx context.Context, f ExecutionFilter, fn func(*Execution) error) error {
	where, args := f.where()
	if where != "" {
		where = ` AND ` + where
	}
	q := `SELECT rowid, ` + strings.TrimPrefix(selectExecution, `SELECT `) + ` WHERE rowid > ?` + where + ` ORDER BY rowid LIMIT ?`
	left := f.Limit
	var after int64
	for {
		page := exportPage
		if left > 0 {
			page = min(page, left)
		}
		n, last, err := s.exportPage(ctx, q, append(append([]any{after}, args...), page), fn)
		if err != nil {
			return err
		}
		if left > 0 {
			if left -= n; left == 0 {
				return nil
			}
		}
		if n < page {
			return nil
		}
		after = last
	}
}

// exportPage runs one page of ExportExecutions: it returns how many
// records it gave fn and the rowid of the last.
func (s *Store) exportPage(ctx context.Context, q string, args []any, fn func(*Execution) error) (int, int64, error) {
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, 0, fmt.Errorf("store: export executions: %w", err)
	}
	defer rows.Close()
	// The page is read whole before fn sees it: fn may write to a slow
	// client, and the read should not wait on it.
	var page []*Execution
	var last int64
	for rows.Next() {
		e, err := scanExecution(rowidScanner{rows, &last})
		if err != nil {
			return 0, 0, fmt.Errorf("store: export executions: %w", err)
		}
		page = append(page, e)
	}
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("store: export executions: %w", err)
	}
	rows.Close()
	for _, e := range page {
		if err := fn(e); err != nil {
			return 0, 0, err
		}
	}
	return len(page), last, nil
}

// rowidScanner scans a leading rowid column into *rowid, then the rest as
// the wrapped scanner's caller expects.
type rowidScanner struct {
	rows  *sql.Rows
	rowid *int64
}

func (r rowidScanner) Scan(dest ...any) error {
	return r.rows.Scan(append([]any{r.rowid}, dest...)...)
}

// CountExecutions counts the executions of tool, or of every tool when tool
// is empty.
func (s *Store) CountExecutions(ctx context.Context, tool string) (int, error) {
	return s.CountMatching(ctx, ExecutionFilter{Tool: tool})
}

// CountMatching counts the records f selects (its Limit and Offset aside).
func (s *Store) CountMatching(ctx context.Context, f ExecutionFilter) (int, error) {
	q := `SELECT COUNT(*) FROM executions`
	where, args := f.where()
	if where != "" {
		q += ` WHERE ` + where
	}
	var n int
	if err := s.rdb.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count executions: %w", err)
	}
	return n, nil
}

func scanExecution(sc rowScanner) (*Execution, error) {
	var e Execution
	var args []byte
	var dur int64
	var started, finished sql.NullInt64
	err := sc.Scan(&e.ID, &e.Tool, &e.Version, &e.CallerID, &e.CallerType, &e.Worker, &args,
		&e.Outcome, &e.ErrorCode, &e.Limit, &e.Error, &dur, &e.OutputBytes, &started, &finished,
		&e.TokenID, &e.Session, &e.ParentCallID)
	if err != nil {
		return nil, err
	}
	e.Arguments = args
	e.Duration = time.Duration(dur)
	e.StartedAt, e.FinishedAt = fromNanos(started), fromNanos(finished)
	return &e, nil
}

// newID returns a 32-hex-digit ID: the time in Unix nanoseconds, then 8
// random bytes. IDs made later sort later, which keeps inserts into the
// primary-key index at its right edge (a fully random key dirties a random
// index page per record).
func newID(now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixNano()))
	_, _ = rand.Read(b[8:]) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b[:])
}
