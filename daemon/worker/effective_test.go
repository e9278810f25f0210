package worker

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/toolcage/toolcage/daemon/catalog"
)

func TestEffectiveTools(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"w.yaml": `name: ops
tools: [dns_lookup, weather, agent_made, gone]
tool_files: [tools/*.yaml]
approval:
  default: ask
  tools: {dns_lookup: preApproved, agent_made: preApproved, lookup: preApproved}
`,
		"tools/lookup.yaml": lookupTool,
		"tools/asker.yaml":  askTool,
	})
	path := filepath.Join(dir, "w.yaml")
	data, _ := os.ReadFile(path)
	w, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	catalogTools := map[string]CatalogTool{
		"dns_lookup": {WrittenApproval: "", CreatedBy: catalog.CreatedByUser},
		"weather":    {WrittenApproval: "preApproved", CreatedBy: catalog.CreatedByUser},
		"agent_made": {WrittenApproval: "ask", CreatedBy: catalog.CreatedByLLM},
	}
	got := w.EffectiveTools(func(name string) (CatalogTool, bool) {
		c, ok := catalogTools[name]
		return c, ok
	})
	want := []EffectiveTool{
		{Name: "dns_lookup", Source: "catalog", Approval: "preApproved"},
		{Name: "weather", Source: "catalog", Approval: "ask"},    // the worker's default is stricter
		{Name: "agent_made", Source: "catalog", Approval: "ask"}, // an agent's ask is not loosened
		{Name: "gone", Source: "catalog", Missing: true},
		{Name: "asker", Source: filepath.Join(dir, "tools", "asker.yaml"), Approval: "ask"},
		{Name: "lookup", Source: filepath.Join(dir, "tools", "lookup.yaml"), Approval: "preApproved"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EffectiveTools =\n%+v\nwant\n%+v", got, want)
	}
}
