package worker

import (
	"strings"
	"testing"

	"github.com/toolcage/toolcage/daemon/catalog"
)

const (
	pre = catalog.ApprovalPreApproved
	ask = catalog.ApprovalAsk
	blk = catalog.ApprovalBlocked
)

// values are the approvals each input may hold; "" means "not written".
var values = []string{"", pre, ask, blk}

var letter = map[string]string{pre: "P", ask: "A", blk: "B"}

// TestEffectiveApprovalEveryCombination checks all 128 combinations. Each
// row is one tool approval and creator; its 16 letters are the results for
// the worker's default ("", P, A, B: the four groups) and its entry for
// the tool ("", P, A, B within a group). Written out by hand from the rules
// in EffectiveApproval's doc comment, not computed.
func TestEffectiveApprovalEveryCombination(t *testing.T) {
	rows := []struct {
		tool, by string
		want     string // 4 groups of 4, by default then per-tool entry
	}{
		// The tool writes nothing: the worker decides; if silent, the
		// creator's default: preApproved for a person, ask for an agent.
		{"", catalog.CreatedByUser, "PPAB PPAB APAB BPAB"},
		{"", catalog.CreatedByLLM, "APAB PPAB APAB BPAB"},
		// preApproved: the stricter wins where both speak.
		{pre, catalog.CreatedByUser, "PPAB PPAB APAB BPAB"},
		{pre, catalog.CreatedByLLM, "PPAB PPAB APAB BPAB"},
		// ask: only a person's tool can be pre-approved by the worker's entry.
		{ask, catalog.CreatedByUser, "APAB APAB APAB BPAB"},
		{ask, catalog.CreatedByLLM, "AAAB AAAB AAAB BAAB"},
		// blocked is never loosened.
		{blk, catalog.CreatedByUser, "BBBB BBBB BBBB BBBB"},
		{blk, catalog.CreatedByLLM, "BBBB BBBB BBBB BBBB"},
	}
	seen := 0
	for _, r := range rows {
		want := strings.ReplaceAll(r.want, " ", "")
		i := 0
		for _, def := range values {
			for _, per := range values {
				got := EffectiveApproval(r.tool, r.by, def, per)
				if letter[got] != want[i:i+1] {
					t.Errorf("EffectiveApproval(tool %q, by %s, default %q, entry %q) = %q, want %s",
						r.tool, r.by, def, per, got, want[i:i+1])
				}
				i++
				seen++
			}
		}
	}
	if seen != 4*2*4*4 {
		t.Fatalf("checked %d combinations, want 128", seen)
	}
}

// TestEffectiveApprovalProperties states the rules as properties over every
// combination, so a wrong letter in the table above would show twice.
func TestEffectiveApprovalProperties(t *testing.T) {
	rank := map[string]int{"": -1, pre: 0, ask: 1, blk: 2}
	for _, tool := range values {
		for _, by := range []string{catalog.CreatedByUser, catalog.CreatedByLLM} {
			for _, def := range values {
				for _, per := range values {
					got := EffectiveApproval(tool, by, def, per)
					name := "tool " + tool + " by " + by + " default " + def + " entry " + per
					if tool == blk && got != blk {
						t.Errorf("%s: blocked loosened to %s", name, got)
					}
					explicitPre := by == catalog.CreatedByUser && per == pre
					if explicitPre && tool != blk && got != pre {
						t.Errorf("%s: a person's tool pre-approved by name is %s", name, got)
					}
					if explicitPre {
						continue
					}
					if rank[got] < rank[tool] {
						t.Errorf("%s: %s is looser than the tool's own %s", name, got, tool)
					}
					word := per
					if word == "" {
						word = def
					}
					if rank[got] < rank[word] {
						t.Errorf("%s: %s is looser than the worker's %s", name, got, word)
					}
				}
			}
		}
	}
}

func TestEffectiveApprovalFailsClosed(t *testing.T) {
	tests := []struct {
		tool, by, def, per string
		want               string
	}{
		{"Ask", catalog.CreatedByUser, "", "", blk},
		{"bogus", catalog.CreatedByUser, "", pre, blk},
		{pre, catalog.CreatedByUser, "never", "", blk},
		{pre, catalog.CreatedByUser, "", "PREAPPROVED", blk},
		// An unknown creator is not a person: no explicit pre-approval.
		{ask, "", "", pre, ask},
		{ask, "root", "", pre, ask},
	}
	for _, tt := range tests {
		if got := EffectiveApproval(tt.tool, tt.by, tt.def, tt.per); got != tt.want {
			t.Errorf("EffectiveApproval(%q, %q, %q, %q) = %q, want %q", tt.tool, tt.by, tt.def, tt.per, got, tt.want)
		}
	}
}
