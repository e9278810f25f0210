package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestCreateGetToolRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	clock := time.Date(2025, 1, 2, 3, 4, 5, 987654321, time.UTC)
	s.now = func() time.Time { return clock }

	in := fullTool("dns_lookup")
	in.Parameters = json.RawMessage("{\n  \"type\": \"object\"\n}") // stored compacted
	want := *in
	want.Parameters = json.RawMessage(`{"type":"object"}`)
	want.CreatedAt, want.UpdatedAt = clock, clock

	if err := s.CreateTool(ctx, in); err != nil {
		t.Fatalf("CreateTool: %v", err)
	}
	if !equalTools(in, &want) {
		t.Errorf("CreateTool left t as\n %+v\nwant\n %+v", in, &want)
	}
	got, err := s.GetTool(ctx, "dns_lookup")
	if err != nil {
		t.Fatalf("GetTool: %v", err)
	}
	if !equalTools(got, &want) {
		t.Errorf("GetTool:\n got %+v\nwant %+v", got, &want)
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("times come back in %v, want UTC", got.CreatedAt.Location())
	}
	// The snapshot of version 1 holds the same definition.
	v, err := s.ToolVersion(ctx, "dns_lookup", 1)
	if err != nil {
		t.Fatalf("ToolVersion: %v", err)
	}
	if !v.CreatedAt.Equal(clock) {
		t.Errorf("version created at %v, want %v", v.CreatedAt, clock)
	}
	if def := definitionOf(&want); !reflect.DeepEqual(v.Tool, def) {
		t.Errorf("snapshot:\n got %+v\nwant %+v", v.Tool, def)
	}
}

// definitionOf returns t with only the fields a version snapshot keeps.
func definitionOf(t *Tool) *Tool {
	return &Tool{
		Name: t.Name, Description: t.Description, Kind: t.Kind, Category: t.Category,
		Parameters: t.Parameters, Permissions: t.Permissions, Secrets: t.Secrets,
		Approval: t.Approval, Isolation: t.Isolation, Limits: t.Limits, Spec: t.Spec,
		Version: t.Version,
	}
}

func TestCreateToolMinimal(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	in := &Tool{Name: "bare", Permissions: []string{}, Secrets: []string{}}
	if err := s.CreateTool(ctx, in); err != nil {
		t.Fatalf("CreateTool: %v", err)
	}
	if in.Version != 1 {
		t.Errorf("Version = %d, want the default 1", in.Version)
	}
	got, err := s.GetTool(ctx, "bare")
	if err != nil {
		t.Fatal(err)
	}
	if got.Parameters != nil || got.Limits != nil || got.Spec != nil ||
		got.Permissions != nil || got.Secrets != nil || !got.LastUsedAt.IsZero() {
		t.Errorf("empty fields did not come back empty: %+v", got)
	}
	if !equalTools(got, in) {
		t.Errorf("GetTool:\n got %+v\nwant %+v", got, in)
	}
	if _, err := s.ToolVersion(ctx, "bare", 1); err != nil {
		t.Errorf("version 1 not kept: %v", err)
	}
}

func TestCreateToolConflict(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	if err := s.CreateTool(ctx, fullTool("dup")); err != nil {
		t.Fatal(err)
	}
	second := fullTool("dup")
	second.Description = "another"
	err := s.CreateTool(ctx, second)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("second CreateTool = %v, want ErrConflict", err)
	}
	if !second.CreatedAt.IsZero() {
		t.Error("a failed CreateTool changed its argument")
	}
	got, err := s.GetTool(ctx, "dup")
	if err != nil {
		t.Fatal(err)
	}
	if got.Description != fullTool("dup").Description {
		t.Errorf("the first tool was overwritten: %q", got.Description)
	}
}

func TestToolInvalid(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	if err := s.CreateTool(ctx, fullTool("exists")); err != nil {
		t.Fatal(err)
	}
	with := func(f func(*Tool)) *Tool {
		tool := fullTool("exists")
		f(tool)
		return tool
	}
	for _, c := range []struct {
		name string
		tool *Tool
	}{
		{"nil", nil},
		{"no name", with(func(t *Tool) { t.Name = "" })},
		{"bad parameters", with(func(t *Tool) { t.Parameters = json.RawMessage(`{"type":`) })},
		{"bad limits", with(func(t *Tool) { t.Limits = json.RawMessage(`not json`) })},
		{"bad spec", with(func(t *Tool) { t.Spec = json.RawMessage(`{} {}`) })},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := s.UpdateTool(ctx, c.tool, true); !errors.Is(err, ErrInvalid) {
				t.Errorf("UpdateTool = %v, want ErrInvalid", err)
			}
			if c.tool != nil && c.tool.Name != "" {
				c.tool.Name += "_new" // not a conflict: a new tool
			}
			if err := s.CreateTool(ctx, c.tool); !errors.Is(err, ErrInvalid) {
				t.Errorf("CreateTool = %v, want ErrInvalid", err)
			}
		})
	}
	tool := fullTool("ancient")
	tool.LastUsedAt = time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.CreateTool(ctx, tool); !errors.Is(err, ErrInvalid) {
		t.Errorf("CreateTool with a time out of range = %v, want ErrInvalid", err)
	}
}

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	if err := s.CreateTool(ctx, fullTool("present")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"GetTool", func() error { _, err := s.GetTool(ctx, "missing"); return err }},
		{"UpdateTool", func() error { return s.UpdateTool(ctx, fullTool("missing"), false) }},
		{"UpdateTool new version", func() error { return s.UpdateTool(ctx, fullTool("missing"), true) }},
		{"SetToolStatus", func() error { return s.SetToolStatus(ctx, "missing", StatusDisabled) }},
		{"DeleteTool", func() error { return s.DeleteTool(ctx, "missing") }},
		{"ToolVersions", func() error { _, err := s.ToolVersions(ctx, "missing"); return err }},
		{"ToolVersion of missing tool", func() error { _, err := s.ToolVersion(ctx, "missing", 1); return err }},
		{"ToolVersion missing version", func() error { _, err := s.ToolVersion(ctx, "present", 2); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, ErrNotFound) {
				t.Errorf("got %v, want ErrNotFound", err)
			}
		})
	}
	if _, err := s.GetTool(ctx, "present"); err != nil {
		t.Errorf("present tool: %v", err)
	}
}

func TestListTools(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	for _, d := range []struct{ name, status, category, createdBy, kind string }{
		{"echo", StatusActive, "Util", CreatorUser, "shell"},
		{"add", StatusActive, "Math", CreatorLLM, "js"},
		{"weather", StatusDisabled, "Network", CreatorUser, "http"},
		{"dns", StatusActive, "Network", CreatorUser, "shell"},
		{"sum", StatusPendingApproval, "Math", CreatorLLM, "js"},
		{"fetch", StatusRejected, "Network", CreatorLLM, "http"},
	} {
		tool := fullTool(d.name)
		tool.Status, tool.Category, tool.CreatedBy, tool.Kind = d.status, d.category, d.createdBy, d.kind
		if err := s.CreateTool(ctx, tool); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		f     ToolFilter
		want  []string
		total int
	}{
		{"all", ToolFilter{}, []string{"add", "dns", "echo", "fetch", "sum", "weather"}, 6},
		{"status", ToolFilter{Status: StatusActive}, []string{"add", "dns", "echo"}, 3},
		{"category", ToolFilter{Category: "Network"}, []string{"dns", "fetch", "weather"}, 3},
		{"created by", ToolFilter{CreatedBy: CreatorLLM}, []string{"add", "fetch", "sum"}, 3},
		{"kind", ToolFilter{Kind: "js"}, []string{"add", "sum"}, 2},
		{"combined", ToolFilter{Category: "Network", CreatedBy: CreatorUser, Kind: "shell"}, []string{"dns"}, 1},
		{"no match", ToolFilter{Status: StatusActive, Kind: "http"}, []string{}, 0},
		{"category is exact", ToolFilter{Category: "network"}, []string{}, 0},
		{"limit", ToolFilter{Limit: 2}, []string{"add", "dns"}, 6},
		{"limit offset", ToolFilter{Limit: 2, Offset: 2}, []string{"echo", "fetch"}, 6},
		{"offset only", ToolFilter{Offset: 4}, []string{"sum", "weather"}, 6},
		{"offset past end", ToolFilter{Offset: 10}, []string{}, 6},
		{"filter limit offset", ToolFilter{Category: "Network", Limit: 1, Offset: 1}, []string{"fetch"}, 3},
		{"negative limit and offset", ToolFilter{Kind: "http", Limit: -1, Offset: -5}, []string{"fetch", "weather"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			tools, total, err := s.ListTools(ctx, c.f)
			if err != nil {
				t.Fatal(err)
			}
			if tools == nil {
				t.Error("ListTools returned a nil slice")
			}
			names := []string{}
			for _, tool := range tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, c.want) || total != c.total {
				t.Errorf("got %q total %d, want %q total %d", names, total, c.want, c.total)
			}
		})
	}
	// Listed tools carry every field.
	tools, _, err := s.ListTools(ctx, ToolFilter{Status: StatusDisabled})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetTool(ctx, "weather")
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || !equalTools(tools[0], got) {
		t.Errorf("ListTools row differs from GetTool:\n%+v\n%+v", tools, got)
	}
}

func TestUpdateTool(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return created }
	orig := fullTool("calc")
	if err := s.CreateTool(ctx, orig); err != nil {
		t.Fatal(err)
	}

	updated := created.Add(time.Hour + 1)
	s.now = func() time.Time { return updated }
	next := &Tool{
		Name:        "calc",
		Description: "new description",
		Kind:        "js",
		Category:    "Math",
		Parameters:  json.RawMessage(`{"type":"object","required":["a"]}`),
		Permissions: []string{"filesystem"},
		Secrets:     nil,
		Approval:    "ask",
		Isolation:   "docker",
		Limits:      json.RawMessage(`{"timeout":"1s"}`),
		Spec:        json.RawMessage(`{"code":"return args.a < 2 && true"}`),
		Status:      StatusPendingApproval,
		Version:     2,
		// The bookkeeping fields are ignored by UpdateTool.
		CreatedBy:  CreatorLLM,
		UsageCount: 999,
		LastUsedAt: updated,
		CreatedAt:  updated,
	}
	want := *next
	if err := s.UpdateTool(ctx, next, true); err != nil {
		t.Fatalf("UpdateTool: %v", err)
	}
	want.CreatedBy, want.UsageCount, want.LastUsedAt = orig.CreatedBy, orig.UsageCount, orig.LastUsedAt
	want.CreatedAt, want.UpdatedAt = created, updated
	if !equalTools(next, &want) {
		t.Errorf("UpdateTool left t as\n %+v\nwant\n %+v", next, &want)
	}
	got, err := s.GetTool(ctx, "calc")
	if err != nil {
		t.Fatal(err)
	}
	if !equalTools(got, &want) {
		t.Errorf("GetTool after update:\n got %+v\nwant %+v", got, &want)
	}

	// Without newVersion no version is kept, but the fields still change.
	third := want
	third.Description = "edited in place"
	third.Version = 3
	if err := s.UpdateTool(ctx, &third, false); err != nil {
		t.Fatal(err)
	}
	versions, err := s.ToolVersions(ctx, "calc")
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != 2 {
		t.Errorf("%d versions kept, want 2", len(versions))
	}
	if got, _ := s.GetTool(ctx, "calc"); got.Description != "edited in place" || got.Version != 3 {
		t.Errorf("in-place update lost: %+v", got)
	}

	// Keeping an existing version again is a conflict, and rolls back.
	again := want
	again.Description = "must not stick"
	err = s.UpdateTool(ctx, &again, true) // version 2 again
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("UpdateTool to a kept version = %v, want ErrConflict", err)
	}
	if got, _ := s.GetTool(ctx, "calc"); got.Description != "edited in place" {
		t.Errorf("a failed UpdateTool changed the tool: %q", got.Description)
	}
}

func TestToolVersionsSnapshots(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	clock := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { clock = clock.Add(time.Second); return clock }

	tool := fullTool("evolving")
	if err := s.CreateTool(ctx, tool); err != nil {
		t.Fatal(err)
	}
	defs := []*Tool{definitionOf(tool)}
	for v := 2; v <= 4; v++ {
		tool.Version = v
		tool.Description = fmt.Sprintf("version %d", v)
		tool.Spec = json.RawMessage(fmt.Sprintf(`{"code":"return %d"}`, v))
		tool.Permissions = append(tool.Permissions, fmt.Sprintf("perm%d", v))
		tool.Status = StatusDisabled // not part of a snapshot
		if err := s.UpdateTool(ctx, tool, true); err != nil {
			t.Fatal(err)
		}
		defs = append(defs, definitionOf(tool))
	}
	versions, err := s.ToolVersions(ctx, "evolving")
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != len(defs) {
		t.Fatalf("%d versions, want %d", len(versions), len(defs))
	}
	var last time.Time
	for i, v := range versions {
		if v.Version != i+1 || v.Tool.Version != i+1 {
			t.Errorf("versions[%d] is version %d/%d, want %d", i, v.Version, v.Tool.Version, i+1)
		}
		if !reflect.DeepEqual(v.Tool, defs[i]) {
			t.Errorf("version %d snapshot:\n got %+v\nwant %+v", i+1, v.Tool, defs[i])
		}
		if !v.CreatedAt.After(last) {
			t.Errorf("version %d created at %v, not after %v", i+1, v.CreatedAt, last)
		}
		last = v.CreatedAt
		one, err := s.ToolVersion(ctx, "evolving", v.Version)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one, v) {
			t.Errorf("ToolVersion(%d) = %+v, want %+v", v.Version, one, v)
		}
	}
	// The snapshot keeps JavaScript as written (no HTML escaping of < > &).
	if got := string(versions[0].Tool.Spec); got != string(fullTool("x").Spec) {
		t.Errorf("snapshot spec %s, want %s", got, fullTool("x").Spec)
	}
}

func TestSetToolStatus(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	tool := fullTool("toggle")
	if err := s.CreateTool(ctx, tool); err != nil {
		t.Fatal(err)
	}
	later := tool.UpdatedAt.Add(time.Minute)
	s.now = func() time.Time { return later }
	for _, status := range []string{StatusDisabled, StatusActive, StatusRejected} {
		if err := s.SetToolStatus(ctx, "toggle", status); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetTool(ctx, "toggle")
		if err != nil {
			t.Fatal(err)
		}
		want := *tool
		want.Status, want.UpdatedAt = status, later
		if !equalTools(got, &want) {
			t.Errorf("after SetToolStatus(%s):\n got %+v\nwant %+v", status, got, &want)
		}
	}
}

func TestDeleteToolCascadesVersionsKeepsExecutions(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	tool := fullTool("doomed")
	if err := s.CreateTool(ctx, tool); err != nil {
		t.Fatal(err)
	}
	tool.Version = 2
	if err := s.UpdateTool(ctx, tool, true); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTool(ctx, fullTool("bystander")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := s.RecordExecution(ctx, fullExecution("doomed", time.Now())); err != nil {
			t.Fatal(err)
		}
	}

	if err := s.DeleteTool(ctx, "doomed"); err != nil {
		t.Fatalf("DeleteTool: %v", err)
	}
	if _, err := s.GetTool(ctx, "doomed"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetTool after delete = %v, want ErrNotFound", err)
	}
	var rows int
	if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM tool_versions WHERE tool = 'doomed'`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("%d versions left after delete", rows)
	}
	if n, err := s.CountExecutions(ctx, "doomed"); err != nil || n != 3 {
		t.Errorf("CountExecutions after delete = %d, %v; want 3", n, err)
	}
	if _, err := s.ToolVersions(ctx, "bystander"); err != nil {
		t.Errorf("another tool's versions: %v", err)
	}
	if err := s.DeleteTool(ctx, "doomed"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second DeleteTool = %v, want ErrNotFound", err)
	}

	// The name can be used again, with a fresh history.
	if err := s.CreateTool(ctx, fullTool("doomed")); err != nil {
		t.Fatalf("re-create: %v", err)
	}
	versions, err := s.ToolVersions(ctx, "doomed")
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != 1 {
		t.Errorf("re-created tool has %d versions, want 1", len(versions))
	}
}

func TestToolStats(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	st, err := s.ToolStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st != (ToolStats{}) {
		t.Errorf("stats of an empty store = %+v", st)
	}
	for i, d := range []struct{ status, createdBy string }{
		{StatusActive, CreatorUser},
		{StatusActive, CreatorLLM},
		{StatusActive, CreatorUser},
		{StatusDisabled, CreatorUser},
		{StatusPendingApproval, CreatorLLM},
		{StatusPendingApproval, CreatorLLM},
		{StatusRejected, CreatorLLM},
	} {
		tool := fullTool(fmt.Sprintf("t%d", i))
		tool.Status, tool.CreatedBy, tool.UsageCount = d.status, d.createdBy, int64(i*10)
		if err := s.CreateTool(ctx, tool); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordExecution(ctx, fullExecution("t0", time.Now())); err != nil {
		t.Fatal(err)
	}
	st, err = s.ToolStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := ToolStats{
		Total: 7, Active: 3, Disabled: 1, PendingApproval: 2, Rejected: 1,
		CreatedByLLM: 4, CreatedByUser: 3, TotalUsage: 0 + 10 + 20 + 30 + 40 + 50 + 60 + 1,
	}
	if st != want {
		t.Errorf("ToolStats = %+v, want %+v", st, want)
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"total":7,"active":3,"disabled":1,"pending_approval":2,"rejected":1,"created_by_llm":4,"created_by_user":3,"total_usage":211}`
	if string(b) != wantJSON {
		t.Errorf("JSON %s, want %s", b, wantJSON)
	}
}

// DisableTool records who disabled a tool; ToolDisabledBy reads it back.
func TestDisableToolRecordsWho(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	if err := s.CreateTool(ctx, &Tool{Name: "t1", Status: StatusActive}); err != nil {
		t.Fatal(err)
	}
	if by, err := s.ToolDisabledBy(ctx, "t1"); err != nil || by != "" {
		t.Errorf("never disabled: %q %v", by, err)
	}
	for _, who := range []string{CreatorLLM, CreatorUser} {
		if err := s.DisableTool(ctx, "t1", who); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetTool(ctx, "t1")
		if err != nil || got.Status != StatusDisabled {
			t.Fatalf("after disable by %s: %+v %v", who, got, err)
		}
		if by, err := s.ToolDisabledBy(ctx, "t1"); err != nil || by != who {
			t.Errorf("disabled by %s: read %q %v", who, by, err)
		}
	}
	if err := s.DisableTool(ctx, "none", CreatorUser); !errors.Is(err, ErrNotFound) {
		t.Errorf("disable of none: %v", err)
	}
	if _, err := s.ToolDisabledBy(ctx, "none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("disabled by of none: %v", err)
	}
}
