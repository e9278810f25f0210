package workerdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolcage/toolcage/internal/testfs"
)

func newSet(t *testing.T) *Set {
	t.Helper()
	s := New(t.TempDir())
	t.Cleanup(func() { s.Close() })
	return s
}

func mustExec(t *testing.T, s *Set, q string, params string) *Result {
	t.Helper()
	r, err := s.Exec(context.Background(), "w", q, json.RawMessage(params), Limits{})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

func TestReadsAndWrites(t *testing.T) {
	s := newSet(t)
	mustExec(t, s, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL, n REAL, b BLOB)", "")
	r := mustExec(t, s, "INSERT INTO notes (body, n) VALUES (?, ?), (?, ?)", `["a", 1.5, "b", 2]`)
	if *r.Changes != 2 || *r.LastInsertID != 2 || r.Columns != nil {
		t.Fatalf("insert: %+v", r)
	}
	r = mustExec(t, s, "INSERT INTO notes (body, b) VALUES (:body, $b)", `{"body": "c", "$b": null}`)
	if *r.Changes != 1 || *r.LastInsertID != 3 {
		t.Fatalf("named insert: %+v", r)
	}
	r = mustExec(t, s, "SELECT id, body, n, x'00ff' AS blob FROM notes WHERE id <= @max ORDER BY id", `{"max": 2}`)
	got, _ := json.Marshal(r)
	want := `{"columns":["id","body","n","blob"],"rows":[[1,"a",1.5,{"base64":"AP8="}],[2,"b",2,{"base64":"AP8="}]]}`
	if string(got) != want {
		t.Fatalf("select:\n got %s\nwant %s", got, want)
	}
	// Several statements: each runs, the last one's rows come back.
	r = mustExec(t, s, "UPDATE notes SET n = 0; SELECT count(*) FROM notes WHERE n = 0", "")
	if r.Rows[0][0] != int64(3) {
		t.Fatalf("script: %+v", r)
	}
	// A transaction within one call commits; one left open is rolled back.
	mustExec(t, s, "BEGIN; DELETE FROM notes WHERE id = 3; COMMIT", "")
	if _, err := s.Exec(context.Background(), "w", "BEGIN; DELETE FROM notes", nil, Limits{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("open transaction: %v", err)
	}
	if r := mustExec(t, s, "SELECT count(*) FROM notes", ""); r.Rows[0][0] != int64(2) {
		t.Fatalf("the open transaction was not rolled back: %+v", r)
	}
	// A syntax error is the statement's, not a guard's.
	_, err := s.Exec(context.Background(), "w", "SELEC 1", nil, Limits{})
	if err == nil || errors.Is(err, ErrDenied) || errors.Is(err, ErrTimeout) {
		t.Fatalf("syntax error: %v", err)
	}
	for _, bad := range []string{`"x"`, `[{"a":1}`, `{"": 1}`} {
		if _, err := s.Exec(context.Background(), "w", "SELECT 1", json.RawMessage(bad), Limits{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("params %s: %v", bad, err)
		}
	}
	for _, w := range []string{"", "../x", "A", "a/b", "."} {
		if _, err := s.Exec(context.Background(), w, "SELECT 1", nil, Limits{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("worker %q: %v", w, err)
		}
	}
	tables, err := s.Schema(context.Background(), "w", Limits{})
	if err != nil || len(tables) != 1 || tables[0].Name != "notes" || len(tables[0].Columns) != 4 ||
		!tables[0].Columns[0].PrimaryKey || !tables[0].Columns[1].NotNull {
		t.Fatalf("schema %+v %v", tables, err)
	}
	if fi, err := os.Stat(s.Path("w")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("db file: %v %v", fi, err)
	}
}

// Reads return 1,000 rows; the 1,001st sets truncated.
func TestRowCap(t *testing.T) {
	s := newSet(t)
	for _, n := range []int{MaxRows, MaxRows + 1} {
		q := fmt.Sprintf("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < %d) SELECT i FROM c", n)
		r := mustExec(t, s, q, "")
		if len(r.Rows) != MaxRows || r.Truncated != (n > MaxRows) {
			t.Errorf("%d rows: got %d, truncated %v", n, len(r.Rows), r.Truncated)
		}
	}
}

// A query that never ends is interrupted at the timeout.
func TestQueryTimeout(t *testing.T) {
	s := newSet(t)
	start := time.Now()
	_, err := s.Exec(context.Background(), "w",
		"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT count(*) FROM c", nil, Limits{QueryTimeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("endless CTE: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("interrupted after %v", d)
	}
	// The database is usable after.
	mustExec(t, s, "SELECT 1", "")
}

// Writes stop at the size cap, and the file stays within it.
func TestSizeCap(t *testing.T) {
	s := newSet(t)
	lim := Limits{MaxBytes: 64 << 10}
	ctx := context.Background()
	if _, err := s.Exec(ctx, "w", "CREATE TABLE b (x BLOB)", nil, lim); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = s.Exec(ctx, "w", "INSERT INTO b VALUES (zeroblob(4000))", nil, lim)
	}
	if !errors.Is(err, ErrFull) {
		t.Fatalf("past the cap: %v", err)
	}
	if fi, _ := os.Stat(s.Path("w")); fi.Size() > lim.MaxBytes {
		t.Fatalf("file is %d bytes, over the %d cap", fi.Size(), lim.MaxBytes)
	}
	// Nor can a statement raise the cap.
	if _, err := s.Exec(ctx, "w", "PRAGMA max_page_count = 100000", nil, lim); !errors.Is(err, ErrDenied) {
		t.Fatalf("raising the cap: %v", err)
	}
	// The default cap is 100 MB.
	s2 := newSet(t)
	r, err := s2.Exec(ctx, "w", "PRAGMA max_page_count", nil, Limits{})
	if err != nil || r.Rows[0][0].(int64)*4096 > DefaultMaxBytes || r.Rows[0][0].(int64)*4096 < DefaultMaxBytes-4096 {
		t.Fatalf("default cap: %+v %v", r, err)
	}
	// One value is capped too.
	if _, err := s2.Exec(ctx, "w", "SELECT zeroblob(17000000)", nil, Limits{}); err == nil {
		t.Fatal("a 17 MB value was made")
	}
}

// ATTACH, extension loading and pragmas that touch files or the schema's
// integrity are refused by SQLite's authorizer, in whatever spelling.
func TestGuards(t *testing.T) {
	s := newSet(t)
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	lib := filepath.Join(dir, "evil.so")
	mustExec(t, s, "CREATE TABLE t (x)", "")
	denied := []string{
		"ATTACH '" + other + "' AS o",
		"attach database '" + other + "' as o",
		"  AtTaCh/**/DATABASE\n'" + other + "'  AS   o  ",
		"ATTACH ':memory:' AS m",
		"ATTACH 'file:" + other + "?mode=rwc' AS o",
		"SELECT 1; ATTACH '" + other + "' AS o",
		"DETACH main",
		"SELECT load_extension('" + lib + "')",
		"select LOAD_EXTENSION('" + lib + "', 'init')",
		"PRAGMA writable_schema = ON",
		"pragma WRITABLE_SCHEMA=1",
		"PRAGMA main.writable_schema = 1",
		"PRAGMA journal_mode = OFF",
		"PRAGMA temp_store_directory = '" + dir + "'",
		"PRAGMA data_store_directory = '" + dir + "'",
		"PRAGMA mmap_size = 1000000",
		"PRAGMA schema_version = 1",
		"PRAGMA database_list",
		"PRAGMA trusted_schema = ON",
		"PRAGMA wal_checkpoint",
		"CREATE VIRTUAL TABLE v USING rtree(id, a, b)",
	}
	for _, q := range denied {
		if _, err := s.Exec(context.Background(), "w", q, nil, Limits{}); !errors.Is(err, ErrDenied) {
			t.Errorf("%q: %v, want refused by the authorizer", q, err)
		}
	}
	// VACUUM INTO writes another file: it needs an attached database.
	if _, err := s.Exec(context.Background(), "w", "VACUUM INTO '"+other+"'", nil, Limits{}); err == nil {
		t.Error("VACUUM INTO ran")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files made outside the database: %v", entries)
	}
	allowed := []string{
		"PRAGMA table_info(t)", "PRAGMA index_list('t')", "PRAGMA page_count", "PRAGMA user_version",
		"PRAGMA integrity_check", "SELECT * FROM pragma_table_info('t')", "PRAGMA foreign_keys",
		"SELECT json_extract('{\"a\":1}', '$.a')", "SELECT name FROM sqlite_schema",
	}
	for _, q := range allowed {
		if _, err := s.Exec(context.Background(), "w", q, nil, Limits{}); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
}

// FuzzExec: no statement or parameter list panics the guards or gets a
// file beside the database made.
func FuzzExec(f *testing.F) {
	for _, q := range []string{"SELECT ?", "ATTACH 'x' AS y", "PRAGMA writable_schema=1", "SELECT load_extension('x')", "CREATE TABLE t(x); INSERT INTO t VALUES (:a)"} {
		f.Add(q, `[1]`)
		f.Add(q, `{"a": "b"}`)
	}
	dir := f.TempDir()
	s := New(filepath.Join(dir, "dbs"))
	defer s.Close()
	f.Fuzz(func(t *testing.T, q, params string) {
		if strings.Contains(strings.ToLower(q), "vacuum") {
			return // rewrites the file: slow, and the guard is ATTACH's
		}
		_, _ = s.Exec(context.Background(), "w", q, json.RawMessage(params), Limits{QueryTimeout: 100 * time.Millisecond, MaxBytes: 1 << 20})
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Fatalf("%q made files: %v", q, entries)
		}
	})
}

// Remove closes the open handle and deletes the worker's directory; the
// name opens an empty database afterwards, and other workers keep theirs.
func TestRemove(t *testing.T) {
	s := newSet(t)
	ctx := context.Background()
	for _, w := range []string{"w", "other"} {
		if _, err := s.Exec(ctx, w, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", nil, Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Dir(s.Path("w"))
	if err := s.Remove("w"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the worker's directory is still there: %v", err)
	}
	if r, err := s.Exec(ctx, "other", "SELECT count(*) FROM t", nil, Limits{}); err != nil || r.Rows[0][0] != int64(1) {
		t.Fatalf("the other worker's database: %v %+v", err, r)
	}
	tables, err := s.Schema(ctx, "w", Limits{})
	if err != nil || len(tables) != 0 {
		t.Fatalf("reopened under the name: %v %+v", err, tables)
	}
	// Removing again, or a worker that never had a database, is no error.
	for _, w := range []string{"w", "never"} {
		if err := s.Remove(w); err != nil {
			t.Errorf("Remove(%q): %v", w, err)
		}
	}
	// A name that is not one path element removes nothing.
	for _, bad := range []string{"", "..", "../other", "a/b", "Other", "."} {
		if err := s.Remove(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Remove(%q): %v", bad, err)
		}
	}
	if _, err := os.Stat(s.Path("other")); err != nil {
		t.Fatalf("the other worker's file: %v", err)
	}
}

// TestRemoveFails: a directory that cannot be deleted is an error naming
// it and why, the database is closed all the same, Left says the directory
// is still there, and Remove succeeds once the cause is gone.
func TestRemoveFails(t *testing.T) {
	s := newSet(t)
	ctx := context.Background()
	mustExec(t, s, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", "null")
	if s.Left("never") || s.Left("../w") || s.Left("") || !s.Left("w") {
		t.Fatal("Left: only w's directory is there")
	}
	undo := testfs.Undeletable(t, s.Dir("w"))
	err := s.Remove("w")
	if err == nil || !strings.Contains(err.Error(), s.Dir("w")) || !errors.Is(err, os.ErrPermission) {
		t.Fatalf("Remove of an undeletable directory: %v", err)
	}
	if !s.Left("w") {
		t.Fatal("Left: the directory is gone")
	}
	s.mu.Lock()
	open := s.dbs["w"] != nil
	s.mu.Unlock()
	if open {
		t.Fatal("the database is still open")
	}
	undo()
	if err := s.Remove("w"); err != nil || s.Left("w") {
		t.Fatalf("Remove once deletable: %v, left %v", err, s.Left("w"))
	}
	if tables, err := s.Schema(ctx, "w", Limits{}); err != nil || len(tables) != 0 {
		t.Fatalf("reopened under the name: %v %+v", err, tables)
	}
}

// A read's rows are bounded in bytes as well as in count, at the edge:
// a result of exactly MaxResultBytes (as counted) passes, one byte more
// fails with ErrResultTooLarge.
func TestResultBytesCap(t *testing.T) {
	s := newSet(t)
	ctx := context.Background()
	// Columns ["s"]: 2 + len("s")+3; the row: 2 + len(value)+3.
	const l = 1000
	q := fmt.Sprintf("SELECT printf('%%.%dc', 'x') AS s", l)
	at := int64(2 + 1 + 3 + 2 + l + 3)
	for _, tc := range []struct {
		cap int64
		ok  bool
	}{{at, true}, {at - 1, false}, {at + 1, true}} {
		r, err := s.Exec(ctx, "w", q, nil, Limits{MaxResultBytes: tc.cap})
		if tc.ok && (err != nil || len(r.Rows) != 1 || len(r.Rows[0][0].(string)) != l) {
			t.Errorf("cap %d: %v", tc.cap, err)
		}
		if !tc.ok && !errors.Is(err, ErrResultTooLarge) {
			t.Errorf("cap %d: %v, want ErrResultTooLarge", tc.cap, err)
		}
	}
	// The set's defaults apply where the call's limits say nothing.
	s2 := NewWithDefaults(t.TempDir(), Limits{MaxResultBytes: at - 1})
	defer s2.Close()
	if _, err := s2.Exec(ctx, "w", q, nil, Limits{}); !errors.Is(err, ErrResultTooLarge) {
		t.Errorf("set default: %v", err)
	}
}

// A read of far more than the cap (300 rows of 1 MB) is refused after a
// few rows: the memory it takes is measured, not only its row count.
func TestResultBytesMemory(t *testing.T) {
	s := newSet(t)
	ctx := context.Background()
	q := "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 300) SELECT i, zeroblob(1000000) FROM c"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := s.Exec(ctx, "w", q, nil, Limits{})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrResultTooLarge) {
		t.Fatalf("300 MB read: %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Fatalf("the refused read allocated %d MiB (the cap is %d MiB)", got>>20, DefaultMaxResultBytes>>20)
	}
	if !strings.Contains(err.Error(), "max_result_bytes") {
		t.Errorf("the error does not name the limit: %v", err)
	}
}

// Temporary tables count against max_bytes with the file: they may grow
// only into the room the file leaves, the file only into what they leave,
// and a call that fills both past the cap loses its temporary tables.
func TestSizeCapCountsTempTables(t *testing.T) {
	s := newSet(t)
	lim := Limits{MaxBytes: 256 << 10}
	ctx := context.Background()
	exec := func(q string) error { _, err := s.Exec(ctx, "w", q, nil, lim); return err }
	pages := func() (main, temp int64) {
		r, err := s.Exec(ctx, "w", "SELECT (SELECT page_count FROM pragma_page_count), (SELECT * FROM temp.pragma_page_count)", nil, lim)
		if err != nil {
			t.Fatal(err)
		}
		return r.Rows[0][0].(int64), r.Rows[0][1].(int64)
	}
	if err := exec("CREATE TABLE b (x BLOB); INSERT INTO b VALUES (zeroblob(40000)); CREATE TEMP TABLE tt (x BLOB)"); err != nil {
		t.Fatal(err)
	}
	var err error
	n := 0
	for ; n < 100 && err == nil; n++ {
		err = exec("INSERT INTO temp.tt VALUES (zeroblob(4000))")
	}
	if !errors.Is(err, ErrFull) {
		t.Fatalf("temporary table past max_bytes after %d inserts: %v", n, err)
	}
	main, temp := pages()
	if (main+temp)*4096 > lim.MaxBytes {
		t.Fatalf("file and temp tables are %d pages, over %d bytes", main+temp, lim.MaxBytes)
	}
	// The file cannot take the room the temp table holds.
	if err := exec("INSERT INTO b VALUES (zeroblob(8000))"); !errors.Is(err, ErrFull) {
		t.Fatalf("file past the room the temp table left: %v", err)
	}
	// Nor can a statement change where temp tables live or how large.
	for _, q := range []string{"PRAGMA temp_store = MEMORY", "PRAGMA temp.max_page_count = 100000", "PRAGMA temp_store = 1"} {
		if err := exec(q); !errors.Is(err, ErrDenied) {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// One call that grows the file and a temporary table each into the same
// room is caught after it: the temporary tables are dropped and the call
// says ErrFull; the next call starts within the cap.
func TestSizeCapOneCallFillsBoth(t *testing.T) {
	s := newSet(t)
	lim := Limits{MaxBytes: 256 << 10}
	ctx := context.Background()
	if _, err := s.Exec(ctx, "w", "CREATE TABLE b (x BLOB)", nil, lim); err != nil {
		t.Fatal(err)
	}
	q := "CREATE TEMP TABLE tt (x BLOB); INSERT INTO temp.tt VALUES (zeroblob(150000)); INSERT INTO b VALUES (zeroblob(150000))"
	if _, err := s.Exec(ctx, "w", q, nil, lim); !errors.Is(err, ErrFull) {
		t.Fatalf("both past the cap in one call: %v", err)
	}
	if _, err := s.Exec(ctx, "w", "SELECT count(*) FROM temp.tt", nil, lim); err == nil {
		t.Fatal("the temporary table outlived the call that broke the cap")
	}
	// At the edge within one call: room for both is fine.
	if _, err := s.Exec(ctx, "w", "CREATE TEMP TABLE t2 (x BLOB); INSERT INTO temp.t2 VALUES (zeroblob(20000))", nil, lim); err != nil {
		t.Fatalf("a small temp table after: %v", err)
	}
}

// The schema is held to the read cap too.
func TestSchemaBytesCap(t *testing.T) {
	s := newSet(t)
	ctx := context.Background()
	for i := range 20 {
		if _, err := s.Exec(ctx, "w", fmt.Sprintf("CREATE TABLE t%d (a_long_column_name_%d TEXT, b INTEGER)", i, i), nil, Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Schema(ctx, "w", Limits{MaxResultBytes: 1024}); !errors.Is(err, ErrResultTooLarge) {
		t.Fatalf("a schema past the cap: %v", err)
	}
	if tables, err := s.Schema(ctx, "w", Limits{}); err != nil || len(tables) != 20 {
		t.Fatalf("within the cap: %d %v", len(tables), err)
	}
}
