// Package store persists toolcage's tools, their versions and the execution
// audit log in one SQLite database (mattn/go-sqlite3, WAL mode).
//
// A Store keeps two connection pools on the same file. Every write goes
// through a pool of exactly one connection, so writers inside the process
// queue in Go instead of fighting over SQLite's lock ("database is locked");
// reads use a separate pool of read-only connections, which WAL lets run
// beside the writer. Execution records, the hot path, are written by a single
// goroutine that commits everything waiting in one transaction (group commit;
// see RecordExecution). A third connection checkpoints the WAL into the
// database file in the background (runCheckpointer), so that a call's record
// seldom waits for a checkpoint.
//
// Times are stored as Unix nanoseconds and come back in UTC; a zero time is
// stored as NULL and comes back zero. JSON fields are stored compacted.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"
)

const (
	// busyTimeoutMS bounds how long a connection waits for a lock held by
	// another process before failing with SQLITE_BUSY.
	busyTimeoutMS = 5000
	// queueSize is how many execution records may wait for the writer.
	queueSize = 1024
	// maxBatch is how many execution records one transaction writes at most.
	maxBatch = 256
	// checkpointFrames is how many pages the background checkpointer lets
	// the WAL gather before it copies them (SQLite's own default).
	checkpointFrames = 1000
	// autoCheckpointFrames is where SQLite's own checkpoint, in the
	// committing connection, starts: the fallback, should the background
	// one fall behind.
	autoCheckpointFrames = 4 * checkpointFrames
)

// Store is a handle on the toolcage database. It is safe for concurrent use.
// Close it to flush pending execution records.
type Store struct {
	path string
	wdb  *sql.DB // one connection: every write goes through it
	rdb  *sql.DB // read-only connections
	ckdb *sql.DB // one connection: background checkpoints
	now  func() time.Time

	getTool    *sql.Stmt // on rdb
	insertExec *sql.Stmt // on wdb
	bumpUsage  *sql.Stmt // on wdb

	mu         sync.RWMutex // held for reading while sending on queue
	closed     bool         // guarded by mu
	queue      chan *pendingExec
	writerDone chan struct{}
	checkpoint chan struct{} // the writer's requests; closed when it ends
	ckptEvery  atomic.Int64  // record transactions between requests
	ckptDone   chan struct{} // closed when runCheckpointer has returned
	batches    atomic.Int64  // transactions the writer committed or tried
	batched    atomic.Int64  // records in them
}

// Open opens the database at path, creating it (mode 0600, parent directories
// 0700) if it does not exist, and applies the migrations it lacks. An existing
// file readable by group or others is narrowed to 0600: it holds the audit log
// and, later, secrets.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("store: open: %w: empty path", ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	if err := createPrivate(abs); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}

	s := &Store{
		path:       abs,
		now:        func() time.Time { return time.Now().UTC() },
		queue:      make(chan *pendingExec, queueSize),
		writerDone: make(chan struct{}),
		checkpoint: make(chan struct{}, 1),
		ckptDone:   make(chan struct{}),
	}
	if err := s.open(ctx); err != nil {
		_ = s.closeDBs() // the error that stopped Open is the one to report
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	s.ckptEvery.Store(checkpointFrames / 10) // about ten pages a record
	go s.runWriter()
	go s.runCheckpointer()
	return s, nil
}

// open connects both pools, migrates and prepares the hot statements.
func (s *Store) open(ctx context.Context) error {
	var err error
	s.wdb, err = sql.Open("sqlite3", dsn(s.path, map[string]string{
		"_journal_mode": "WAL",
		"_synchronous":  "NORMAL",
		"_foreign_keys": "on",
		"_busy_timeout": fmt.Sprint(busyTimeoutMS),
		// Take the write lock when the transaction starts, not at its
		// first write, so a transaction never fails half way with BUSY.
		"_txlock": "immediate",
	}))
	if err != nil {
		return err
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)

	var mode string
	if err := s.wdb.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal mode is %q, want wal (is the file on a network file system?)", mode)
	}
	if err := migrate(ctx, s.wdb, migrations, s.now()); err != nil {
		return err
	}
	// Per connection; a connection opened anew keeps SQLite's default.
	if _, err := s.wdb.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", autoCheckpointFrames)); err != nil {
		return err
	}

	s.rdb, err = sql.Open("sqlite3", dsn(s.path, map[string]string{
		"_foreign_keys": "on",
		"_busy_timeout": fmt.Sprint(busyTimeoutMS),
		"_query_only":   "on",
	}))
	if err != nil {
		return err
	}
	readers := max(4, runtime.GOMAXPROCS(0))
	s.rdb.SetMaxOpenConns(readers)
	s.rdb.SetMaxIdleConns(readers)
	if err := s.rdb.PingContext(ctx); err != nil {
		return err
	}

	s.ckdb, err = sql.Open("sqlite3", dsn(s.path, map[string]string{
		"_busy_timeout": fmt.Sprint(busyTimeoutMS),
	}))
	if err != nil {
		return err
	}
	s.ckdb.SetMaxOpenConns(1)
	s.ckdb.SetMaxIdleConns(1)
	if err := s.ckdb.PingContext(ctx); err != nil {
		return err
	}

	if s.getTool, err = s.rdb.PrepareContext(ctx, selectTool+` WHERE name = ?`); err != nil {
		return err
	}
	if s.insertExec, err = s.wdb.PrepareContext(ctx, insertExecution); err != nil {
		return err
	}
	if s.bumpUsage, err = s.wdb.PrepareContext(ctx, bumpUsage); err != nil {
		return err
	}
	return nil
}

// Close waits for every queued execution record to be committed, checkpoints
// the WAL into the database file (truncating it) and closes the database.
// Calls made after Close fail; a second Close returns nil.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.queue) // no sender holds mu, so none is left to send
	s.mu.Unlock()
	<-s.writerDone
	<-s.ckptDone

	err := s.closeDBs()
	if err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// closeDBs closes statements and pools, checkpointing once readers are gone.
// It tolerates a half-opened Store.
func (s *Store) closeDBs() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.getTool, s.insertExec, s.bumpUsage} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	if s.ckdb != nil {
		errs = append(errs, s.ckdb.Close())
	}
	if s.wdb != nil {
		// busy, log frames, checkpointed frames; busy is 1 only if another
		// process is still reading, which is not an error for us.
		var busy, logFrames, done int
		err := s.wdb.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done)
		if err != nil {
			errs = append(errs, fmt.Errorf("checkpoint: %w", err))
		}
		errs = append(errs, s.wdb.Close())
	}
	return errors.Join(errs...)
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// createPrivate creates the file at path with mode 0600 if it is missing, and
// narrows an existing file that group or others may read. SQLite gives the
// -wal and -shm files the mode of the database file.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().Perm()&0o077 != 0 {
		err = f.Chmod(0o600)
	}
	return errors.Join(err, f.Close())
}

// dsn builds a go-sqlite3 URI for path. The path is escaped so that '?', '#'
// and '%' in a file name are not taken for URI syntax.
func dsn(path string, params map[string]string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	var b strings.Builder
	b.WriteString("file:")
	b.WriteString(esc)
	sep := byte('?')
	for _, k := range []string{"_journal_mode", "_synchronous", "_foreign_keys", "_busy_timeout", "_txlock", "_query_only"} {
		if v, ok := params[k]; ok {
			b.WriteByte(sep)
			b.WriteString(k + "=" + v)
			sep = '&'
		}
	}
	return b.String()
}

// isConstraint reports whether err is a uniqueness violation.
func isConstraint(err error) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey ||
		se.ExtendedCode == sqlite3.ErrConstraintUnique
}

// isForeignKey reports whether err is a foreign key violation.
func isForeignKey(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintForeignKey
}

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}

// nanos converts t for storage: NULL for the zero time, else Unix nanoseconds,
// which hold the years 1677 to 2262.
func nanos(field string, t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	if t.Before(time.Unix(0, math.MinInt64)) || t.After(time.Unix(0, math.MaxInt64)) {
		return nil, fmt.Errorf("%w: %s %s is outside 1677-2262", ErrInvalid, field, t)
	}
	return t.UnixNano(), nil
}

// fromNanos is the inverse of nanos.
func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}
