package visible

import (
	"encoding/json"

	"github.com/toolcage/toolcage/daemon/catalog"
	"github.com/toolcage/toolcage/daemon/kind/meta"
	"github.com/toolcage/toolcage/daemon/worker"
)

// The meta-tools (kind meta, daemon/kind/meta) are a worker's tools when
// its file says agent_tools: {meta_tools: true}; the changing ones only
// with agent_tools.create on. What they do is daemon/dispatch's
// (agentCatalog); which a worker offers is decided here.

// metaToolsFor lists the meta-tools w offers, nil for none.
func metaToolsFor(w *worker.Worker) []meta.Tool {
	if w == nil || !w.AgentTools.MetaTools {
		return nil
	}
	var out []meta.Tool
	for _, m := range meta.Tools() {
		if !m.Changes || w.AgentTools.Create {
			out = append(out, m)
		}
	}
	return out
}

// metaFor is the meta-tool called name that w offers, or nil.
func metaFor(w *worker.Worker, name string) *meta.Tool {
	for _, m := range metaToolsFor(w) {
		if m.Name == name {
			return &m
		}
	}
	return nil
}

// metaTool is the meta-tool m as its worker's tool: the daemon's own,
// written as a person's.
func metaTool(m *meta.Tool) *catalog.Tool {
	return catalog.PersonTool(&catalog.Definition{Name: m.Name, Description: m.Description, Kind: meta.Name, Category: meta.Category,
		Parameters: json.RawMessage(m.Parameters), Approval: catalog.ApprovalPreApproved, Isolation: catalog.IsolationProcess,
		Spec: &meta.Spec{Op: m.Name}})
}

// MetaNames lists the meta-tools w offers, in order.
func MetaNames(w *worker.Worker) []string {
	var out []string
	for _, m := range metaToolsFor(w) {
		out = append(out, m.Name)
	}
	return out
}

// IsMeta reports whether def is a meta-tool's.
func IsMeta(def *catalog.Definition) bool { return def.Kind == meta.Name }
