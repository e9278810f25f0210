package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestApprovedVersionKeptAndActivate(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	tool := &Tool{Name: "calc", Kind: "js", Status: StatusPendingApproval, CreatedBy: CreatorLLM, Version: 1}
	if err := s.CreateTool(ctx, tool); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetTool(ctx, "calc"); got.ApprovedVersion != 0 {
		t.Fatalf("pending tool approved at %d", got.ApprovedVersion)
	}
	if err := s.ActivateTool(ctx, "calc"); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTool(ctx, "calc")
	if err != nil || got.Status != StatusActive || got.ApprovedVersion != 1 {
		t.Fatalf("after activate: %v %+v", err, got)
	}
	// A change kept pending keeps the approved version the caller gives.
	got.Version, got.Status, got.Description = 2, StatusPendingApproval, "changed"
	if err := s.UpdateTool(ctx, got, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetTool(ctx, "calc"); got.ApprovedVersion != 1 || got.Version != 2 {
		t.Fatalf("after pending change: %+v", got)
	}
	if err := s.ActivateTool(ctx, "calc"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetTool(ctx, "calc"); got.ApprovedVersion != 2 {
		t.Fatalf("after second activate: approved %d", got.ApprovedVersion)
	}
	if err := s.ActivateTool(ctx, "missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("activate missing: %v", err)
	}
}

// TestMigrationApprovedVersionBackfill: rows from before migration 5 count
// as approved at their version when active or disabled, not when pending.
func TestMigrationApprovedVersionBackfill(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite3", dsn(filepath.Join(t.TempDir(), "old.db"), map[string]string{"_txlock": "immediate"}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// Stop just before the approved_version migration, wherever it lands
	// when branches merge.
	at := slices.IndexFunc(migrations, func(m string) bool { return strings.Contains(m, "ADD COLUMN approved_version") })
	if at < 1 {
		t.Fatal("no approved_version migration")
	}
	if err := migrate(ctx, db, migrations[:at], time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name, status string
		version      int
	}{{"a", StatusActive, 3}, {"d", StatusDisabled, 2}, {"p", StatusPendingApproval, 4}, {"r", StatusRejected, 1}} {
		if _, err := db.ExecContext(ctx, `INSERT INTO tools (name, status, version, created_at, updated_at)
			VALUES (?, ?, ?, 0, 0)`, r.name, r.status, r.version); err != nil {
			t.Fatal(err)
		}
	}
	if err := migrate(ctx, db, migrations, time.Now()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	want := map[string]int{"a": 3, "d": 2, "p": 0, "r": 0}
	for name, v := range want {
		var got int
		if err := db.QueryRowContext(ctx, `SELECT approved_version FROM tools WHERE name = ?`, name).Scan(&got); err != nil || got != v {
			t.Errorf("%s: approved_version %d (%v), want %d", name, got, err, v)
		}
	}
}
