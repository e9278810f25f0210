package store

import (
	"context"
	"testing"
)

// CountWorkerTools counts a worker's tools still in the catalog: a
// deleted one is not counted, nor another worker's.
func TestCountWorkerTools(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	registerTest(t, s, "ops")
	registerTest(t, s, "data")
	for _, name := range []string{"a", "b", "c"} {
		if err := s.CreateTool(ctx, &Tool{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, wt := range [][2]string{{"ops", "a"}, {"ops", "b"}, {"data", "c"}} {
		if err := s.AddWorkerTool(ctx, wt[0], wt[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteTool(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	for w, want := range map[string]int{"ops": 1, "data": 1, "none": 0} {
		if n, err := s.CountWorkerTools(ctx, w); err != nil || n != want {
			t.Errorf("%s: %d %v, want %d", w, n, err, want)
		}
	}
}
