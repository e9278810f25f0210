package visible

import (
	"context"
	"slices"
	"testing"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind"
	"github.com/toolcage/toolcage/daemon/worker"
	"github.com/toolcage/toolcage/principal"
)

// TestMetaToolsTable: the catalog reserves exactly the meta-tools' names;
// each resolves for a worker that offers it to a kind.Local (it runs in
// the daemon, never on an executor) with the kind's hints; and the worker
// switch offers the readers or all of them.
func TestMetaToolsTable(t *testing.T) {
	all := &worker.Worker{Name: "w", AgentTools: worker.AgentTools{MetaTools: true, Create: true}}
	v := New(Config{}).Through(principal.Caller{}, all)
	if names := MetaNames(all); !slices.Equal(names, catalog.MetaToolNames) {
		t.Errorf("meta-tools %v, catalog reserves %v", names, catalog.MetaToolNames)
	}
	for _, name := range catalog.MetaToolNames {
		res, _, err := v.Resolve(context.Background(), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, local := res.Compiled.(kind.Local); !local || !IsMeta(res.Tool.Def) || res.Tool.Status != catalog.StatusActive {
			t.Errorf("%s resolves to %T (%s, %s): want a meta kind.Local, active", name, res.Compiled, res.Tool.Def.Kind, res.Tool.Status)
		}
		if e := res.Tool.Def.Spec.(kind.Effecter).Effects(); e.ReadOnly != (name == "list_custom_tools" || name == "search_tools" || name == "get_tool") ||
			e.Destructive != (name == "delete_custom_tool") || e.OpenWorld {
			t.Errorf("%s effects %+v", name, e)
		}
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
