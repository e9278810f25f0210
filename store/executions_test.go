package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRecordExecutionRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	started := time.Date(2025, 7, 8, 9, 10, 11, 121314151, time.UTC)
	in := fullExecution("dns_lookup", started)
	want := *in
	if err := s.RecordExecution(ctx, in); err != nil {
		t.Fatalf("RecordExecution: %v", err)
	}
	if len(in.ID) != 32 {
		t.Errorf("generated ID %q, want 32 hex digits", in.ID)
	}
	want.ID = in.ID
	got, err := s.ListExecutions(ctx, ExecutionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !equalExecutions(got[0], &want) {
		t.Fatalf("ListExecutions:\n got %+v\nwant %+v", got, &want)
	}
	// Arguments are kept byte for byte, as the caller scrubbed them.
	if string(got[0].Arguments) != string(want.Arguments) {
		t.Errorf("arguments %s, want %s", got[0].Arguments, want.Arguments)
	}

	// A caller-chosen ID is kept; zero values come back zero.
	bare := &Execution{ID: "call-1", Tool: "dns_lookup", Outcome: OutcomeRefused}
	if err := s.RecordExecution(ctx, bare); err != nil {
		t.Fatal(err)
	}
	got, err = s.ListExecutions(ctx, ExecutionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	// A record without a start time sorts after every timed one.
	if len(got) != 2 || !equalExecutions(got[1], bare) {
		t.Errorf("bare record:\n got %+v\nwant %+v", got, bare)
	}
}

func TestRecordExecutionInvalid(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	for _, c := range []struct {
		name string
		e    *Execution
	}{
		{"nil", nil},
		{"bad arguments", &Execution{Tool: "a", Outcome: OutcomeOK, Arguments: json.RawMessage(`{"a":`)}},
		{"start out of range", &Execution{Tool: "a", Outcome: OutcomeOK, StartedAt: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"finish out of range", &Execution{Tool: "a", Outcome: OutcomeOK, FinishedAt: time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := s.RecordExecution(ctx, c.e); !errors.Is(err, ErrInvalid) {
				t.Errorf("RecordExecution = %v, want ErrInvalid", err)
			}
		})
	}
	if n, _ := s.CountExecutions(ctx, ""); n != 0 {
		t.Errorf("%d invalid records stored", n)
	}
}

func TestRecordExecutionDuplicateID(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	e := fullExecution("a", time.Now())
	e.ID = "same"
	if err := s.RecordExecution(ctx, e); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordExecution(ctx, e); !errors.Is(err, ErrConflict) {
		t.Errorf("second RecordExecution = %v, want ErrConflict", err)
	}
}

// TestBatchIsolatesBadRecord checks that a record that cannot be written
// fails alone, not the records committed in the same batch.
func TestBatchIsolatesBadRecord(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	if err := s.CreateTool(ctx, &Tool{Name: "a"}); err != nil {
		t.Fatal(err)
	}
	var batch []*pendingExec
	for _, id := range []string{"one", "dup", "dup", "two"} {
		e := fullExecution("a", time.Now())
		e.ID = id
		p, err := s.pending(e)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, p)
	}
	s.commitBatch(batch, map[string]*toolUse{})
	for i, want := range []error{nil, nil, ErrConflict, nil} {
		if err := <-batch[i].done; !errors.Is(err, want) {
			t.Errorf("record %d: %v, want %v", i, err, want)
		}
	}
	if n, _ := s.CountExecutions(ctx, "a"); n != 3 {
		t.Errorf("%d records stored, want 3", n)
	}
	tool, err := s.GetTool(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if tool.UsageCount != 3 {
		t.Errorf("usage count %d, want 3", tool.UsageCount)
	}
}

func TestRecordExecutionUpdatesUsage(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 42, time.UTC)
	s.now = func() time.Time { return now }
	tool := &Tool{Name: "used", Status: StatusActive}
	if err := s.CreateTool(ctx, tool); err != nil {
		t.Fatal(err)
	}
	t1 := time.Date(2025, 6, 1, 0, 0, 0, 5, time.UTC)
	for _, c := range []struct {
		name     string
		e        *Execution
		count    int64
		lastUsed time.Time
	}{
		{"first call", &Execution{Tool: "used", Outcome: OutcomeOK, StartedAt: t1, FinishedAt: t1.Add(time.Second)}, 1, t1},
		{"older call never moves it back", &Execution{Tool: "used", Outcome: OutcomeError, StartedAt: t1.Add(-time.Hour)}, 2, t1},
		{"refused calls are not uses", &Execution{Tool: "used", Outcome: OutcomeRefused, StartedAt: t1.Add(time.Minute)}, 2, t1},
		{"failed calls are", &Execution{Tool: "used", Outcome: OutcomeFailed, StartedAt: t1.Add(time.Minute)}, 3, t1.Add(time.Minute)},
		{"finish time if no start", &Execution{Tool: "used", Outcome: OutcomeFailed, FinishedAt: t1.Add(time.Hour)}, 4, t1.Add(time.Hour)},
		{"now if neither", &Execution{Tool: "used", Outcome: OutcomeOK}, 5, now},
		{"other tool", &Execution{Tool: "unknown", Outcome: OutcomeOK, StartedAt: now.Add(time.Hour)}, 5, now},
		{"no tool", &Execution{Outcome: OutcomeOK, StartedAt: now.Add(time.Hour)}, 5, now},
	} {
		if err := s.RecordExecution(ctx, c.e); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := s.GetTool(ctx, "used")
		if err != nil {
			t.Fatal(err)
		}
		if got.UsageCount != c.count || !got.LastUsedAt.Equal(c.lastUsed) {
			t.Errorf("%s: usage %d, last used %v; want %d, %v", c.name, got.UsageCount, got.LastUsedAt, c.count, c.lastUsed)
		}
		if !got.UpdatedAt.Equal(tool.UpdatedAt) {
			t.Errorf("%s: a call changed UpdatedAt", c.name)
		}
	}
	if _, err := s.GetTool(ctx, "unknown"); !errors.Is(err, ErrNotFound) {
		t.Errorf("recording a call created a tool: %v", err)
	}
}

func TestRecordExecutionContext(t *testing.T) {
	s := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.RecordExecution(ctx, fullExecution("a", time.Now())); !errors.Is(err, context.Canceled) {
		t.Errorf("RecordExecution with a cancelled context = %v, want context.Canceled", err)
	}
	if n, _ := s.CountExecutions(context.Background(), ""); n != 0 {
		t.Errorf("a record with a cancelled context was stored")
	}
}

// TestRecordExecutionOutlivesContext checks that a record queued before its
// caller's context ended is still written.
func TestRecordExecutionOutlivesContext(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	// Hold the only write connection so the writer cannot commit.
	hold, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	e := fullExecution("a", time.Now())
	if err := s.RecordExecution(short, e); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RecordExecution with a blocked writer = %v, want DeadlineExceeded", err)
	}
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	// Queued behind the first: once it is committed, so is the first.
	if err := s.RecordExecution(ctx, fullExecution("b", time.Now())); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListExecutions(ctx, ExecutionFilter{Tool: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != e.ID {
		t.Errorf("the abandoned record was not written: %+v", got)
	}
}

func TestListAndCountExecutions(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string // oldest first
	for i := range 105 {
		tool := "even"
		if i%2 == 1 {
			tool = "odd"
		}
		e := fullExecution(tool, base.Add(time.Duration(i)*time.Millisecond))
		e.ID = fmt.Sprintf("e%03d", i)
		if err := s.RecordExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	// A call sharing a start time with another sorts as recorded later.
	tie := fullExecution("odd", base.Add(104*time.Millisecond))
	tie.ID = "tie"
	if err := s.RecordExecution(ctx, tie); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, "tie")
	newest := slices.Clone(ids)
	slices.Reverse(newest)
	var evenNewest, oddNewest []string
	for _, id := range newest {
		var n int
		if _, err := fmt.Sscanf(id, "e%d", &n); err == nil && n%2 == 0 {
			evenNewest = append(evenNewest, id)
		} else {
			oddNewest = append(oddNewest, id)
		}
	}

	for _, c := range []struct {
		name string
		f    ExecutionFilter
		want []string
	}{
		{"default limit 100", ExecutionFilter{}, newest[:100]},
		{"limit", ExecutionFilter{Limit: 3}, newest[:3]},
		{"limit offset", ExecutionFilter{Limit: 3, Offset: 3}, newest[3:6]},
		{"past the default", ExecutionFilter{Limit: 1000}, newest},
		{"offset past end", ExecutionFilter{Offset: 500}, []string{}},
		{"negative offset", ExecutionFilter{Limit: 2, Offset: -1}, newest[:2]},
		{"tool", ExecutionFilter{Tool: "even", Limit: 1000}, evenNewest},
		{"tool limit offset", ExecutionFilter{Tool: "odd", Limit: 2, Offset: 1}, oddNewest[1:3]},
		{"unknown tool", ExecutionFilter{Tool: "none"}, []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			execs, err := s.ListExecutions(ctx, c.f)
			if err != nil {
				t.Fatal(err)
			}
			if execs == nil {
				t.Error("ListExecutions returned a nil slice")
			}
			got := []string{}
			for _, e := range execs {
				got = append(got, e.ID)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}

	for tool, want := range map[string]int{"": 106, "even": 53, "odd": 53, "none": 0} {
		n, err := s.CountExecutions(ctx, tool)
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("CountExecutions(%q) = %d, want %d", tool, n, want)
		}
	}
}

// TestConcurrentLoad records from many goroutines while others create, list
// and update tools; every call must succeed (no "database is locked") and
// every record must be counted once.
func TestConcurrentLoad(t *testing.T) {
	const (
		recorders = 16
		perWorker = 200
		tools     = 4
	)
	ctx := context.Background()
	s := openTest(t)
	for i := range tools {
		if err := s.CreateTool(ctx, &Tool{Name: fmt.Sprintf("tool%d", i), Status: StatusActive}); err != nil {
			t.Fatal(err)
		}
	}

	var recording sync.WaitGroup
	var busy sync.WaitGroup
	stop := make(chan struct{})
	for w := range recorders {
		recording.Go(func() {
			for i := range perWorker {
				e := fullExecution(fmt.Sprintf("tool%d", (w+i)%tools), time.Now())
				if err := s.RecordExecution(ctx, e); err != nil {
					t.Errorf("RecordExecution: %v", err)
					return
				}
			}
		})
	}
	var created atomic.Int64
	busy.Go(func() { // writes beside the group-commit writer
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tool := fullTool(fmt.Sprintf("extra%04d", i))
			if err := s.CreateTool(ctx, tool); err != nil {
				t.Errorf("CreateTool: %v", err)
				return
			}
			created.Add(1)
			tool.Version = 2
			if err := s.UpdateTool(ctx, tool, true); err != nil {
				t.Errorf("UpdateTool: %v", err)
				return
			}
			if err := s.SetToolStatus(ctx, tool.Name, StatusDisabled); err != nil {
				t.Errorf("SetToolStatus: %v", err)
				return
			}
		}
	})
	for range 2 {
		busy.Go(func() { // reads beside the writers
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := s.ListTools(ctx, ToolFilter{Limit: 10}); err != nil {
					t.Errorf("ListTools: %v", err)
					return
				}
				if _, err := s.GetTool(ctx, "tool0"); err != nil {
					t.Errorf("GetTool: %v", err)
					return
				}
				if _, err := s.ListExecutions(ctx, ExecutionFilter{Tool: "tool1", Limit: 10}); err != nil {
					t.Errorf("ListExecutions: %v", err)
					return
				}
				if _, err := s.ToolStats(ctx); err != nil {
					t.Errorf("ToolStats: %v", err)
					return
				}
			}
		})
	}
	recording.Wait()
	close(stop)
	busy.Wait()
	if t.Failed() {
		return
	}

	total, err := s.CountExecutions(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if total != recorders*perWorker {
		t.Errorf("%d executions stored, want %d", total, recorders*perWorker)
	}
	var usage int64
	for i := range tools {
		name := fmt.Sprintf("tool%d", i)
		tool, err := s.GetTool(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		n, err := s.CountExecutions(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if tool.UsageCount != int64(n) {
			t.Errorf("%s: usage count %d, executions %d", name, tool.UsageCount, n)
		}
		usage += tool.UsageCount
	}
	if usage != recorders*perWorker {
		t.Errorf("usage counts sum to %d, want %d", usage, recorders*perWorker)
	}
	_, listed, err := s.ListTools(ctx, ToolFilter{Status: StatusDisabled})
	if err != nil {
		t.Fatal(err)
	}
	if int64(listed) != created.Load() {
		t.Errorf("%d extra tools stored, %d created", listed, created.Load())
	}
	// Group commit must have grouped: 16 concurrent callers, fewer commits
	// than records.
	if b, r := s.batches.Load(), s.batched.Load(); b >= r {
		t.Errorf("%d commits for %d records", b, r)
	}
	t.Logf("%d executions in %d commits, %d extra tools", total, s.batches.Load(), created.Load())
}

// TestCloseDrainsQueue closes the store while records are being made: every
// RecordExecution that returned nil must be on disk, the others must have
// failed with ErrClosed.
func TestCloseDrainsQueue(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "toolcage.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var ok atomic.Int64
	var wg sync.WaitGroup
	started := make(chan struct{}, 32)
	for range 32 {
		wg.Go(func() {
			started <- struct{}{}
			for {
				err := s.RecordExecution(ctx, fullExecution("a", time.Now()))
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("RecordExecution: %v", err)
					return
				}
				ok.Add(1)
			}
		})
	}
	for range 32 {
		<-started
	}
	time.Sleep(50 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, err := s.CountExecutions(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if int64(n) != ok.Load() {
		t.Errorf("%d records on disk, %d acknowledged", n, ok.Load())
	}
	if n == 0 {
		t.Error("nothing was recorded before Close")
	}
}

func BenchmarkRecordExecution(b *testing.B) {
	run := func(b *testing.B, parallelism int) {
		ctx := context.Background()
		s := openTest(b)
		for i := range 8 {
			if err := s.CreateTool(ctx, fullTool(fmt.Sprintf("tool%d", i))); err != nil {
				b.Fatal(err)
			}
		}
		record := func(i int) {
			e := fullExecution(fmt.Sprintf("tool%d", i%8), time.Now())
			if err := s.RecordExecution(ctx, e); err != nil {
				b.Error(err)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		if parallelism == 0 {
			for i := range b.N {
				record(i)
			}
			return
		}
		b.SetParallelism(parallelism)
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				record(i)
			}
		})
		b.StopTimer()
		if n := s.batches.Load(); n > 0 {
			b.ReportMetric(float64(s.batched.Load())/float64(n), "records/commit")
		}
	}
	b.Run("serial", func(b *testing.B) { run(b, 0) })
	b.Run("parallel", func(b *testing.B) { run(b, 1) })
	b.Run("parallel-x16", func(b *testing.B) { run(b, 16) })
}

func TestListExecutionsByWorker(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, w := range []string{"ops", "data", "ops", ""} {
		e := fullExecution([]string{"a", "a", "b", "a"}[i], t0.Add(time.Duration(i)*time.Second))
		e.Worker = w
		if err := s.RecordExecution(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		f    ExecutionFilter
		want int
	}{
		{ExecutionFilter{Worker: "ops"}, 2},
		{ExecutionFilter{Worker: "ops", Tool: "a"}, 1},
		{ExecutionFilter{Worker: "data"}, 1},
		{ExecutionFilter{Worker: "none"}, 0},
		{ExecutionFilter{}, 4},
	} {
		got, err := s.ListExecutions(ctx, tt.f)
		if err != nil || len(got) != tt.want {
			t.Errorf("%+v: %d records (%v), want %d", tt.f, len(got), err, tt.want)
		}
		for _, e := range got {
			if tt.f.Worker != "" && e.Worker != tt.f.Worker {
				t.Errorf("%+v: record of worker %q", tt.f, e.Worker)
			}
		}
	}
}
