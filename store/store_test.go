package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

// openTest opens a Store on a new file under t.TempDir and closes it when the
// test ends.
func openTest(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "toolcage.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// fullTool returns a tool with every field set.
func fullTool(name string) *Tool {
	return &Tool{
		Name:        name,
		Description: "Look up DNS records for a domain",
		Kind:        "shell",
		Category:    "Network",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"domain":{"type":"string"}}}`),
		Permissions: []string{"network", "shell"},
		Secrets:     []string{"dns_token"},
		Approval:    "preApproved",
		Isolation:   "process",
		Limits:      json.RawMessage(`{"timeout":"10s","memory":"64MiB"}`),
		Spec:        json.RawMessage(`{"command":"dig +short {{.domain}} | head -n1 && echo \"<done>\""}`),
		Status:      StatusActive,
		CreatedBy:   CreatorUser,
		Version:     1,
		UsageCount:  7,
		LastUsedAt:  time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC),
	}
}

// fullExecution returns an execution with every field set.
func fullExecution(tool string, started time.Time) *Execution {
	return &Execution{
		Tool:        tool,
		Version:     3,
		CallerID:    "agent-7",
		CallerType:  "worker",
		Worker:      "ops",
		TokenID:     "abcdefgh",
		Session:     "s-1",
		Arguments:   json.RawMessage(`{"domain": "example.com", "token": "[REDACTED]"}`),
		Outcome:     OutcomeFailed,
		ErrorCode:   "limit_exceeded",
		Limit:       "memory",
		Error:       "memory limit of 64MiB exceeded",
		Duration:    1234567 * time.Nanosecond,
		OutputBytes: 4096,
		StartedAt:   started,
		FinishedAt:  started.Add(1234567 * time.Nanosecond),
	}
}

// equalTools reports whether a and b hold the same values, times compared
// with Equal.
func equalTools(a, b *Tool) bool {
	if a == nil || b == nil {
		return a == b
	}
	ac, bc := *a, *b
	for _, p := range [][2]*time.Time{
		{&ac.LastUsedAt, &bc.LastUsedAt}, {&ac.CreatedAt, &bc.CreatedAt}, {&ac.UpdatedAt, &bc.UpdatedAt},
	} {
		if !p[0].Equal(*p[1]) {
			return false
		}
		*p[0], *p[1] = time.Time{}, time.Time{}
	}
	return reflect.DeepEqual(ac, bc)
}

func equalExecutions(a, b *Execution) bool {
	ac, bc := *a, *b
	if !ac.StartedAt.Equal(bc.StartedAt) || !ac.FinishedAt.Equal(bc.FinishedAt) {
		return false
	}
	ac.StartedAt, bc.StartedAt, ac.FinishedAt, bc.FinishedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return reflect.DeepEqual(ac, bc)
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "toolcage")
	path := filepath.Join(dir, "toolcage.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if err := s.CreateTool(context.Background(), fullTool("dns_lookup")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want os.FileMode
	}{
		{dir, 0o700 | os.ModeDir},
		{filepath.Dir(dir), 0o700 | os.ModeDir},
		{path, 0o600},
		{path + "-wal", 0o600},
		{path + "-shm", 0o600},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Errorf("stat: %v", err)
			continue
		}
		if got := fi.Mode() & (os.ModeDir | os.ModePerm); got != c.want {
			t.Errorf("%s: mode %v, want %v", c.path, got, c.want)
		}
	}
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
}

func TestOpenNarrowsLooseFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toolcage.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("Open(\"\") = %v, want ErrInvalid", err)
	}
	notDB := filepath.Join(t.TempDir(), "not.db")
	if err := os.WriteFile(notDB, []byte("this is not a SQLite database, not even close to one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(ctx, notDB); err == nil {
		s.Close()
		t.Error("Open on a non-database file succeeded")
	}
}

// TestOpenOddPath checks that URI syntax in a file name is taken literally.
func TestOpenOddPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "we?ird#name%20.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := s.CreateTool(context.Background(), fullTool("a")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at the literal path: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("files in dir = %q, want only the database", names)
	}
}

func TestConnectionSettings(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	for _, c := range []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"busy_timeout", "5000"},
		{"synchronous", "1"}, // NORMAL
		{"query_only", "0"},
	} {
		var got string
		if err := s.wdb.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("writer PRAGMA %s = %s, want %s", c.pragma, got, c.want)
		}
	}
	for _, c := range []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"busy_timeout", "5000"},
		{"query_only", "1"},
	} {
		var got string
		if err := s.rdb.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("reader PRAGMA %s = %s, want %s", c.pragma, got, c.want)
		}
	}
	if _, err := s.rdb.ExecContext(ctx, `DELETE FROM tools`); err == nil {
		t.Error("a read connection could write")
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "toolcage.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var tools []*Tool
	for _, name := range []string{"alpha", "beta", "gamma"} {
		tool := fullTool(name)
		if err := s.CreateTool(ctx, tool); err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	tools[1].Description = "second version"
	tools[1].Version = 2
	if err := s.UpdateTool(ctx, tools[1], true); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2025, 6, 1, 12, 0, 0, 1, time.UTC)
	var execs []*Execution
	for i := range 10 {
		e := fullExecution(tools[i%3].Name, base.Add(time.Duration(i)*time.Second))
		if err := s.RecordExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
		execs = append(execs, e)
	}
	before, _, err := s.ListTools(ctx, ToolFilter{})
	if err != nil {
		t.Fatal(err)
	}
	beforeVersions, err := s.ToolVersions(ctx, "beta")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("WAL is %d bytes after Close, want it checkpointed", fi.Size())
	}

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	after, total, err := s.ListTools(ctx, ToolFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if total != len(before) || len(after) != len(before) {
		t.Fatalf("after reopen: %d tools (total %d), want %d", len(after), total, len(before))
	}
	for i := range before {
		if !equalTools(after[i], before[i]) {
			t.Errorf("tool %d after reopen:\n got %+v\nwant %+v", i, after[i], before[i])
		}
	}
	afterVersions, err := s.ToolVersions(ctx, "beta")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(afterVersions, beforeVersions) {
		t.Errorf("versions after reopen differ:\n got %+v\nwant %+v", afterVersions, beforeVersions)
	}
	got, err := s.ListExecutions(ctx, ExecutionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(execs) {
		t.Fatalf("after reopen: %d executions, want %d", len(got), len(execs))
	}
	slices.Reverse(got) // newest first → oldest first, the recording order
	for i := range execs {
		if !equalExecutions(got[i], execs[i]) {
			t.Errorf("execution %d after reopen:\n got %+v\nwant %+v", i, got[i], execs[i])
		}
	}
}

// appliedMigrations returns schema_migrations as version → applied_at.
func appliedMigrations(t *testing.T, s *Store) map[int]int64 {
	t.Helper()
	rows, err := s.rdb.Query(`SELECT version, applied_at FROM schema_migrations`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[int]int64{}
	for rows.Next() {
		var v int
		var at int64
		if err := rows.Scan(&v, &at); err != nil {
			t.Fatal(err)
		}
		m[v] = at
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMigrationsIdempotentOnReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "toolcage.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	first := appliedMigrations(t, s)
	if len(first) != len(migrations) {
		t.Fatalf("applied %d migrations, want %d", len(first), len(migrations))
	}
	if err := s.CreateTool(ctx, fullTool("kept")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s, err = Open(ctx, path)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		if again := appliedMigrations(t, s); !reflect.DeepEqual(again, first) {
			t.Errorf("schema_migrations changed on reopen: %v, was %v", again, first)
		}
		if _, err := s.GetTool(ctx, "kept"); err != nil {
			t.Errorf("tool lost on reopen: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMigrateAppliesTheRest(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	// The store is at len(migrations); a newer program brings two more.
	newer := append(slices.Clone(migrations),
		`CREATE TABLE future_things (id TEXT PRIMARY KEY) STRICT`,
		`ALTER TABLE future_things ADD COLUMN tool TEXT NOT NULL DEFAULT ''; CREATE INDEX future_things_tool ON future_things (tool)`,
	)
	if err := migrate(ctx, s.wdb, newer, time.Now()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if got := appliedMigrations(t, s); len(got) != len(newer) {
		t.Errorf("applied %d migrations, want %d", len(got), len(newer))
	}
	if _, err := s.wdb.ExecContext(ctx, `INSERT INTO future_things (id, tool) VALUES ('a', 'b')`); err != nil {
		t.Errorf("migrated table unusable: %v", err)
	}
	// Running it again changes nothing.
	if err := migrate(ctx, s.wdb, newer, time.Now()); err != nil {
		t.Fatalf("migrate again: %v", err)
	}
	// The older program refuses the newer schema.
	if err := migrate(ctx, s.wdb, migrations, time.Now()); err == nil {
		t.Error("migrate with fewer migrations than applied succeeded")
	}
}

func TestMigrationFailureRollsBack(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	bad := append(slices.Clone(migrations),
		`CREATE TABLE half (x INTEGER); INSERT INTO no_such_table VALUES (1)`)
	if err := migrate(ctx, s.wdb, bad, time.Now()); err == nil {
		t.Fatal("broken migration succeeded")
	}
	if got := appliedMigrations(t, s); len(got) != len(migrations) {
		t.Errorf("%d migrations recorded, want %d", len(got), len(migrations))
	}
	var n int
	if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM sqlite_schema WHERE name = 'half'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("a failed migration left a table behind")
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "toolcage.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.wdb.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (999, 0)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(ctx, path); err == nil {
		s.Close()
		t.Fatal("Open accepted a schema newer than the program")
	}
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "toolcage.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.RecordExecution(ctx, fullExecution("a", time.Now())); !errors.Is(err, ErrClosed) {
		t.Errorf("RecordExecution after Close = %v, want ErrClosed", err)
	}
	if _, err := s.GetTool(ctx, "a"); err == nil {
		t.Error("GetTool after Close succeeded")
	}
	if err := s.CreateTool(ctx, fullTool("a")); err == nil {
		t.Error("CreateTool after Close succeeded")
	}
}
