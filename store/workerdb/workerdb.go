// Package workerdb keeps each worker's own SQLite database (the sql
// toolset): one file per worker under a directory of the daemon's data
// dir, opened with guards that SQLite itself enforces on every statement,
// whatever its spelling. An authorizer refuses ATTACH and DETACH,
// load_extension, virtual tables and every pragma but the read-only ones
// that describe the schema; extension loading is off in the C library
// too; the number of attached databases is capped at zero; the file's
// size is capped with max_page_count, set before the authorizer is in
// place (so no statement can raise it), and the temporary tables a
// connection makes count against the same cap (see shareRoom); each query
// runs under a timeout that interrupts it; reads return at most MaxRows
// rows and at most Limits.MaxResultBytes of them, counted as they are read.
package workerdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

// Defaults of Limits.
const (
	DefaultMaxBytes     = 100_000_000
	DefaultQueryTimeout = 5 * time.Second
	// DefaultMaxResultBytes bounds one read's rows, near their JSON size.
	DefaultMaxResultBytes = 4 << 20
	// MaxRows is the most rows a read returns; more set Truncated.
	MaxRows = 1000
	// maxValueBytes bounds one string or blob (SQLITE_LIMIT_LENGTH).
	maxValueBytes = 16 << 20
	// maxSQLBytes bounds a statement's text.
	maxSQLBytes = 1 << 20
)

// Limits bound one worker's database. A zero field takes its default.
type Limits struct {
	// MaxBytes caps the database file (100 MB by default).
	MaxBytes int64
	// QueryTimeout bounds one call (5s by default).
	QueryTimeout time.Duration
	// MaxResultBytes bounds the rows one read returns, counted near
	// their JSON size as they are read (4 MiB by default): a read past it
	// fails with ErrResultTooLarge instead of being held in memory.
	MaxResultBytes int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.QueryTimeout <= 0 {
		l.QueryTimeout = DefaultQueryTimeout
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = DefaultMaxResultBytes
	}
	return l
}

// or fills l's zero fields from d.
func (l Limits) or(d Limits) Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.QueryTimeout <= 0 {
		l.QueryTimeout = d.QueryTimeout
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = d.MaxResultBytes
	}
	return l
}

// Errors a caller tells apart; each wraps the SQLite error, if any.
var (
	// ErrDenied is a statement the authorizer refused.
	ErrDenied = errors.New("not allowed in a worker's database")
	// ErrFull is a write past the size cap.
	ErrFull = errors.New("the database is at its size cap")
	// ErrResultTooLarge is a read whose rows pass MaxResultBytes.
	ErrResultTooLarge = errors.New("the result is over its size cap")
	// ErrTimeout is a query interrupted at its timeout.
	ErrTimeout = errors.New("the query ran past its timeout")
	// ErrInvalid is a bad worker name, statement or parameter.
	ErrInvalid = errors.New("invalid")
)

// workerNameRE is a registered worker's name: it is a path element here.
var workerNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// Set opens and keeps the workers' databases. It is safe for concurrent
// use; one worker's statements run one at a time.
type Set struct {
	dir      string
	defaults Limits
	mu       sync.Mutex
	dbs      map[string]*workerDB
}

type workerDB struct {
	db       *sql.DB
	maxBytes int64
}

// New keeps the databases under dir (dir/<worker>/db.sqlite).
func New(dir string) *Set { return NewWithDefaults(dir, Limits{}) }

// NewWithDefaults is New whose calls take defaults' fields where their
// own Limits leave them zero (the daemon's configured defaults).
func NewWithDefaults(dir string, defaults Limits) *Set {
	return &Set{dir: dir, defaults: defaults.withDefaults(), dbs: map[string]*workerDB{}}
}

// Path is where worker's database lives.
func (s *Set) Path(worker string) string { return filepath.Join(s.dir, worker, "db.sqlite") }

// Dir is worker's directory, which holds its database: what Remove
// deletes.
func (s *Set) Dir(worker string) string { return filepath.Dir(s.Path(worker)) }

// Left reports whether worker's directory exists (false for a name that
// is not a worker's): after Remove failed to delete it, it is left.
func (s *Set) Left(worker string) bool {
	if !workerNameRE.MatchString(worker) {
		return false
	}
	_, err := os.Lstat(s.Dir(worker))
	return err == nil
}

// Close closes every open database.
func (s *Set) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for k, w := range s.dbs {
		errs = append(errs, w.db.Close())
		delete(s.dbs, k)
	}
	return errors.Join(errs...)
}

// Remove deletes worker's database: it closes the open handle, then
// removes the worker's directory (the file, its -wal and -shm); what
// stops it is an error (Left then tells whether the directory is still
// there). A worker with no database is no error. A statement still running on the closed
// handle fails; the caller removes the worker first, so no new call
// reopens it (a worker added again under the name starts empty).
func (s *Set) Remove(worker string) error {
	if !workerNameRE.MatchString(worker) {
		return fmt.Errorf("%w: worker name %q", ErrInvalid, worker)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if w := s.dbs[worker]; w != nil {
		errs = append(errs, w.db.Close())
		delete(s.dbs, worker)
	}
	// The name is one path element (workerNameRE): nothing outside s.dir.
	// RemoveAll's error names the file it could not delete, and why.
	if err := os.RemoveAll(s.Dir(worker)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// open returns worker's database, opening it with lim's size cap; an
// open database with another cap is reopened.
func (s *Set) open(worker string, lim Limits) (*sql.DB, error) {
	if !workerNameRE.MatchString(worker) {
		return nil, fmt.Errorf("%w: worker name %q", ErrInvalid, worker)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.dbs[worker]; w != nil {
		if w.maxBytes == lim.MaxBytes {
			return w.db, nil
		}
		w.db.Close()
		delete(s.dbs, worker)
	}
	path := s.Path(worker)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	d := &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error { return guard(c, lim.MaxBytes) }}
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	db := sql.OpenDB(connector{dsn: "file:" + esc + "?_busy_timeout=5000", d: d})
	// One connection: a worker's statements queue in Go, and a
	// connection's state (an open transaction) is checked after each call.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	s.dbs[worker] = &workerDB{db: db, maxBytes: lim.MaxBytes}
	return db, nil
}

type connector struct {
	dsn string
	d   *sqlite3.SQLiteDriver
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.d }

// guard sets a new connection's caps and then its authorizer, which from
// then on sees every statement the connection prepares.
func guard(c *sqlite3.SQLiteConn, maxBytes int64) error {
	c.SetLimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
	c.SetLimit(sqlite3.SQLITE_LIMIT_LENGTH, maxValueBytes)
	c.SetLimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, maxSQLBytes)
	pageSize := int64(4096)
	if rows, err := c.Query("PRAGMA page_size", nil); err == nil {
		v := make([]driver.Value, 1)
		if rows.Next(v) == nil {
			if n, ok := v[0].(int64); ok && n > 0 {
				pageSize = n
			}
		}
		rows.Close()
	}
	pages := max(maxBytes/pageSize, 1)
	for _, p := range []string{
		fmt.Sprintf("PRAGMA max_page_count = %d", min(pages, math.MaxInt32)),
		"PRAGMA trusted_schema = OFF",
		"PRAGMA foreign_keys = ON",
	} {
		if _, err := c.Exec(p, nil); err != nil {
			return fmt.Errorf("workerdb: %s: %w", p, err)
		}
	}
	c.RegisterAuthorizer(authorize)
	return nil
}

// readPragmas are the pragmas a statement may run: they read the schema
// or the file's counters and write nothing. Called with an argument, the
// argument names a table or index (table_info(t)) or bounds a check.
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true,
	"index_list": true, "index_info": true, "index_xinfo": true,
	"foreign_key_list": true, "foreign_key_check": true,
	"integrity_check": true, "quick_check": true,
	"collation_list": true, "function_list": true, "pragma_list": true,
}

// readOnlyPragmas may be read but never set.
var readOnlyPragmas = map[string]bool{
	"page_count": true, "page_size": true, "max_page_count": true,
	"freelist_count": true, "schema_version": true, "data_version": true,
	"encoding": true, "foreign_keys": true, "user_version": true, "application_id": true,
}

// deniedFunctions load code or reach outside the database.
var deniedFunctions = map[string]bool{"load_extension": true, "fts3_tokenizer": true}

// authorize is SQLite's authorizer: it is asked about every action of
// every statement as the statement is prepared.
func authorize(op int, arg1, arg2, _ string) int {
	switch op {
	case sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH,
		sqlite3.SQLITE_CREATE_VTABLE, sqlite3.SQLITE_DROP_VTABLE:
		return sqlite3.SQLITE_DENY
	case sqlite3.SQLITE_PRAGMA:
		name := strings.ToLower(arg1)
		if readPragmas[name] || (readOnlyPragmas[name] && arg2 == "") {
			return sqlite3.SQLITE_OK
		}
		return sqlite3.SQLITE_DENY
	case sqlite3.SQLITE_FUNCTION:
		if deniedFunctions[strings.ToLower(arg2)] {
			return sqlite3.SQLITE_DENY
		}
	}
	return sqlite3.SQLITE_OK
}

// Result is what one statement did: a read's columns and rows, or a
// write's changes and last insert id.
type Result struct {
	Columns      []string `json:"columns,omitempty"`
	Rows         [][]any  `json:"rows,omitempty"`
	Truncated    bool     `json:"truncated,omitempty"`
	Changes      *int64   `json:"changes,omitempty"`
	LastInsertID *int64   `json:"last_insert_id,omitempty"`
}

// Exec runs query (one statement, or several separated by ";", the last
// one's rows returned) on worker's database with params: a JSON array
// for ? placeholders or an object for :name, @name and $name ones.
func (s *Set) Exec(ctx context.Context, worker, query string, params json.RawMessage, lim Limits) (*Result, error) {
	lim = lim.or(s.limits())
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("%w: the sql is empty", ErrInvalid)
	}
	if len(query) > maxSQLBytes {
		return nil, fmt.Errorf("%w: the sql is %d bytes, over %d", ErrInvalid, len(query), maxSQLBytes)
	}
	args, err := bindArgs(params)
	if err != nil {
		return nil, err
	}
	db, err := s.open(worker, lim)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, lim.QueryTimeout)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, mapErr(ctx, err)
	}
	defer conn.Close()
	if err := shareRoom(conn, lim.MaxBytes); err != nil {
		return nil, mapErr(ctx, err)
	}
	res, err := run(ctx, conn, query, args, lim.MaxResultBytes)
	// A transaction the statement left open is not carried into the
	// next call: rolled back here, and said.
	if rbErr := endOpenTx(conn); rbErr != nil && err == nil {
		err = rbErr
	}
	if overErr := dropTempOver(conn, lim.MaxBytes); overErr != nil {
		err = overErr
	}
	if err != nil {
		return nil, mapErr(ctx, err)
	}
	return res, nil
}

// limits are the set's defaults (a zero Set's are the package's).
func (s *Set) limits() Limits { return s.defaults.withDefaults() }

// pageCounts reads the pages the main and the temp database hold, and
// the page size. The temp database holds a connection's temporary tables
// and indexes; until one is made it has no pages.
func pageCounts(c *sqlite3.SQLiteConn) (main, temp, size int64, err error) {
	for _, q := range []struct {
		sql string
		out *int64
	}{{"PRAGMA main.page_count", &main}, {"PRAGMA temp.page_count", &temp}, {"PRAGMA main.page_size", &size}} {
		if *q.out, err = pragmaInt(c, q.sql); err != nil {
			return 0, 0, 0, err
		}
	}
	return main, temp, max(size, 1), nil
}

func pragmaInt(c *sqlite3.SQLiteConn, q string) (int64, error) {
	rows, err := c.Query(q, nil)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil {
		return 0, fmt.Errorf("%s: %w", q, err)
	}
	n, _ := v[0].(int64)
	return n, nil
}

// shareRoom makes the file and the connection's temporary tables share
// maxBytes: before a call each may grow only into the room the other
// leaves (max_page_count of main and of temp), so temporary tables
// count against the cap the file has. The pragmas are set with the
// authorizer off for the moment, on the call's own connection: no
// statement of the agent's runs meanwhile. A call that grows both into
// the same room is caught after it (dropTempOver).
func shareRoom(conn *sql.Conn, maxBytes int64) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("workerdb: connection is %T", dc)
		}
		main, temp, size, err := pageCounts(c)
		if err != nil {
			return err
		}
		capPages := max(maxBytes/size, 1)
		c.RegisterAuthorizer(nil)
		defer c.RegisterAuthorizer(authorize)
		for _, p := range []string{
			fmt.Sprintf("PRAGMA main.max_page_count = %d", min(max(capPages-temp, 1), math.MaxInt32)),
			fmt.Sprintf("PRAGMA temp.max_page_count = %d", min(max(capPages-main, 1), math.MaxInt32)),
		} {
			if _, err := c.Exec(p, nil); err != nil {
				return fmt.Errorf("workerdb: %s: %w", p, err)
			}
		}
		return nil
	})
}

// dropTempOver checks the call just run left the file and the temporary
// tables within maxBytes together; if not, it drops the temporary ones
// (the connection is discarded: temporary tables live and die with it)
// and says so with ErrFull. What the call wrote to the file stays: the
// file alone was held within the room the temp tables left.
func dropTempOver(conn *sql.Conn, maxBytes int64) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("workerdb: connection is %T", dc)
		}
		main, temp, size, err := pageCounts(c)
		if err != nil {
			return err
		}
		if temp == 0 || (main+temp)*size <= maxBytes {
			return nil
		}
		// ErrBadConn makes database/sql close this connection rather
		// than return it to the pool.
		return fmt.Errorf("%w: the database and its temporary tables are %d bytes together, over max_bytes (%d); "+
			"the temporary tables were dropped: %w", ErrFull, (main+temp)*size, maxBytes, driver.ErrBadConn)
	})
}

func run(ctx context.Context, conn *sql.Conn, query string, args []any, maxResult int64) (*Result, error) {
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		rows.Close()
		var changes, last int64
		if err := conn.QueryRowContext(ctx, "SELECT changes(), last_insert_rowid()").Scan(&changes, &last); err != nil {
			return nil, err
		}
		return &Result{Changes: &changes, LastInsertID: &last}, rows.Err()
	}
	res := &Result{Columns: cols, Rows: [][]any{}}
	size := int64(2)
	for _, c := range cols {
		size += int64(len(c)) + 3
	}
	for rows.Next() {
		if len(res.Rows) == MaxRows {
			res.Truncated = true
			break
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		size += 2
		for i, v := range vals {
			size += valueSize(v)
			if b, ok := v.([]byte); ok {
				vals[i] = blobValue(b)
			}
		}
		// Counted row by row, so a read past the cap holds at most one
		// row more than the cap in memory.
		if size > maxResult {
			return nil, fmt.Errorf("%w: the rows read so far are %d bytes, over max_result_bytes (%d); "+
				"select fewer rows or columns (LIMIT, substr, length)", ErrResultTooLarge, size, maxResult)
		}
		res.Rows = append(res.Rows, vals)
	}
	return res, rows.Err()
}

// valueSize is near the JSON size of a scanned value: a string's bytes
// and quotes, a blob's base64 in its object, a number's digits at most.
func valueSize(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 5
	case string:
		return int64(len(x)) + 3
	case []byte:
		return int64(base64.StdEncoding.EncodedLen(len(x))) + 15
	case bool:
		return 6
	}
	return 25
}

// blobValue is how a blob comes back: {"base64": "..."} (encoding/json
// writes []byte as base64); text columns come back as strings.
func blobValue(b []byte) any {
	return map[string]any{"base64": b}
}

// endOpenTx rolls back a transaction left open on conn.
func endOpenTx(conn *sql.Conn) error {
	open := false
	_ = conn.Raw(func(dc any) error {
		if c, ok := dc.(*sqlite3.SQLiteConn); ok {
			open = !c.AutoCommit()
		}
		return nil
	})
	if !open {
		return nil
	}
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		return err
	}
	return fmt.Errorf("%w: a transaction left open was rolled back; BEGIN and COMMIT in the same call", ErrInvalid)
}

// bindArgs turns params into arguments.
func bindArgs(params json.RawMessage) ([]any, error) {
	p := strings.TrimSpace(string(params))
	if p == "" || p == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(p))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: params: %v", ErrInvalid, err)
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			a, err := argValue(e)
			if err != nil {
				return nil, fmt.Errorf("%w: params[%d]: %v", ErrInvalid, i, err)
			}
			out[i] = a
		}
		return out, nil
	case map[string]any:
		out := make([]any, 0, len(x))
		for k, e := range x {
			name := strings.TrimLeft(k, ":@$")
			if name == "" {
				return nil, fmt.Errorf("%w: params: an empty name", ErrInvalid)
			}
			a, err := argValue(e)
			if err != nil {
				return nil, fmt.Errorf("%w: params.%s: %v", ErrInvalid, k, err)
			}
			out = append(out, sql.Named(name, a))
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: params must be an array (for ?) or an object (for :name)", ErrInvalid)
}

// argValue converts one JSON value: numbers to integers where whole,
// objects and arrays to their JSON text.
func argValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, string, bool:
		return x, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		return x.Float64()
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// mapErr names the guard an error came from.
func mapErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		switch {
		// A denied function is reported as a plain error whose text is
		// the authorizer's.
		case se.Code == sqlite3.ErrAuth || strings.HasPrefix(se.Error(), "not authorized"):
			return fmt.Errorf("%w: %v", ErrDenied, err)
		case se.Code == sqlite3.ErrFull:
			return fmt.Errorf("%w: %v", ErrFull, err)
		case se.Code == sqlite3.ErrInterrupt:
			return fmt.Errorf("%w: %v", ErrTimeout, err)
		}
	}
	return err
}

// Table is one object of a schema.
type Table struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	SQL     string   `json:"sql"`
	Columns []Column `json:"columns,omitempty"`
}

// Column is one column of a table or view.
type Column struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	NotNull    bool   `json:"not_null,omitempty"`
	PrimaryKey bool   `json:"primary_key,omitempty"`
}

// Schema lists worker's tables, views, indexes and triggers, with the
// columns of each table and view.
func (s *Set) Schema(ctx context.Context, worker string, lim Limits) ([]Table, error) {
	lim = lim.or(s.limits())
	db, err := s.open(worker, lim)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, lim.QueryTimeout)
	defer cancel()
	rows, err := db.QueryContext(ctx, `SELECT type, name, COALESCE(sql, '') FROM sqlite_schema
		WHERE name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY type = 'table' DESC, name`)
	if err != nil {
		return nil, mapErr(ctx, err)
	}
	out := []Table{}
	// The schema is held to the read cap too: a worker may make many
	// tables, each with a long statement.
	size := int64(0)
	tooLarge := func() error {
		return fmt.Errorf("%w: the schema is over max_result_bytes (%d)", ErrResultTooLarge, lim.MaxResultBytes)
	}
	for rows.Next() {
		var t Table
		if err := rows.Scan(&t.Type, &t.Name, &t.SQL); err != nil {
			rows.Close()
			return nil, err
		}
		if size += int64(len(t.Type)+len(t.Name)+len(t.SQL)) + 40; size > lim.MaxResultBytes {
			rows.Close()
			return nil, tooLarge()
		}
		out = append(out, t)
	}
	rows.Close()
	for i, t := range out {
		if t.Type != "table" && t.Type != "view" {
			continue
		}
		cols, err := db.QueryContext(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info(?)`, t.Name)
		if err != nil {
			return nil, mapErr(ctx, err)
		}
		for cols.Next() {
			var c Column
			var pk int
			if err := cols.Scan(&c.Name, &c.Type, &c.NotNull, &pk); err != nil {
				cols.Close()
				return nil, err
			}
			c.PrimaryKey = pk > 0
			if size += int64(len(c.Name)+len(c.Type)) + 60; size > lim.MaxResultBytes {
				cols.Close()
				return nil, tooLarge()
			}
			out[i].Columns = append(out[i].Columns, c)
		}
		cols.Close()
	}
	return out, nil
}
