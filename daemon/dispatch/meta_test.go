package dispatch

import (
	"context"
	"slices"
	"testing"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/worker"
)

// TestMetaToolsTable: the catalog reserves exactly the meta-tools' names,
// every schema compiles, every meta-tool runs (no "no implementation"),
// and the worker switch offers the readers or all of them.
func TestMetaToolsTable(t *testing.T) {
	var names []string
	for _, m := range metaTools {
		names = append(names, m.name)
		if metaSchemas()[m.name] == nil {
			t.Errorf("%s: no schema", m.name)
		}
		if _, err := catalog.Compile(&catalog.Tool{Def: m.definition()}); err == nil {
			t.Errorf("%s compiles for an executor", m.name)
		}
	}
	if !slices.Equal(names, catalog.MetaToolNames) {
		t.Errorf("meta-tools %v, catalog reserves %v", names, catalog.MetaToolNames)
	}
	d := &Dispatcher{}
	for _, m := range metaTools {
		func() {
			defer func() { _ = recover() }() // a nil store; only the dispatch is checked
			if _, err := d.runMeta(context.Background(), &call{worker: &worker.Worker{}}, m, map[string]any{}); err != nil && err.Error() == "meta-tool \""+m.name+"\" has no implementation" {
				t.Errorf("%s has no implementation", m.name)
			}
		}()
	}
	for _, tt := range []struct {
		at   worker.AgentTools
		want int
	}{{worker.AgentTools{}, 0}, {worker.AgentTools{Create: true}, 0}, {worker.AgentTools{MetaTools: true}, 3}, {worker.AgentTools{MetaTools: true, Create: true}, 7}} {
		if got := len(metaToolsFor(&worker.Worker{AgentTools: tt.at})); got != tt.want {
			t.Errorf("%+v offers %d meta-tools, want %d", tt.at, got, tt.want)
		}
	}
	if metaToolsFor(nil) != nil {
		t.Error("no worker, meta-tools")
	}
}
