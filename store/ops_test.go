package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// allowedApproval stores an approval of call decided as status at decided.
func allowedApproval(t *testing.T, s *Store, id string, call ApprovedCall, status string, decided time.Time) {
	t.Helper()
	a := &Approval{ID: id, Tool: call.Tool, Version: call.Version, CallerID: call.CallerID, CallerType: call.CallerType,
		Worker: call.Worker, DefHash: call.DefHash, ArgsHash: call.ArgsHash, Rendered: "x", Status: status, CreatedAt: decided.Add(-time.Minute), DecidedAt: decided}
	if err := s.CreateApproval(context.Background(), a); err != nil {
		t.Fatal(err)
	}
}

func TestUseAllowedApproval(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	call := ApprovedCall{Tool: "greet", Version: 2, DefHash: "d1", CallerID: "worker:ops", CallerType: "llm", Worker: "ops", ArgsHash: "h1"}
	since := now.Add(-10 * time.Minute)
	other := func(f func(*ApprovedCall)) ApprovedCall { c := call; f(&c); return c }
	for _, tt := range []struct {
		name    string
		stored  ApprovedCall
		status  string
		decided time.Time
		want    bool
	}{
		{"exact call, just decided", call, ApprovalAllowed, now, true},
		{"decided exactly at the edge of validity", call, ApprovalAllowed, since, true},
		{"validity over by 1ns", call, ApprovalAllowed, since.Add(-time.Nanosecond), false},
		{"pending", call, ApprovalPending, time.Time{}, false},
		{"denied", call, ApprovalDenied, now, false},
		{"expired", call, ApprovalExpired, now, false},
		{"other arguments", other(func(c *ApprovedCall) { c.ArgsHash = "h2" }), ApprovalAllowed, now, false},
		{"other version", other(func(c *ApprovedCall) { c.Version = 1 }), ApprovalAllowed, now, false},
		{"other definition", other(func(c *ApprovedCall) { c.DefHash = "d2" }), ApprovalAllowed, now, false},
		{"no definition hash (from before it was kept)", other(func(c *ApprovedCall) { c.DefHash = "" }), ApprovalAllowed, now, false},
		{"other caller", other(func(c *ApprovedCall) { c.CallerID = "worker:dev" }), ApprovalAllowed, now, false},
		{"other caller type", other(func(c *ApprovedCall) { c.CallerType = "user" }), ApprovalAllowed, now, false},
		{"other worker", other(func(c *ApprovedCall) { c.Worker = "dev" }), ApprovalAllowed, now, false},
		{"other tool", other(func(c *ApprovedCall) { c.Tool = "greet2" }), ApprovalAllowed, now, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t)
			s.now = func() time.Time { return now }
			allowedApproval(t, s, "abcd2345", tt.stored, tt.status, tt.decided)
			a, err := s.UseAllowedApproval(ctx, call, since)
			if err != nil {
				t.Fatal(err)
			}
			if (a != nil) != tt.want {
				t.Fatalf("used %+v, want %v", a, tt.want)
			}
			if !tt.want {
				return
			}
			if a.ID != "abcd2345" || !a.UsedAt.Equal(now) {
				t.Errorf("used approval %+v", a)
			}
			// Once only: neither a second retry nor the waiting caller.
			if again, err := s.UseAllowedApproval(ctx, call, since); err != nil || again != nil {
				t.Errorf("second use: %+v %v", again, err)
			}
			if ok, err := s.MarkApprovalUsed(ctx, a.ID); err != nil || ok {
				t.Errorf("mark used after use: %v %v", ok, err)
			}
		})
	}

	s := openTest(t)
	s.now = func() time.Time { return now }
	// Two allowed approvals of the same call: the oldest goes first, one
	// per retry.
	allowedApproval(t, s, "bbbb2222", call, ApprovalAllowed, now.Add(-time.Minute))
	allowedApproval(t, s, "aaaa2222", call, ApprovalAllowed, now.Add(-2*time.Minute))
	var used []string
	for range 3 {
		a, err := s.UseAllowedApproval(ctx, call, since)
		if err != nil {
			t.Fatal(err)
		}
		if a != nil {
			used = append(used, a.ID)
		}
	}
	if !slices.Equal(used, []string{"aaaa2222", "bbbb2222"}) {
		t.Errorf("used %v", used)
	}
	// The waiting caller marks its own approval used; a retry then finds none.
	allowedApproval(t, s, "cccc2222", call, ApprovalAllowed, now)
	if ok, err := s.MarkApprovalUsed(ctx, "cccc2222"); err != nil || !ok {
		t.Fatalf("mark used: %v %v", ok, err)
	}
	if a, err := s.UseAllowedApproval(ctx, call, since); err != nil || a != nil {
		t.Errorf("use after mark: %+v %v", a, err)
	}
	if ok, err := s.MarkApprovalUsed(ctx, "nope2222"); err != nil || ok {
		t.Errorf("mark unknown: %v %v", ok, err)
	}
	if _, err := s.UseAllowedApproval(ctx, ApprovedCall{Tool: "greet"}, since); !errors.Is(err, ErrInvalid) {
		t.Errorf("no args hash: %v", err)
	}
}

// TestUseAllowedApprovalRace: of many identical retries at once, exactly
// one gets the approval.
func TestUseAllowedApprovalRace(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	call := ApprovedCall{Tool: "greet", Version: 1, DefHash: "d", CallerID: "uid:0", CallerType: "user", ArgsHash: "h"}
	allowedApproval(t, s, "abcd2345", call, ApprovalAllowed, time.Now())
	got := make(chan bool)
	for range 8 {
		go func() {
			a, err := s.UseAllowedApproval(ctx, call, time.Now().Add(-time.Hour))
			if err != nil {
				t.Error(err)
			}
			got <- a != nil
		}()
	}
	n := 0
	for range 8 {
		if <-got {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d retries got the approval, want 1", n)
	}
}

// TestMigration7MarksOldAllowedUsed: approvals allowed before version 7
// had their waiting callers; none is left for a retry.
func TestMigration7MarksOldAllowedUsed(t *testing.T) {
	ctx := context.Background()
	fresh := openTest(t)
	// Take the database back to version 6, with an allowed approval.
	db := fresh.wdb
	for _, stmt := range []string{`DROP INDEX approvals_unused_allowed`, `DROP INDEX executions_worker_started`,
		`DROP INDEX executions_caller_started`, `DROP INDEX executions_outcome_started`,
		`ALTER TABLE approvals DROP COLUMN used_at`, `ALTER TABLE approvals DROP COLUMN worker`,
		// and back past the later versions too, so that they run again.
		`ALTER TABLE tools DROP COLUMN mounts`,                                              // 8
		`DROP INDEX executions_parent`, `ALTER TABLE executions DROP COLUMN parent_call_id`, // 9
		`DROP TABLE worker_state`,                                                                                         // 10
		`ALTER TABLE tools DROP COLUMN disabled_by`,                                                                       // 11
		`DROP INDEX always_approvals_worker`, `ALTER TABLE approvals DROP COLUMN def_hash`, `DROP TABLE always_approvals`, // 12
		alwaysApprovalsV3,
		`ALTER TABLE approvals DROP COLUMN change`, // 13
		`DELETE FROM schema_migrations WHERE version >= 7`,
		`INSERT INTO approvals (id, tool, version, args_hash, status, created_at, decided_at) VALUES ('old22222', 'greet', 1, 'h', 'allowed', 1, 5)`,
		`INSERT INTO approvals (id, tool, version, args_hash, status, created_at) VALUES ('pend2222', 'greet', 1, 'h', 'pending', 1)`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := migrate(ctx, db, migrations, time.Now()); err != nil {
		t.Fatal(err)
	}
	old, err := fresh.GetApproval(ctx, "old22222")
	if err != nil || old.UsedAt.UnixNano() != 5 {
		t.Errorf("old allowed approval: %+v %v", old, err)
	}
	if p, err := fresh.GetApproval(ctx, "pend2222"); err != nil || !p.UsedAt.IsZero() {
		t.Errorf("pending approval: %+v %v", p, err)
	}
}

// alwaysApprovalsV3 is the always_approvals table of versions 3 to 11.
const alwaysApprovalsV3 = `CREATE TABLE always_approvals (
	tool       TEXT    NOT NULL,
	version    INTEGER NOT NULL,
	args_hash  TEXT    NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (tool, version, args_hash)
) STRICT, WITHOUT ROWID`

// TestMigration12OldApprovalsMatchNothing: an approval for good from
// before version 12 names a tool by name and version only, for any worker;
// it cannot be attributed to a worker or a definition, so it is kept but
// matches no call, and old approval rows (no definition hash) neither
// serve a retry nor approve anything for good when allowed.
func TestMigration12OldApprovalsMatchNothing(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	db := s.wdb
	for _, stmt := range []string{
		`DROP INDEX always_approvals_worker`, `ALTER TABLE approvals DROP COLUMN def_hash`, `DROP TABLE always_approvals`,
		alwaysApprovalsV3,
		`ALTER TABLE approvals DROP COLUMN change`,
		`DELETE FROM schema_migrations WHERE version >= 12`,
		`INSERT INTO always_approvals (tool, version, args_hash, created_at) VALUES ('deploy', 1, 'h', 1), ('deploy', 2, 'h', 2)`,
		`INSERT INTO approvals (id, tool, version, caller_id, caller_type, worker, args_hash, status, created_at, decided_at)
			VALUES ('old22222', 'deploy', 1, 'worker:ops', 'llm', 'ops', 'h', 'allowed', 1, 5)`,
		`INSERT INTO approvals (id, tool, version, caller_id, caller_type, worker, args_hash, status, created_at)
			VALUES ('pend2222', 'deploy', 1, 'worker:ops', 'llm', 'ops', 'h2', 'pending', 1)`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := migrate(ctx, db, migrations, time.Now()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM always_approvals WHERE def_hash = '' AND worker = ''`).Scan(&n); err != nil || n != 1 {
		t.Errorf("old approvals for good kept: %d %v", n, err)
	}
	for _, k := range []AlwaysKey{
		{Tool: "deploy", Worker: "", DefHash: "d", ArgsHash: "h", Version: 1},
		{Tool: "deploy", Worker: "ops", DefHash: "d", ArgsHash: "h", Version: 1},
		{Tool: "deploy", Worker: "ops", DefHash: "d", ArgsHash: "h", Version: 2},
	} {
		if ok, err := s.HasAlwaysApproval(ctx, k); ok || err != nil {
			t.Errorf("an old approval for good matched %+v: %v %v", k, ok, err)
		}
	}
	for _, d := range []string{"d", "x"} {
		call := ApprovedCall{Tool: "deploy", Version: 1, DefHash: d, CallerID: "worker:ops", CallerType: "llm", Worker: "ops", ArgsHash: "h"}
		if a, err := s.UseAllowedApproval(ctx, call, time.Unix(0, 0)); a != nil || err != nil {
			t.Errorf("an old allowed approval served a retry of %+v: %+v %v", call, a, err)
		}
	}
	if a, err := s.AllowApprovalAlways(ctx, "pend2222", "uid:1"); err != nil || a.Status != ApprovalAllowed || a.DefHash != "" {
		t.Fatalf("allowing an old pending approval: %+v %v", a, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM always_approvals`).Scan(&n); err != nil || n != 1 {
		t.Errorf("allowing an old approval for good added a row: %d rows, %v", n, err)
	}
}

// auditFixture records executions across tools, workers, callers and
// outcomes, one a minute from base, and returns them in order.
func auditFixture(t *testing.T, s *Store, base time.Time, n int) []*Execution {
	t.Helper()
	outcomes := []string{OutcomeOK, OutcomeError, OutcomeFailed, OutcomeRefused}
	var all []*Execution
	for i := range n {
		e := &Execution{
			ID: fmt.Sprintf("e%04d", i), Tool: []string{"alpha", "beta", "gamma"}[i%3], Version: 1,
			CallerID: []string{"uid:0", "worker:ops", "alice"}[i%3], CallerType: []string{"user", "llm", "user"}[i%3],
			Worker: []string{"", "ops", ""}[i%3], Outcome: outcomes[i%4],
			StartedAt: base.Add(time.Duration(i) * time.Minute), FinishedAt: base.Add(time.Duration(i)*time.Minute + time.Second),
		}
		if err := s.RecordExecution(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		all = append(all, e)
	}
	return all
}

func ids(es []*Execution) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func TestExecutionFilters(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	all := auditFixture(t, s, base, 24)
	for _, tt := range []struct {
		name string
		f    ExecutionFilter
	}{
		{"none", ExecutionFilter{}},
		{"tool", ExecutionFilter{Tool: "beta"}},
		{"worker", ExecutionFilter{Worker: "ops"}},
		{"caller", ExecutionFilter{CallerID: "alice"}},
		{"caller type", ExecutionFilter{CallerType: "user"}},
		{"caller id and type", ExecutionFilter{CallerID: "worker:ops", CallerType: "llm"}},
		{"outcome", ExecutionFilter{Outcome: OutcomeRefused}},
		{"since, inclusive", ExecutionFilter{Since: base.Add(20 * time.Minute)}},
		{"until, exclusive", ExecutionFilter{Until: base.Add(3 * time.Minute)}},
		{"since 1ns after a start", ExecutionFilter{Since: base.Add(20*time.Minute + 1)}},
		{"until 1ns after a start", ExecutionFilter{Until: base.Add(3*time.Minute + 1)}},
		{"window and tool and outcome", ExecutionFilter{Tool: "alpha", Outcome: OutcomeOK, Since: base.Add(time.Minute), Until: base.Add(23 * time.Minute)}},
		{"nothing matches", ExecutionFilter{Tool: "alpha", Worker: "ops"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, e := range all {
				if tt.f.Match(e) {
					want = append(want, e.ID)
				}
			}
			if tt.name != "nothing matches" && len(want) == 0 {
				t.Fatal("the filter matches nothing in the fixture: the case tests nothing")
			}
			var exported []*Execution
			if err := s.ExportExecutions(ctx, tt.f, func(e *Execution) error { exported = append(exported, e); return nil }); err != nil {
				t.Fatal(err)
			}
			if got := ids(exported); !slices.Equal(got, want) {
				t.Errorf("export %v, want %v", got, want)
			}
			f := tt.f
			f.Limit = 100
			listed, err := s.ListExecutions(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			got := ids(listed)
			slices.Reverse(got) // newest first
			if !slices.Equal(got, want) {
				t.Errorf("list %v, want %v", got, want)
			}
		})
	}
	// The hand-written expectations the table leans on.
	var f ExecutionFilter
	f = ExecutionFilter{Until: base.Add(3 * time.Minute)}
	if got := countMatch(all, f); got != 3 {
		t.Errorf("until: %d", got)
	}
	f = ExecutionFilter{Since: base.Add(20 * time.Minute)}
	if got := countMatch(all, f); got != 4 {
		t.Errorf("since: %d", got)
	}
	if countMatch(all, ExecutionFilter{Outcome: OutcomeRefused}) != 6 {
		t.Error("outcome")
	}
	if (ExecutionFilter{Since: base}).Match(&Execution{}) {
		t.Error("a record with no start time matched a time window")
	}
}

func countMatch(all []*Execution, f ExecutionFilter) int {
	n := 0
	for _, e := range all {
		if f.Match(e) {
			n++
		}
	}
	return n
}

// TestExportPages: an export longer than a page comes whole and in order,
// a limit cuts it at its edge, and fn's error stops it.
func TestExportPages(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	all := auditFixture(t, s, base, 2*exportPage+3)
	for _, limit := range []int{0, 1, exportPage - 1, exportPage, exportPage + 1, 2*exportPage + 3, 5000} {
		var got []*Execution
		err := s.ExportExecutions(ctx, ExecutionFilter{Limit: limit}, func(e *Execution) error { got = append(got, e); return nil })
		if err != nil {
			t.Fatal(err)
		}
		want := len(all)
		if limit > 0 {
			want = min(limit, len(all))
		}
		if len(got) != want || !slices.Equal(ids(got), ids(all[:want])) {
			t.Errorf("limit %d: %d records, want %d in order", limit, len(got), want)
		}
	}
	stop := errors.New("enough")
	n := 0
	err := s.ExportExecutions(ctx, ExecutionFilter{}, func(*Execution) error {
		if n++; n == exportPage+2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != exportPage+2 {
		t.Errorf("stopped export: %v after %d", err, n)
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	auditFixture(t, s, base, 12)
	if err := s.RecordExecution(ctx, &Execution{ID: "nostart", Tool: "alpha", Outcome: OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	cut := base.Add(5 * time.Minute) // e0000..e0004 are older
	if n, err := s.PruneExecutions(ctx, cut, 2); err != nil || n != 2 {
		t.Fatalf("first batch: %d %v", n, err)
	}
	if n, err := s.PruneExecutions(ctx, cut, 2); err != nil || n != 2 {
		t.Fatalf("second batch: %d %v", n, err)
	}
	if n, err := s.PruneExecutions(ctx, cut, 2); err != nil || n != 1 {
		t.Fatalf("last batch: %d %v", n, err)
	}
	if n, err := s.PruneExecutions(ctx, cut, 0); err != nil || n != 0 {
		t.Fatalf("nothing left: %d %v", n, err)
	}
	var left []*Execution
	if err := s.ExportExecutions(ctx, ExecutionFilter{}, func(e *Execution) error { left = append(left, e); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{"e0005", "e0006", "e0007", "e0008", "e0009", "e0010", "e0011", "nostart"}
	if !slices.Equal(ids(left), want) {
		t.Errorf("left %v", ids(left))
	}

	for i, at := range []time.Time{base, base.Add(time.Hour)} {
		if err := s.RecordAdminAct(ctx, &AdminAct{ID: fmt.Sprintf("act%d", i), Act: "secret.set", Outcome: "ok", At: at}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.PruneAdminActs(ctx, base.Add(time.Minute), 0); err != nil || n != 1 {
		t.Fatalf("admin acts: %d %v", n, err)
	}
	if acts, err := s.ListAdminActs(ctx, 10, 0); err != nil || len(acts) != 1 || acts[0].ID != "act1" {
		t.Errorf("admin acts left: %+v %v", acts, err)
	}
}

// TestAuditFilterIndexes: each audit filter and the retention prune is
// served by an index, not a scan of the whole log.
func TestAuditFilterIndexes(t *testing.T) {

	s := openTest(t)
	since := time.Now()
	for _, tt := range []struct {
		f     ExecutionFilter
		index string
	}{
		{ExecutionFilter{Tool: "a", Since: since}, "executions_tool_started"},
		{ExecutionFilter{Worker: "w", Since: since}, "executions_worker_started"},
		{ExecutionFilter{CallerID: "c", Since: since}, "executions_caller_started"},
		{ExecutionFilter{Outcome: OutcomeOK, Since: since}, "executions_outcome_started"},
		{ExecutionFilter{Since: since}, "executions_started"},
	} {
		where, args := tt.f.where()
		plan := queryPlan(t, s, selectExecution+` WHERE `+where+` ORDER BY started_at DESC, rowid DESC LIMIT 50`, args...)
		if !strings.Contains(plan, "INDEX "+tt.index) {
			t.Errorf("%+v: plan %q does not use %s", tt.f, plan, tt.index)
		}
	}
	if plan := queryPlan(t, s, `SELECT rowid FROM executions WHERE started_at < ? ORDER BY started_at LIMIT 500`, 1); !strings.Contains(plan, "INDEX executions_started") {
		t.Errorf("prune plan %q", plan)
	}
	plan := queryPlan(t, s, `SELECT id FROM approvals WHERE tool = ? AND args_hash = ? AND status = 'allowed' AND used_at IS NULL
		AND version = ? AND caller_id = ? AND caller_type = ? AND worker = ? AND decided_at >= ? ORDER BY decided_at, id LIMIT 1`,
		"t", "h", 1, "c", "user", "", 0)
	if !strings.Contains(plan, "INDEX approvals_unused_allowed") {
		t.Errorf("approval retry plan %q", plan)
	}
}

func queryPlan(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	rows, err := s.rdb.Query(`EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}
