package store

import (
	"context"
	"path/filepath"
	"testing"
)

// PendingApprovals counts one worker's pending approvals, not its decided
// ones nor another worker's.
func TestPendingApprovals(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "toolcage.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, w := range []string{"wa", "wa", "wa", "wb", ""} {
		a := &Approval{ID: "abcd234" + string(rune('a'+i)), Tool: "t", Version: 1, Worker: w, ArgsHash: "h"}
		if err := s.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DecideApproval(ctx, "abcd234a", ApprovalDenied, "person"); err != nil {
		t.Fatal(err)
	}
	for w, want := range map[string]int{"wa": 2, "wb": 1, "": 1, "wc": 0} {
		if n, err := s.PendingApprovals(ctx, w); err != nil || n != want {
			t.Errorf("%q: %d %v, want %d", w, n, err, want)
		}
	}
}
