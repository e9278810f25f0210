package catalog

import (
	"context"
	"slices"
	"sync"

	"github.com/toolcage/toolcage/errdefs"
	"github.com/toolcage/toolcage/principal"
)

// WithAgentCaps bounds what agents keep in the catalog: one worker's
// agents at most tools tools (those in the catalog its worker_tools rows
// name), and an
// agent's change takes a tool to at most version versions (every version
// is kept). Zero leaves a bound off; a person's changes are held to
// neither (worker_limits.tools and versions in the daemon's config).
func WithAgentCaps(tools, versions int) Option {
	return func(o *options) { o.maxTools, o.maxVersions = tools, versions }
}

// agentMade serialises agents' creates against the tool cap. A tool an
// agent made joins its worker's count only once the caller adopts it
// (store.AddWorkerTool, right after Create); until then it is counted
// from recent, so creates racing each other cannot pass the cap together.
type agentMade struct {
	mu     sync.Mutex
	recent map[string]map[string]bool // worker → tools made, maybe not adopted yet
}

// reserveTool refuses an agent's new tool past its worker's tool cap, or
// holds the cap for it: done(name) records the tool made (name "" when
// the create failed) and lets the next create count.
func (c *Catalog) reserveTool(ctx context.Context, caller principal.Caller) (done func(name string), err error) {
	if c.opts.maxTools <= 0 || creator(caller) != CreatedByLLM || caller.Worker == "" {
		return func(string) {}, nil
	}
	m := &c.made
	m.mu.Lock()
	have, err := c.madeBy(ctx, caller.Worker)
	if err == nil && have >= c.opts.maxTools {
		err = errdefs.LimitError(errdefs.LimitTools, "worker %q's agents have made %d tools, their most (worker_limits.tools); delete one first",
			caller.Worker, have)
	}
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	return func(name string) {
		if name != "" {
			if m.recent == nil {
				m.recent = map[string]map[string]bool{}
			}
			if m.recent[caller.Worker] == nil {
				m.recent[caller.Worker] = map[string]bool{}
			}
			m.recent[caller.Worker][name] = true
		}
		m.mu.Unlock()
	}, nil
}

// madeBy counts worker's tools in the catalog: those it adopted, and
// those made but not adopted yet. Under c.made.mu.
func (c *Catalog) madeBy(ctx context.Context, worker string) (int, error) {
	n, err := c.st.CountWorkerTools(ctx, worker)
	if err != nil {
		return 0, storeErr("", err)
	}
	recent := c.made.recent[worker]
	if len(recent) == 0 {
		return n, nil
	}
	adopted, err := c.st.WorkerTools(ctx, worker)
	if err != nil {
		return 0, storeErr("", err)
	}
	for name := range recent {
		if slices.Contains(adopted, name) {
			delete(recent, name) // counted by CountWorkerTools now
			continue
		}
		if _, err := c.st.GetTool(ctx, name); err != nil {
			delete(recent, name) // gone (or unreadable: the store says)
			continue
		}
		n++
	}
	if len(recent) == 0 {
		delete(c.made.recent, worker)
	}
	return n, nil
}

// checkVersionCap refuses an agent's change that would take cur past the
// version cap.
func (c *Catalog) checkVersionCap(cur *Tool, caller principal.Caller) error {
	if c.opts.maxVersions <= 0 || creator(caller) != CreatedByLLM || cur.Version < c.opts.maxVersions {
		return nil
	}
	return errdefs.LimitError(errdefs.LimitTools, "tool %q is at version %d, the most an agent's change may take it to (worker_limits.versions); "+
		"make a new tool, or ask a person to change this one", cur.Def.Name, cur.Version)
}
