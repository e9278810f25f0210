package dispatch

import (
	"testing"
	"time"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/executors"
)

func TestCapLimits(t *testing.T) {
	filled := executors.Limits{Timeout: 10 * time.Second, MemoryBytes: 64 << 20, OutputBytes: 1 << 20, Requests: 10}
	tests := []struct {
		name   string
		worker catalog.Limits
		want   executors.Limits
	}{
		{"no caps", catalog.Limits{}, filled},
		{"lower caps win", catalog.Limits{Timeout: catalog.Duration(time.Second), Memory: 32 << 20, Output: 1024, Requests: 2},
			executors.Limits{Timeout: time.Second, MemoryBytes: 32 << 20, OutputBytes: 1024, Requests: 2}},
		{"a higher cap never raises a limit", catalog.Limits{Timeout: catalog.Duration(time.Hour), Memory: 1 << 30, Output: 1 << 30, Requests: 1000}, filled},
		{"mixed", catalog.Limits{Timeout: catalog.Duration(time.Hour), Memory: 16 << 20}, executors.Limits{Timeout: 10 * time.Second, MemoryBytes: 16 << 20, OutputBytes: 1 << 20, Requests: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := filled
			capLimits(&got, &worker.Worker{Limits: tt.worker})
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	got := filled
	capLimits(&got, nil)
	if got != filled {
		t.Fatalf("no worker changed the limits: %+v", got)
	}
}

func TestApprovalFor(t *testing.T) {
	local := &worker.LocalTool{Def: &catalog.Definition{Name: "local", Approval: catalog.ApprovalPreApproved}}
	w := &worker.Worker{Approval: worker.Approval{Default: catalog.ApprovalAsk, Tools: map[string]string{"mine": catalog.ApprovalPreApproved}},
		LocalTools: []*worker.LocalTool{local}}
	res := func(name, approval, createdBy string) *catalog.Resolved {
		return &catalog.Resolved{Tool: &catalog.Tool{Def: &catalog.Definition{Name: name, Approval: approval}, CreatedBy: createdBy}}
	}
	tests := []struct {
		name string
		w    *worker.Worker
		res  *catalog.Resolved
		want string
	}{
		{"no worker: the tool's own", nil, res("x", catalog.ApprovalAsk, catalog.CreatedByUser), catalog.ApprovalAsk},
		{"worker default tightens", w, res("x", catalog.ApprovalPreApproved, catalog.CreatedByUser), catalog.ApprovalAsk},
		{"by-name pre-approval of a person's ask tool", w, res("mine", catalog.ApprovalAsk, catalog.CreatedByUser), catalog.ApprovalPreApproved},
		{"by-name pre-approval does not loosen an agent's ask tool", w, res("mine", catalog.ApprovalAsk, catalog.CreatedByLLM), catalog.ApprovalAsk},
		{"blocked stays blocked", w, res("mine", catalog.ApprovalBlocked, catalog.CreatedByUser), catalog.ApprovalBlocked},
		// The tool file writes nothing: the worker's default decides.
		{"tool-file tool", w, &catalog.Resolved{Tool: &catalog.Tool{Def: local.Def, CreatedBy: catalog.CreatedByUser}}, catalog.ApprovalAsk},
	}
	// A definition that writes no approval: the worker's word decides, even
	// for an agent's tool (rule 3), whatever default the catalog filled.
	unwritten, err := catalog.Parse([]byte("name: mine\ndescription: d\nkind: js\njs: {code: return 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	unwritten.Approval = catalog.ApprovalAsk // the catalog's default for an agent's tool
	tests = append(tests, struct {
		name string
		w    *worker.Worker
		res  *catalog.Resolved
		want string
	}{"unwritten approval: the worker decides", w, &catalog.Resolved{Tool: &catalog.Tool{Def: unwritten, CreatedBy: catalog.CreatedByLLM}}, catalog.ApprovalPreApproved})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := approvalFor(tt.w, tt.res); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}
