package worker

import "github.com/toolcage/toolcage/daemon/catalog"

// EffectiveTool is one of a worker's tools with the approval its calls
// get: what 'toolcage worker show' lists.
type EffectiveTool struct {
	Name string `json:"name"`
	// Source is "catalog", or the path of the tool file defining it.
	Source string `json:"source"`
	// Approval is EffectiveApproval of the tool's and the worker's words;
	// "" when the tool is missing.
	Approval string `json:"approval,omitempty"`
	// Missing is set for a catalog tool the catalog does not hold (yet).
	Missing bool `json:"missing,omitempty"`
}

// CatalogTool is what EffectiveTools needs to know of a catalog tool.
type CatalogTool struct {
	// WrittenApproval is the approval its definition writes, "" when it
	// writes none.
	WrittenApproval string
	// CreatedBy is catalog.CreatedByUser or catalog.CreatedByLLM.
	CreatedBy string
}

// EffectiveTools lists the worker's tools, catalog tools first in file
// order, then its tool files' tools, each with its effective approval.
// lookup finds a catalog tool by name. Tool files are written by the
// person who registers the worker, so their tools count as a person's.
func (w *Worker) EffectiveTools(lookup func(name string) (CatalogTool, bool)) []EffectiveTool {
	out := make([]EffectiveTool, 0, len(w.Tools)+len(w.LocalTools))
	for _, name := range w.Tools {
		t, ok := lookup(name)
		if !ok {
			out = append(out, EffectiveTool{Name: name, Source: "catalog", Missing: true})
			continue
		}
		out = append(out, EffectiveTool{Name: name, Source: "catalog", Approval: w.ToolApproval(name, t.WrittenApproval, t.CreatedBy)})
	}
	for _, lt := range w.LocalTools {
		out = append(out, EffectiveTool{Name: lt.Def.Name, Source: lt.File,
			Approval: w.ToolApproval(lt.Def.Name, lt.WrittenApproval, catalog.CreatedByUser)})
	}
	return out
}
