package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

func TestRecentApprovals(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "toolcage.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { at = at.Add(time.Second); return at }
	// Five approvals: the first four decided in the order 3, 1, 0, 2; the
	// last still pending.
	for i := range 5 {
		if err := s.CreateApproval(ctx, &Approval{ID: fmt.Sprintf("abcd%04d", i), Tool: "t", Version: 1, ArgsHash: "h"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range []int{3, 1, 0, 2} {
		status := ApprovalAllowed
		if i == 1 {
			status = ApprovalDenied
		}
		if _, err := s.DecideApproval(ctx, fmt.Sprintf("abcd%04d", i), status, "uid:0"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.RecentApprovals(ctx, 3)
	if err != nil || len(got) != 3 || got[0].ID != "abcd0002" || got[1].ID != "abcd0000" || got[2].ID != "abcd0001" || got[2].Status != ApprovalDenied {
		t.Fatalf("recent 3: %v", recentIDs(got, err))
	}
	if got, err := s.RecentApprovals(ctx, maxRecentApprovals); err != nil || len(got) != 4 {
		t.Errorf("recent %d: %v", maxRecentApprovals, recentIDs(got, err))
	}
	for _, bad := range []int{0, -1, maxRecentApprovals + 1} {
		if _, err := s.RecentApprovals(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("limit %d: %v", bad, err)
		}
	}
}

func recentIDs(list []*Approval, err error) string {
	s := fmt.Sprint(err)
	for _, a := range list {
		s += " " + a.ID + ":" + a.Status
	}
	return s
}
